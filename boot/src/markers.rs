//! Generated blocks of the documentation: the text between `<!-- TAG -->` and `<!-- /TAG -->`
//! in README.md or in any Markdown file under `docs/` is written by a tool from a data file,
//! and checked against that data by a test, so that the documents' figures are always the
//! last run's, never numbers typed by hand. A tag lives in exactly one document; a tool
//! rewriting a block finds it wherever it is ([`locate`]). `crate::docs` lists every block,
//! its data and the tool that writes it.

use std::path::{Path, PathBuf};

fn begin(tag: &str) -> String {
    format!("<!-- {tag} -->")
}

fn end(tag: &str) -> String {
    format!("<!-- /{tag} -->")
}

/// Where `marker` stands on a line of its own in `text`, from `from` on: a marker is a whole
/// line, so that prose may name one (in backticks) without being taken for it.
fn find_line(text: &str, marker: &str, from: usize) -> Option<usize> {
    text[from..]
        .match_indices(marker)
        .map(|(at, _)| from + at)
        .find(|&at| {
            let starts = at == 0 || text[..at].ends_with('\n');
            let rest = &text[at + marker.len()..];
            starts && (rest.is_empty() || rest.starts_with('\n'))
        })
}

/// The text between `tag`'s markers in `text`.
pub fn section<'a>(text: &'a str, tag: &str) -> Result<&'a str, String> {
    let (begin, end) = (begin(tag), end(tag));
    let start =
        find_line(text, &begin, 0).ok_or_else(|| format!("no {begin} marker"))? + begin.len();
    let stop =
        find_line(text, &end, start).ok_or_else(|| format!("no {end} marker after {begin}"))?;
    Ok(&text[start..stop])
}

/// `text` with `tag`'s section replaced by `body`.
pub fn replace(text: &str, tag: &str, body: &str) -> Result<String, String> {
    let old_len = section(text, tag)?.len();
    let start = find_line(text, &begin(tag), 0).unwrap_or(0) + begin(tag).len();
    let mut out = text.to_string();
    out.replace_range(start..start + old_len, body);
    Ok(out)
}

/// Every tag whose begin marker is in `text`, in order (a marker is a line `<!-- TAG -->`
/// with a tag of no spaces; the line `<!-- /TAG -->` ends its block).
pub fn tags(text: &str) -> Vec<String> {
    text.lines()
        .filter_map(|line| {
            let tag = line.strip_prefix("<!-- ")?.strip_suffix(" -->")?;
            let plain =
                !tag.is_empty() && !tag.starts_with('/') && !tag.contains(char::is_whitespace);
            plain.then(|| tag.to_string())
        })
        .collect()
}

/// `None` if `have` is `want`, else the first line that differs, for an error message.
pub fn difference(want: &str, have: &str) -> Option<String> {
    if want == have {
        return None;
    }
    Some(
        want.lines()
            .zip(have.lines().chain(std::iter::repeat("")))
            .find(|(w, h)| w != h)
            .map_or_else(
                || "a different number of lines".to_string(),
                |(w, h)| format!("the document has\n  {h}\nits data say\n  {w}"),
            ),
    )
}

/// The documents that may hold generated blocks, relative to `root`: README.md and every
/// `.md` file under `docs/`, in a fixed order.
pub fn documents(root: &Path) -> Vec<PathBuf> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        let mut paths: Vec<PathBuf> = entries.flatten().map(|e| e.path()).collect();
        paths.sort();
        for path in paths {
            if path.is_dir() {
                walk(&path, out);
            } else if path.extension().is_some_and(|e| e == "md") {
                out.push(path);
            }
        }
    }
    let mut out = vec![root.join("README.md")];
    walk(&root.join("docs"), &mut out);
    out.into_iter()
        .filter_map(|p| p.strip_prefix(root).ok().map(Path::to_path_buf))
        .collect()
}

