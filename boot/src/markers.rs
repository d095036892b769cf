//! Generated sections of the README: the text between `<!-- TAG -->` and `<!-- /TAG -->`
//! is written by a tool (`make lab`: `lab:seedNNN`; `make compare`: `compare:NAME`) from a
//! results file, and checked against it by a test, so that the README's figures are always
//! the last run's, never numbers typed by hand.

fn begin(tag: &str) -> String {
    format!("<!-- {tag} -->")
}

fn end(tag: &str) -> String {
    format!("<!-- /{tag} -->")
}

/// The text between `tag`'s markers in `text`.
pub fn section<'a>(text: &'a str, tag: &str) -> Result<&'a str, String> {
    let (begin, end) = (begin(tag), end(tag));
    let start = text
        .find(&begin)
        .ok_or_else(|| format!("README.md has no {begin} marker"))?
        + begin.len();
    let stop = text[start..]
        .find(&end)
        .ok_or_else(|| format!("README.md has no {end} marker"))?
        + start;
    Ok(&text[start..stop])
}

/// `text` with `tag`'s section replaced by `body`.
pub fn replace(text: &str, tag: &str, body: &str) -> Result<String, String> {
    let old_len = section(text, tag)?.len();
    let start = text.find(&begin(tag)).unwrap_or(0) + begin(tag).len();
    let mut out = text.to_string();
    out.replace_range(start..start + old_len, body);
    Ok(out)
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
                |(w, h)| format!("README has\n  {h}\nthe results say\n  {w}"),
            ),
    )
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
    }
}
