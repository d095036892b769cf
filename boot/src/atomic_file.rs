//! Files written whole or not at all. Several runs of the boot tool work at once (the tests
//! boot machines in parallel, and on a fresh machine each may fetch the same package), so
//! a file another run may be reading is never written in place: it is written beside its
//! final name, under a name of this process's own, then renamed, and a rename within one
//! directory is atomic. A reader sees no file, the old one or the new one, never half.

use std::path::Path;

/// Writes `bytes` to `to`, whole or not at all.
pub fn write(to: &Path, bytes: &[u8]) -> Result<(), String> {
    replace(to, |partial| std::fs::write(partial, bytes))
}

/// Copies `from` to `to` (its mode too, so a program stays executable), whole or not at all.
pub fn copy(from: &Path, to: &Path) -> Result<(), String> {
    replace(to, |partial| std::fs::copy(from, partial).map(drop))
}

/// Writes `to` whole or not at all: `fill` writes the file at the path it is given (a
/// program's output file, say), which then takes `to`'s name.
pub fn replace(to: &Path, fill: impl FnOnce(&Path) -> std::io::Result<()>) -> Result<(), String> {
    // The whole name kept (`kernel.img` and `kernel.stripped` get partials of their own).
    let mut partial = to.as_os_str().to_os_string();
    partial.push(format!(".partial-{}", std::process::id()));
    let partial = std::path::PathBuf::from(partial);
    let result = fill(&partial).and_then(|()| std::fs::rename(&partial, to));
    if result.is_err() {
        let _ = std::fs::remove_file(&partial);
    }
    result.map_err(|e| format!("cannot write {}: {e}", to.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_is_replaced_whole_and_leaves_nothing_beside_it() {
        let dir = std::env::temp_dir().join(format!("atomic-file-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let (a, b) = (dir.join("a"), dir.join("b"));
        write(&a, b"first").unwrap();
        write(&a, b"second").unwrap();
        copy(&a, &b).unwrap();
        assert_eq!(std::fs::read(&b).unwrap(), b"second");
        assert!(write(&dir.join("missing/c"), b"x").is_err());
        let names: Vec<_> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names.len(), 2, "{names:?}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