/// The one document under `root` that holds `tag`'s markers (its path relative to `root`)
/// and its text.
pub fn locate(root: &Path, tag: &str) -> Result<(PathBuf, String), String> {
    let mut found = Vec::new();
    for doc in documents(root) {
        let text = std::fs::read_to_string(root.join(&doc))
            .map_err(|e| format!("cannot read {}: {e}", doc.display()))?;
        if find_line(&text, &begin(tag), 0).is_some() {
            found.push((doc, text));
        }
    }
    match found.len() {
        1 => Ok(found.remove(0)),
        0 => Err(format!(
            "no document holds the {} marker (README.md or docs/*.md)",
            begin(tag)
        )),
        _ => Err(format!(
            "the {} marker is in several documents: {}",
            begin(tag),
            found
                .iter()
                .map(|(p, _)| p.display().to_string())
                .collect::<Vec<_>>()
                .join(", ")
        )),
    }
}

/// Rewrites `tag`'s block with `body`, in whichever document holds it; returns that
/// document's path (relative to `root`).
pub fn write_block(root: &Path, tag: &str, body: &str) -> Result<PathBuf, String> {
    let (doc, text) = locate(root, tag)?;
    let new = replace(&text, tag, body).map_err(|e| format!("{}: {e}", doc.display()))?;
    if new != text {
        std::fs::write(root.join(&doc), new)
            .map_err(|e| format!("cannot write {}: {e}", doc.display()))?;
    }
    Ok(doc)
}

/// `None` if `tag`'s block is `want`, else a message naming the document and the first line
/// that differs.
pub fn check_block(root: &Path, tag: &str, want: &str) -> Result<Option<String>, String> {
    let (doc, text) = locate(root, tag)?;
    let have = section(&text, tag).map_err(|e| format!("{}: {e}", doc.display()))?;
    Ok(difference(want, have).map(|line| format!("{}'s {tag} block: {line}", doc.display())))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_section_is_found_replaced_and_compared() {
        let text = "a\n<!-- t:x -->\nold\n<!-- /t:x -->\nb\n";
        assert_eq!(section(text, "t:x").unwrap(), "\nold\n");
        let new = replace(text, "t:x", "\nnew\n").unwrap();
        assert_eq!(new, "a\n<!-- t:x -->\nnew\n<!-- /t:x -->\nb\n");
        assert!(section(text, "t:y").is_err());
        assert_eq!(difference("x\n", "x\n"), None);
        assert!(difference("x\ny\n", "x\nz\n").unwrap().contains("  z\n"));
        assert_eq!(tags(text), ["t:x"]);
        assert!(tags("<!-- a comment -->").is_empty());
        // Prose may name a marker: only a marker on a line of its own counts.
        let named = "see `<!-- t:x -->` below\n<!-- t:x -->\nold\n<!-- /t:x -->\n";
        assert_eq!(section(named, "t:x").unwrap(), "\nold\n");
        assert_eq!(tags(named), ["t:x"]);
    }

    #[test]
    fn a_block_is_found_in_whichever_document_holds_it() {
        let root = std::env::temp_dir().join(format!("cfslab-markers-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        std::fs::create_dir_all(root.join("docs/sub")).unwrap();
        std::fs::write(root.join("README.md"), "intro\n").unwrap();
        std::fs::write(root.join("docs/sub/a.md"), "<!-- t -->\nold\n<!-- /t -->\n").unwrap();
        std::fs::write(root.join("docs/b.md"), "<!-- u -->\n<!-- /u -->\n").unwrap();
        assert_eq!(
            documents(&root),
            [
                PathBuf::from("README.md"),
                "docs/b.md".into(),
                "docs/sub/a.md".into()
            ]
        );
        assert_eq!(
            write_block(&root, "t", "\nnew\n").unwrap(),
            PathBuf::from("docs/sub/a.md")
        );
        assert_eq!(check_block(&root, "t", "\nnew\n").unwrap(), None);
        let problem = check_block(&root, "t", "\nother\n").unwrap().unwrap();
        assert!(problem.starts_with("docs/sub/a.md's t block"), "{problem}");
        assert!(locate(&root, "v").is_err());
        std::fs::write(root.join("README.md"), "<!-- u -->\n<!-- /u -->\n").unwrap();
        assert!(locate(&root, "u").unwrap_err().contains("several"));
        std::fs::remove_dir_all(&root).unwrap();
    }
}
