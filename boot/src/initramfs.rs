//! The initramfs the kernel's `execve` reads: a cpio "newc" archive, Linux's initramfs
//! format (Documentation/driver-api/early-userspace/buffer-format.rst), holding the user
//! programs under `bin/` plus any host files given with `--add`. It reaches the kernel as
//! the fw_cfg file `opt/cfslab/initramfs` (read by kernel/src/user/initramfs.rs), so the
//! disk image — and the boot of runs without programs — does not change.

use std::path::{Path, PathBuf};

/// Appends one entry: the 110-byte header (magic and thirteen 8-digit hex fields), the
/// name with its NUL padded to 4 bytes, the data padded to 4 bytes. Returns its inode.
fn entry(out: &mut Vec<u8>, name: &str, mode: u32, data: &[u8]) -> u32 {
    let ino = out.len() as u32; // unique per entry, as cpio wants
    raw_entry(out, name, mode, data, (0, 0), (ino, 1))
}

/// [`entry`] for a device node: `rdev` is its (major, minor).
fn device_entry(out: &mut Vec<u8>, name: &str, mode: u32, data: &[u8], rdev: (u32, u32)) {
    let ino = out.len() as u32;
    raw_entry(out, name, mode, data, rdev, (ino, 1));
}

/// An entry with its inode and link count given: one of several names of one file (a hard
/// link) has the same inode, and all but the one holding the data are empty.
fn raw_entry(
    out: &mut Vec<u8>,
    name: &str,
    mode: u32,
    data: &[u8],
    rdev: (u32, u32),
    (ino, nlink): (u32, u32),
) -> u32 {
    let fields = [
        ino,
        mode,
        0, // uid
        0, // gid
        nlink,
        0, // mtime
        data.len() as u32,
        0, // devmajor
        0, // devminor
        rdev.0,
        rdev.1,
        name.len() as u32 + 1,
        0, // check
    ];
    out.extend_from_slice(b"070701");
    for f in fields {
        out.extend_from_slice(format!("{f:08x}").as_bytes());
    }
    out.extend_from_slice(name.as_bytes());
    out.push(0);
    out.resize(out.len().next_multiple_of(4), 0);
    out.extend_from_slice(data);
    out.resize(out.len().next_multiple_of(4), 0);
    ino
}

const DIRECTORY: u32 = 0o040_755;
const EXECUTABLE: u32 = 0o100_755;

/// Files to pack: (name under `bin/`, contents).
type Files = Vec<(String, Vec<u8>)>;

/// A character device, owner read-write (`/dev/console`).
const CHARACTER_DEVICE: u32 = 0o020_600;

/// An archive with `bin/` and each (name, contents) under it.
pub fn archive(files: &[(String, Vec<u8>)]) -> Vec<u8> {
    archive_with(&mut Vec::new(), files)
}

/// The archive Linux boots from (linux.rs): [`archive`]'s `bin/`, plus `/init` (`init`'s
/// contents) and `/dev/console` (character device 5:1), which Linux opens as init's
/// standard streams; without it, init's output goes nowhere.
pub fn linux_archive(init: &[u8], files: &[(String, Vec<u8>)]) -> Vec<u8> {
    let mut out = Vec::new();
    entry(&mut out, "dev", DIRECTORY, &[]);
    device_entry(&mut out, "dev/console", CHARACTER_DEVICE, &[], (5, 1));
    entry(&mut out, "init", EXECUTABLE, init);
    archive_with(&mut out, files)
}

fn archive_with(out: &mut Vec<u8>, files: &[(String, Vec<u8>)]) -> Vec<u8> {
    linked_archive(out, files, &[])
}

/// [`archive_with`], and `links`: (name, name of a file) pairs, each a hard link under
/// `bin/` to that file (busybox's applets).
fn linked_archive(out: &mut Vec<u8>, files: &[(String, Vec<u8>)], links: &Links) -> Vec<u8> {
    let mut out = core::mem::take(out);
    entry(&mut out, "bin", DIRECTORY, &[]);
    let mut inodes = std::collections::HashMap::new();
    for (name, data) in files {
        let names = 1 + links.iter().filter(|(_, to)| to == name).count() as u32;
        let ino = out.len() as u32;
        let path = format!("bin/{name}");
        raw_entry(&mut out, &path, EXECUTABLE, data, (0, 0), (ino, names));
        inodes.insert(name.as_str(), (ino, names));
    }
    for (name, to) in links {
        if let Some(&inode) = inodes.get(to.as_str()) {
            raw_entry(
                &mut out,
                &format!("bin/{name}"),
                EXECUTABLE,
                &[],
                (0, 0),
                inode,
            );
        }
    }
    entry(&mut out, "TRAILER!!!", 0, &[]);
    out
}

