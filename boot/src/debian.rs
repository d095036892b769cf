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

/// A package unpacked: where its files are, and "NAME VERSION" from its file name.
pub struct Unpacked {
    pub root: PathBuf,
    pub version: String,
}

/// Downloads `package` into `dir` and unpacks it under `dir/unpacked` (the `.deb` is
/// removed). The caller copies what it needs and removes `root`.
pub fn fetch(dir: &Path, package: &str) -> Result<Unpacked, String> {
    std::fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    if run_in(dir, "apt-get", &["download", package]).is_err() {
        // A fresh machine may have no package lists yet.
        run_in(dir, "apt-get", &["update", "-qq"])?;
        run_in(dir, "apt-get", &["download", package])?;
    }
    let deb = std::fs::read_dir(dir)
        .map_err(|e| e.to_string())?
        .filter_map(Result::ok)
        .map(|e| e.path())
        .find(|p| p.extension().is_some_and(|x| x == "deb"))
        .ok_or("apt-get download left no .deb")?;
    let root = dir.join("unpacked");
    let _ = std::fs::remove_dir_all(&root);
    run_in(
        dir,
        "dpkg",
        &["-x", &deb.to_string_lossy(), &root.to_string_lossy()],
    )?;
    // The package's file name is NAME_VERSION_ARCH.deb.
    let stem = deb
        .file_stem()
        .unwrap_or_default()
        .to_string_lossy()
        .into_owned();
    let version = stem.split('_').take(2).collect::<Vec<_>>().join(" ");
    let _ = std::fs::remove_file(&deb);
    Ok(Unpacked { root, version })
}
