//! Packages from Debian's archive, fetched without installing anything: `apt-get download`
//! then `dpkg -x` into a directory under `target/`. Linux's kernel (`linux`) and busybox
//! (`busybox`) come this way.

use std::path::{Path, PathBuf};
use std::process::Command;

/// Runs `program args` in `dir` and returns its standard output, or its error.
pub fn run_in(dir: &Path, program: &str, args: &[&str]) -> Result<String, String> {
    let out = Command::new(program)
        .args(args)
        .current_dir(dir)
        .output()
        .map_err(|e| format!("cannot run {program}: {e} (this needs Debian's apt)"))?;
    if !out.status.success() {
        return Err(format!(
            "{program} {} failed: {}",
            args.join(" "),
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// A package unpacked: where its files are, and "NAME VERSION" from its file name. The
/// files are scratch, removed with their directory when this is dropped: the caller
/// writes what it keeps elsewhere first.
pub struct Unpacked {
    pub root: PathBuf,
    pub version: String,
    scratch: PathBuf,
}

impl Drop for Unpacked {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.scratch);
    }
}

/// Downloads `package` and unpacks it in a directory of this process's own under `dir`.
/// Several test processes may fetch the same package at once on a fresh machine, so none
/// may touch another's files: each works apart, and what it keeps it writes with `atomic_file`.
pub fn fetch(dir: &Path, package: &str) -> Result<Unpacked, String> {
    let scratch = dir.join(format!("fetch-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&scratch);
    std::fs::create_dir_all(&scratch)
        .map_err(|e| format!("cannot create {}: {e}", scratch.display()))?;
    let mut unpacked = Unpacked {
        root: scratch.join("unpacked"),
        version: String::new(),
        scratch,
    };
    let work = unpacked.scratch.as_path();
    if run_in(work, "apt-get", &["download", package]).is_err() {
        // A fresh machine may have no package lists yet.
        run_in(work, "apt-get", &["update", "-qq"])?;
        run_in(work, "apt-get", &["download", package])?;
    }
    let deb = std::fs::read_dir(work)
        .map_err(|e| e.to_string())?
        .filter_map(Result::ok)
        .map(|e| e.path())
        .find(|p| p.extension().is_some_and(|x| x == "deb"))
        .ok_or("apt-get download left no .deb")?;
    let root = unpacked.root.to_string_lossy().into_owned();
    run_in(work, "dpkg", &["-x", &deb.to_string_lossy(), &root])?;
    // The package's file name is NAME_VERSION_ARCH.deb.
    let stem = deb.file_stem().unwrap_or_default().to_string_lossy();
    unpacked.version = stem.split('_').take(2).collect::<Vec<_>>().join(" ");
    Ok(unpacked)
}
