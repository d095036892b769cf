//! The kernel's layers, checked on its source: which modules of `kernel/src` name which, and
//! the import cycles that makes (docs/architecture.md, "Layers").
//!
//! A module names another by a `use` or a `crate::`/`super::`/`self::` path in its code; a
//! path through a re-export (`pub use`) names the module the item comes from, and a module
//! imported by name (`use crate::arch;`) names only what its uses below reach. A file's own
//! unit tests (`#[cfg(test)] mod tests`, at its end) are not counted. The cycles are the
//! strongly connected components of that graph.
//!
//! What must hold: the modules everything stands on (the machine, the locks, the CPU's own
//! state, memory, time, the names of tasks, the error numbers) are in no cycle, and the arch
//! entries that call up into `trap` close none, nor do the system calls; the one cycle
//! left is the kernel's core — the scheduler and its process model, the tasks, and the open
//! files, file tree and terminal the tasks hold, which sleep on the scheduler's wait queues
//! and read its state for /proc — and it grows no larger than it is.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// The largest cycle allowed: today's, the kernel's core (see the module's docs).
const LARGEST_CYCLE: usize = 29;

/// The modules (by path prefix) the core cycle may hold.
const CORE: [&str; 3] = ["sched", "task", "user"];

/// Modules that must be in no cycle at all.
const LOW: [&str; 12] = [
    "arch",
    "sync",
    "percpu",
    "mm",
    "time",
    "trap",
    "task::id",
    "sched::trace",
    "user::errno",
    "user::syscall",
    "config",
    "console",
];

struct Graph {
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

/// The source without `//` comments and without the unit tests at its end.
fn strip(text: &str) -> String {
    let code: String = text
        .lines()
        .map(|l| l.find("//").map_or(l, |i| &l[..i]))
        .collect::<Vec<_>>()
        .join("\n");
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

/// Paths written in code (not in `use` statements) from `crate`, `super` or `self`.
fn inline_paths(code: &str) -> Vec<String> {
    let mut found = Vec::new();
    for root in ["crate::", "super::", "self::"] {
        let mut at = 0;
        while let Some(i) = code[at..].find(root) {
            let start = at + i;
            at = start + root.len();
            if code[..start]
                .chars()
                .next_back()
                .is_some_and(|c| is_ident(c) || c == ':')
            {
                continue;
            }
            let len = code[start..]
                .find(|c: char| !(is_ident(c) || c == ':'))
                .unwrap_or(code.len() - start);
            found.push(code[start..start + len].trim_end_matches(':').to_string());
        }
    }
    found
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

    fn new(root: &Path) -> Graph {
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
    fn edges(&self) -> BTreeMap<String, BTreeSet<String>> {
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
                let pattern = format!("{name}::");
                let mut at = 0;
                while let Some(i) = code[at..].find(&pattern) {
                    let start = at + i;
                    at = start + pattern.len();
                    if code[..start]
                        .chars()
                        .next_back()
                        .is_some_and(|c| is_ident(c) || c == ':')
                    {
                        continue;
                    }
                    let len = code[at..]
                        .find(|c: char| !(is_ident(c) || c == ':'))
                        .unwrap_or(0);
                    paths.push(format!(
                        "crate::{}::{}",
                        abs.join("::"),
                        &code[at..at + len]
                    ));
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
fn cycles(edges: &BTreeMap<String, BTreeSet<String>>) -> Vec<Vec<String>> {
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

fn under(module: &str, prefix: &str) -> bool {
    module == prefix || module.starts_with(&format!("{prefix}::"))
}

fn kernel_cycles() -> Vec<Vec<String>> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../kernel/src");
    cycles(&Graph::new(&root).edges())
}

#[test]
fn the_low_layers_are_in_no_cycle_and_the_core_cycle_does_not_grow() {
    let found = kernel_cycles();
    for cycle in &found {
        for module in cycle {
            assert!(
                !LOW.iter().any(|low| under(module, low)),
                "{module} is in an import cycle: {cycle:?}"
            );
        }
    }
    let largest = found.first().expect("the kernel's core is one cycle");
    assert!(
        largest.iter().all(|m| CORE.iter().any(|c| under(m, c))),
        "the largest cycle reaches beyond sched, task and user: {largest:?}"
    );
    assert!(
        largest.len() <= LARGEST_CYCLE,
        "the largest import cycle grew to {} modules: {largest:?}",
        largest.len()
    );
    // Every other cycle is a module and its helper.
    for cycle in &found[1..] {
        assert!(cycle.len() <= 2, "another import cycle: {cycle:?}");
    }
    println!(
        "largest import cycle: {} modules: {largest:?}",
        largest.len()
    );
}

#[test]
fn the_analysis_finds_a_cycle_through_a_re_export_and_ignores_unit_tests() {
    // The check above can fail: a leaf that names its caller through a re-export closes a
    // cycle, and a unit test's `use super::*` does not.
    let dir = std::env::temp_dir().join(format!("cfslab-layering-{}", std::process::id()));
    let write = |path: &str, text: &str| {
        let file = dir.join(path);
        std::fs::create_dir_all(file.parent().unwrap()).unwrap();
        std::fs::write(file, text).unwrap();
    };
    write("lib.rs", "pub mod low;\npub mod high;\npub mod other;\n");
    write("low/mod.rs", "pub mod leaf;\npub use self::leaf::thing;\n");
    write("low/leaf.rs", "pub fn thing() { crate::high::call(); }\n");
    write(
        "high.rs",
        "use crate::low;\npub fn call() { low::thing(); }\n",
    );
    write(
        "other.rs",
        "pub fn alone() {}\n#[cfg(test)]\nmod tests {\n    use super::*;\n    use crate::high;\n}\n",
    );
    let edges = Graph::new(&dir).edges();
    std::fs::remove_dir_all(&dir).unwrap();
    assert_eq!(edges["high"], BTreeSet::from(["low::leaf".to_string()]));
    assert!(edges["other"].is_empty(), "{:?}", edges["other"]);
    assert_eq!(
        cycles(&edges),
        vec![vec!["high".to_string(), "low::leaf".to_string()]]
    );
}
