//! Debian's busybox (`busybox-static`: one static binary, built against glibc, with some
//! 300 applets), for `boot run --busybox` and `make shell SH=busybox`: a user space no one
//! here wrote. It is fetched from Debian's archive once (`debian::fetch`) and cached under
//! `target/busybox/` with its version; its applets are what `busybox --list` prints on the
//! host, which runs the same binary.

use crate::{atomic_file, debian};
use std::path::PathBuf;

/// The Debian package.
pub const PACKAGE: &str = "busybox-static";

/// The cached binary, its version ("busybox-static 1:1.35.0-4+deb12u1+b1") and its applets.
pub struct Busybox {
    pub binary: PathBuf,
    pub version: String,
    pub applets: Vec<String>,
}

/// The cached busybox, fetched the first time.
pub fn get() -> Result<Busybox, String> {
    let dir = crate::build::target_dir().join("busybox");
    let (binary, version_file) = (dir.join("busybox"), dir.join("VERSION"));
    let version = match std::fs::read_to_string(&version_file) {
        Ok(version) if binary.is_file() => version.trim().to_string(),
        _ => {
            eprintln!("boot: fetching {PACKAGE} from Debian's archive (once; about 1 MB)");
            let unpacked = debian::fetch(&dir, PACKAGE)?;
            // The binary first: a VERSION file says the binary beside it is whole.
            atomic_file::copy(&unpacked.root.join("bin/busybox"), &binary)?;
            atomic_file::write(&version_file, unpacked.version.as_bytes())?;
            unpacked.version.clone()
        }
    };
    let list = std::process::Command::new(&binary)
        .arg("--list")
        .output()
        .map_err(|e| format!("cannot run {} --list: {e}", binary.display()))?;
    let applets = String::from_utf8_lossy(&list.stdout)
        .lines()
        .map(str::trim)
        .filter(|a| !a.is_empty() && !a.contains('/'))
        .map(String::from)
        .collect();
    Ok(Busybox {
        binary,
        version,
        applets,
    })
}