/// Hard links to pack: (name under `bin/`, name of the file under `bin/` it is).
type Links = [(String, String)];

/// As [`build`], with Debian's busybox as `/bin/busybox` and each of its applets a link to
/// it: an applet of a built-in program's name (sh, ls, cat, ps, top...) takes its place.
pub fn build_with_busybox(
    extra: &[PathBuf],
    busybox: &crate::busybox::Busybox,
) -> Result<PathBuf, String> {
    let (_, mut files) = programs_and(extra)?;
    files.retain(|(name, _)| !busybox.applets.contains(name) && name != "busybox");
    files.push(("busybox".into(), read(&busybox.binary)?));
    let links: Vec<(String, String)> = busybox
        .applets
        .iter()
        .map(|applet| (applet.clone(), "busybox".into()))
        .collect();
    write_named_by_contents(
        &linked_archive(&mut Vec::new(), &files, &links),
        "initramfs",
    )
}

/// Builds the user programs, adds `extra` host files, writes the archive under the target
/// directory and returns its path.
pub fn build(extra: &[PathBuf]) -> Result<PathBuf, String> {
    let (_, files) = programs_and(extra)?;
    write_named_by_contents(&archive(&files), "initramfs")
}

/// As [`build`], for Linux: [`linux_archive`] with userland's `linuxinit` as `/init`.
pub fn build_for_linux(extra: &[PathBuf]) -> Result<PathBuf, String> {
    let (dir, files) = programs_and(extra)?;
    let init = read(&crate::strip::cached_copy(
        &dir.join("linuxinit"),
        &dir.join("stripped"),
    )?)?;
    write_named_by_contents(&linux_archive(&init, &files), "initramfs-linux")
}

/// The built user programs, without their debug information, and the `extra` host files
/// as given, as (name, contents); and the directory the programs are in.
///
/// Why without: a program's DWARF is nine tenths of its file (three of `hog`'s 3.2 MB), the
/// kernel keeps the archive in its heap, and the DWARF depends on the toolchain that wrote
/// it — the same commit's programs were 4 MB smaller in all on another machine, which moved
/// the kernel's heap and with it a multi-CPU run's interleaving. gdb reads the full
/// programs on the host (`userland::dir`).
fn programs_and(extra: &[PathBuf]) -> Result<(PathBuf, Files), String> {
    let dir = crate::userland::build()?;
    let stripped = dir.join("stripped");
    let mut files = Vec::new();
    for name in crate::userland::programs() {
        let program = crate::strip::cached_copy(&dir.join(name), &stripped)?;
        files.push((name.to_string(), read(&program)?));
    }
    let mut added = Vec::new();
    for path in extra {
        let name = path
            .file_name()
            .and_then(|n| n.to_str())
            .ok_or_else(|| format!("--add {}: not a file name", path.display()))?;
        if add(&mut files, &mut added, name, read(path)?)? {
            eprintln!(
                "boot: /bin/{name} is {} (--add), not the built-in program",
                path.display()
            );
        }
    }
    Ok((dir, files))
}

/// Adds the host file `name` to `files` (the built-in programs, then what `added` names):
/// a file of a built-in's name replaces it (true: one was replaced), so that a user can try
/// a changed program; two added files of one name are an error, as only one can be
/// `/bin/NAME`.
fn add(
    files: &mut Files,
    added: &mut Vec<String>,
    name: &str,
    contents: Vec<u8>,
) -> Result<bool, String> {
    if added.iter().any(|n| n == name) {
        return Err(format!(
            "--add: two files named {name}; only one can be /bin/{name}"
        ));
    }
    added.push(name.to_string());
    match files.iter_mut().find(|(n, _)| n == name) {
        Some(entry) => {
            entry.1 = contents;
            Ok(true)
        }
        None => {
            files.push((name.to_string(), contents));
            Ok(false)
        }
    }
}

