//! A crate's import graph, read from its source: which module names which (a `use` or a
//! `crate::`/`super::`/`self::` path in its code). A path through a re-export (`pub use`)
//! names the module the item comes from, and a module imported by name (`use crate::arch;`)
//! names only what its uses below reach. A file's own unit tests (`#[cfg(test)] mod tests`,
//! at its end) are not counted. The cycles are the strongly connected components of that
//! graph. `tests/layering.rs` checks the kernel's layers with it.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

pub struct Graph {
    /// Module path ("" for the crate root) → its source, comments and unit tests removed.
    files: BTreeMap<String, String>,
    /// Module → the names it re-exports (`pub use`) → the absolute path they stand for.
    aliases: BTreeMap<String, BTreeMap<String, Vec<String>>>,
}

fn load(dir: &Path, root: &Path, files: &mut BTreeMap<String, String>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            load(&path, root, files);
        } else if path.extension().is_some_and(|e| e == "rs") {
            let rel = path.strip_prefix(root).unwrap().with_extension("");
            let mut parts: Vec<String> = rel.iter().map(|p| p.to_string_lossy().into()).collect();
            if parts.last().is_some_and(|p| p == "mod") {
                parts.pop();
            }
            if parts == ["lib"] || parts == ["main"] {
                parts.clear();
            }
            let text = std::fs::read_to_string(&path).unwrap();
            files.insert(parts.join("::"), strip(&text));
        }
    }
}

/// The source without `//` comments, without the unit tests at its end, and with each
/// restricted visibility `pub(in PATH)` as plain `pub`: naming a module to say who may see
/// an item is no dependency on it.
fn strip(text: &str) -> String {
    let mut code: String = text
        .lines()
        .map(|l| l.find("//").map_or(l, |i| &l[..i]))
        .collect::<Vec<_>>()
        .join("\n");
    while let Some(i) = code.find("pub(in ") {
        let end = code[i..].find(')').map_or(code.len(), |e| i + e + 1);
        code.replace_range(i..end, "pub");
    }
    let mut at = 0;
    while let Some(i) = code[at..].find("#[cfg(test)]") {
        let rest = code[at + i + 12..].trim_start();
        if rest.starts_with("mod ") && rest.split('{').next().is_some_and(|h| !h.contains(';')) {
            return code[..at + i].to_string();
        }
        at += i + 12;
    }
    code
}

fn is_ident(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// Every `use` statement: (whether it is a `pub use`, its tree).
fn uses(src: &str) -> Vec<(bool, String)> {
    let mut found = Vec::new();
    let mut at = 0;
    while let Some(i) = src[at..].find("use ") {
        let start = at + i;
        at = start + 4;
        if src[..start].chars().next_back().is_some_and(is_ident) {
            continue;
        }
        let Some(end) = src[at..].find(';') else {
            break;
        };
        let before = src[..start].trim_end();
        let public = before.ends_with("pub") || before.ends_with(')') && before.contains("pub(");
        found.push((public, src[at..at + end].split_whitespace().collect()));
        at += end;
    }
    found
}

/// `a::{b, c::{d, e}}` as `a::b`, `a::c::d`, `a::c::e`.
fn expand(tree: &str) -> Vec<String> {
    let Some(open) = tree.find('{') else {
        return vec![tree.split(" as ").next().unwrap().to_string()];
    };
    let (prefix, body) = (&tree[..open], &tree[open + 1..tree.rfind('}').unwrap()]);
    let (mut parts, mut depth, mut current) = (Vec::new(), 0, String::new());
    for c in body.chars() {
        match c {
            '{' => depth += 1,
            '}' => depth -= 1,
            ',' if depth == 0 => {
                parts.push(std::mem::take(&mut current));
                continue;
            }
            _ => {}
        }
        current.push(c);
    }
    parts.push(current);
    parts
        .iter()
        .filter(|p| !p.trim().is_empty())
        .flat_map(|p| {
            expand(p.trim())
                .into_iter()
                .map(move |q| format!("{prefix}{q}"))
        })
        .collect()
}

/// Each place `prefix` starts a path in `code` (not the middle of one), with the rest of
/// that path: what follows `prefix` up to the first character no path has.
fn paths_after<'a>(code: &'a str, prefix: &str) -> Vec<&'a str> {
    let mut found = Vec::new();
    let mut at = 0;
    while let Some(i) = code[at..].find(prefix) {
        let start = at + i;
        at = start + prefix.len();
        if code[..start]
            .chars()
            .next_back()
            .is_some_and(|c| is_ident(c) || c == ':')
        {
            continue;
        }
        let len = code[at..]
            .find(|c: char| !(is_ident(c) || c == ':'))
            .unwrap_or(code.len() - at);
        found.push(code[at..at + len].trim_end_matches(':'));
    }
    found
}

/// Paths written in code (not in `use` statements) from `crate`, `super` or `self`.
fn inline_paths(code: &str) -> Vec<String> {
    ["crate", "super", "self"]
        .iter()
        .flat_map(|root| {
            paths_after(code, &format!("{root}::"))
                .into_iter()
                .map(move |rest| format!("{root}::{rest}"))
        })
        .collect()
}

impl Graph {
    fn children(&self, module: &str) -> BTreeSet<String> {
        let prefix = if module.is_empty() {
            String::new()
        } else {
            format!("{module}::")
        };
        self.files
            .keys()
            .filter_map(|k| k.strip_prefix(&prefix).filter(|_| k != module))
            .map(|rest| rest.split("::").next().unwrap().to_string())
            .collect()
    }