/// Writes `bytes` as target/cfslab/PREFIX-HASH.cpio. Named by its contents and written
/// whole (`atomic_file`): runs at once (the tests boot several) never read an archive
/// another run is writing.
fn write_named_by_contents(bytes: &[u8], prefix: &str) -> Result<PathBuf, String> {
    let hash = bytes.iter().fold(0xcbf2_9ce4_8422_2325_u64, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    });
    let out = crate::build::target_dir().join(format!("cfslab/{prefix}-{hash:016x}.cpio"));
    if out.is_file() {
        return Ok(out);
    }
    std::fs::create_dir_all(out.parent().unwrap_or(Path::new(".")))
        .map_err(|e| format!("cannot create the directory of {}: {e}", out.display()))?;
    crate::atomic_file::write(&out, bytes)?;
    Ok(out)
}

fn read(path: &Path) -> Result<Vec<u8>, String> {
    std::fs::read(path).map_err(|e| format!("cannot read {}: {e}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_added_file_replaces_a_built_in_of_its_name_and_two_of_one_name_are_refused() {
        let mut files: Files = vec![("hello".into(), b"built-in".to_vec())];
        let mut added = Vec::new();
        assert_eq!(
            add(&mut files, &mut added, "hello", b"mine".to_vec()),
            Ok(true)
        );
        assert_eq!(
            add(&mut files, &mut added, "tool", b"new".to_vec()),
            Ok(false)
        );
        assert_eq!(
            files,
            [
                ("hello".to_string(), b"mine".to_vec()),
                ("tool".to_string(), b"new".to_vec())
            ]
        );
        let again = add(&mut files, &mut added, "tool", b"other".to_vec());
        assert_eq!(
            again,
            Err("--add: two files named tool; only one can be /bin/tool".into())
        );
    }

    #[test]
    fn entries_are_newc_with_padded_names_and_data() {
        let a = archive(&[("hello".into(), b"ELF!x".to_vec())]);
        assert!(a.starts_with(b"070701"));
        // The second entry: bin/hello, 5 bytes, name size 10 (with the NUL).
        let second = 112 + 4; // "bin\0" after the first header, padded to 4
        assert_eq!(&a[second..second + 6], b"070701");
        assert_eq!(&a[second + 54..second + 62], b"00000005");
        assert_eq!(&a[second + 94..second + 102], b"0000000a");
        let name_at = second + 110;
        assert_eq!(&a[name_at..name_at + 10], b"bin/hello\0");
        let data_at = (name_at + 10).next_multiple_of(4);
        assert_eq!(&a[data_at..data_at + 5], b"ELF!x");
        assert!(a.len().is_multiple_of(4));
        assert!(a.windows(10).any(|w| w == b"TRAILER!!!"));
    }

    /// The entries of an archive as (name, mode, rdev major, rdev minor), read back by the
    /// format's own rules.
    fn entries(a: &[u8]) -> Vec<(String, u32, u32, u32)> {
        let (mut at, mut out) = (0, Vec::new());
        let field = |a: &[u8], at: usize, i: usize| {
            u32::from_str_radix(std::str::from_utf8(&a[at + 6 + 8 * i..][..8]).unwrap(), 16)
                .unwrap()
        };
        loop {
            let (mode, size, rmaj, rmin, namesize) = (
                field(a, at, 1),
                field(a, at, 6) as usize,
                field(a, at, 9),
                field(a, at, 10),
                field(a, at, 11) as usize,
            );
            let name = String::from_utf8(a[at + 110..at + 110 + namesize - 1].to_vec()).unwrap();
            if name == "TRAILER!!!" {
                return out;
            }
            out.push((name, mode, rmaj, rmin));
            at = (at + 110 + namesize).next_multiple_of(4);
            at = (at + size).next_multiple_of(4);
        }
    }

    #[test]
    fn linux_s_archive_has_a_console_device_and_init_at_the_root() {
        let a = linux_archive(b"INIT", &[("hello".into(), b"ELF".to_vec())]);
        let names: Vec<_> = entries(&a);
        assert_eq!(
            names,
            [
                ("dev".to_string(), DIRECTORY, 0, 0),
                ("dev/console".to_string(), 0o020_600, 5, 1),
                ("init".to_string(), EXECUTABLE, 0, 0),
                ("bin".to_string(), DIRECTORY, 0, 0),
                ("bin/hello".to_string(), EXECUTABLE, 0, 0),
            ]
        );
    }
}