    /// `path`, written in `module`, as a path from the crate root.
    fn absolute(&self, module: &str, path: &str) -> Option<Vec<String>> {
        let mut segs: Vec<&str> = path.split("::").filter(|s| !s.is_empty()).collect();
        let base: Vec<String> = module
            .split("::")
            .filter(|s| !s.is_empty())
            .map(String::from)
            .collect();
        let mut out = match *segs.first()? {
            "crate" => {
                segs.remove(0);
                Vec::new()
            }
            "self" => {
                segs.remove(0);
                base
            }
            "super" => {
                let mut b = base;
                while segs.first() == Some(&"super") {
                    b.pop();
                    segs.remove(0);
                }
                b
            }
            first if self.children(module).contains(first) => base,
            _ => return None,
        };
        out.extend(segs.iter().map(|s| s.to_string()));
        Some(out)
    }

    /// The module file an absolute path ends in, following re-exports.
    fn resolve(&self, parts: &[String], depth: usize) -> Option<String> {
        let mut current: Vec<String> = Vec::new();
        for (i, seg) in parts.iter().enumerate() {
            let mut candidate = current.clone();
            candidate.push(seg.clone());
            if self.files.contains_key(&candidate.join("::")) {
                current = candidate;
                continue;
            }
            if let Some(target) = self
                .aliases
                .get(&current.join("::"))
                .and_then(|a| a.get(seg))
                && depth < 10
            {
                let mut next = target.clone();
                next.extend_from_slice(&parts[i + 1..]);
                return self.resolve(&next, depth + 1);
            }
            break;
        }
        let module = current.join("::");
        self.files.contains_key(&module).then_some(module)
    }

    /// The graph of the crate whose source is under `root`.
    pub fn new(root: &Path) -> Graph {
        let mut files = BTreeMap::new();
        load(root, root, &mut files);
        let mut graph = Graph {
            files,
            aliases: BTreeMap::new(),
        };
        let mut aliases = BTreeMap::new();
        for (module, src) in &graph.files {
            let mut names = BTreeMap::new();
            for (_, tree) in uses(src).into_iter().filter(|(public, _)| *public) {
                for path in expand(&tree) {
                    let name = path.rsplit("::").next().unwrap().to_string();
                    if let Some(target) = graph
                        .absolute(module, &path)
                        .filter(|_| name != "*" && name != "self")
                    {
                        names.insert(name, target);
                    }
                }
            }
            aliases.insert(module.clone(), names);
        }
        graph.aliases = aliases;
        graph
    }

    /// Module → the modules it names.
    pub fn edges(&self) -> BTreeMap<String, BTreeSet<String>> {
        let mut edges = BTreeMap::new();
        for (module, src) in &self.files {
            let mut paths = Vec::new();
            let mut by_name = Vec::new();
            for (public, tree) in uses(src) {
                for path in expand(&tree) {
                    let Some(abs) = self.absolute(module, &path) else {
                        continue;
                    };
                    let imports_module = self.resolve(&abs, 0).is_some_and(|t| t == abs.join("::"));
                    if imports_module && !public {
                        by_name.push((path.rsplit("::").next().unwrap().to_string(), abs));
                    } else {
                        paths.push(path);
                    }
                }
            }
            let mut code = src.clone();
            while let Some(i) = code
                .find("use ")
                .filter(|&i| !code[..i].ends_with(is_ident))
            {
                let end = code[i..].find(';').map_or(code.len(), |e| i + e + 1);
                code.replace_range(i..end, "");
            }
            paths.extend(inline_paths(&code));
            for (name, abs) in &by_name {
                for rest in paths_after(&code, &format!("{name}::")) {
                    paths.push(format!("crate::{}::{rest}", abs.join("::")));
                }
            }
            let targets: BTreeSet<String> = paths
                .iter()
                .filter_map(|p| self.absolute(module, p))
                .filter_map(|abs| self.resolve(&abs, 0))
                .filter(|t| t != module && !t.is_empty())
                .collect();
            edges.insert(module.clone(), targets);
        }
        edges
    }
}

/// The strongly connected components of `edges` with more than one module, largest first
/// (Tarjan's algorithm).
pub fn cycles(edges: &BTreeMap<String, BTreeSet<String>>) -> Vec<Vec<String>> {
    struct State<'a> {
        edges: &'a BTreeMap<String, BTreeSet<String>>,
        index: BTreeMap<&'a str, usize>,
        low: BTreeMap<&'a str, usize>,
        stack: Vec<&'a str>,
        on_stack: BTreeSet<&'a str>,
        found: Vec<Vec<String>>,
    }
    fn visit<'a>(s: &mut State<'a>, v: &'a str) {
        let n = s.index.len();
        s.index.insert(v, n);
        s.low.insert(v, n);
        s.stack.push(v);
        s.on_stack.insert(v);
        for w in &s.edges[v] {
            if !s.index.contains_key(w.as_str()) {
                visit(s, w);
                let low = s.low[v].min(s.low[w.as_str()]);
                s.low.insert(v, low);
            } else if s.on_stack.contains(w.as_str()) {
                let low = s.low[v].min(s.index[w.as_str()]);
                s.low.insert(v, low);
            }
        }
        if s.low[v] == s.index[v] {
            let mut component = Vec::new();
            loop {
                let w = s.stack.pop().unwrap();
                s.on_stack.remove(w);
                component.push(w.to_string());
                if w == v {
                    break;
                }
            }
            if component.len() > 1 {
                component.sort();
                s.found.push(component);
            }
        }
    }
    let mut s = State {
        edges,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on_stack: BTreeSet::new(),
        found: Vec::new(),
    };
    for v in edges.keys() {
        if !s.index.contains_key(v.as_str()) {
            visit(&mut s, v);
        }
    }
    s.found.sort_by_key(|c| std::cmp::Reverse(c.len()));
    s.found
}
