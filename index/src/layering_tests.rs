//! The crate's modules depend on each other without cycles (ARCHITECTURE.md, "Crates and
//! module dependencies"): read from the source, as `crate::module` paths outside test code.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// Names re-exported at the crate root, by the module that defines them.
const ROOT_EXPORTS: [(&str, &str); 19] = [
    ("describe", "analyze"),
    ("render", "analyze"),
    ("Description", "analyze"),
    ("Format", "analyze"),
    ("RenderOptions", "analyze"),
    ("Source", "analyze"),
    ("CatalogReader", "catalog"),
    ("CatalogWriter", "catalog"),
    ("FileRow", "catalog"),
    ("FileState", "catalog"),
    ("DecodeError", "error"),
    ("Error", "error"),
    ("InternalError", "error"),
    ("Result", "error"),
    ("UserError", "error"),
    ("index", "indexer"),
    ("IndexOptions", "indexer"),
    ("IndexReport", "indexer"),
    ("Progress", "indexer"),
];

/// `text` without its `#[cfg(test)]` items (a `mod x;` line or a braced block).
fn without_tests(text: &str) -> String {
    let mut out = String::new();
    let mut lines = text.lines();
    while let Some(line) = lines.next() {
        if line.trim() != "#[cfg(test)]" {
            out.push_str(line);
            out.push('\n');
            continue;
        }
        let mut depth = 0i32;
        for l in lines.by_ref() {
            depth += l.matches('{').count() as i32 - l.matches('}').count() as i32;
            let t = l.trim();
            if depth <= 0 && !t.starts_with("#[") && (t.ends_with(';') || t.ends_with('}')) {
                break;
            }
        }
        out.push('\n');
    }
    out
}

/// Each top-level module's uses of other top-level modules, with one place each.
fn module_edges(src: &Path) -> BTreeMap<String, BTreeMap<String, String>> {
    let mut modules = BTreeSet::new();
    for e in std::fs::read_dir(src).unwrap() {
        let name = e.unwrap().file_name().to_string_lossy().into_owned();
        if let Some(m) = name.strip_suffix(".rs") {
            modules.insert(m.to_string());
        } else {
            modules.insert(name);
        }
    }
    let exports: BTreeMap<&str, &str> = ROOT_EXPORTS.into_iter().collect();
    let mut edges: BTreeMap<String, BTreeMap<String, String>> = BTreeMap::new();
    let mut stack = vec![src.to_path_buf()];
    while let Some(p) = stack.pop() {
        if p.is_dir() {
            stack.extend(std::fs::read_dir(&p).unwrap().map(|e| e.unwrap().path()));
            continue;
        }
        let rel = p.strip_prefix(src).unwrap().to_string_lossy().into_owned();
        let from = rel.split('/').next().unwrap().trim_end_matches(".rs");
        let name = p.file_name().unwrap().to_string_lossy();
        if from == "lib" || !name.ends_with(".rs") || name.ends_with("tests.rs") {
            continue;
        }
        let text = without_tests(&std::fs::read_to_string(&p).unwrap());
        for (i, line) in text.lines().enumerate() {
            if line.trim_start().starts_with("//") {
                continue;
            }
            for (at, _) in line.match_indices("crate::") {
                let rest = &line[at + "crate::".len()..];
                // `crate::{a, b::c}` names several.
                let names: Vec<&str> = match rest.strip_prefix('{') {
                    Some(list) => list
                        .split('}')
                        .next()
                        .unwrap()
                        .split(',')
                        .map(|n| n.trim())
                        .collect(),
                    None => vec![rest],
                };
                for n in names {
                    let head: String = n
                        .chars()
                        .take_while(|c| c.is_alphanumeric() || *c == '_')
                        .collect();
                    let to = exports.get(head.as_str()).copied().unwrap_or(&head);
                    if to != from && modules.contains(to) {
                        edges
                            .entry(from.to_string())
                            .or_default()
                            .entry(to.to_string())
                            .or_insert_with(|| format!("{rel}:{}", i + 1));
                    }
                }
            }
        }
    }
    edges
}

#[test]
fn module_dependencies_have_no_cycles() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let edges = module_edges(&src);
    // Depth-first search; a module met again on the current path closes a cycle.
    fn visit<'a>(
        m: &'a str,
        edges: &'a BTreeMap<String, BTreeMap<String, String>>,
        path: &mut Vec<&'a str>,
        done: &mut BTreeSet<&'a str>,
    ) -> Option<Vec<&'a str>> {
        if let Some(i) = path.iter().position(|p| *p == m) {
            let mut cycle = path[i..].to_vec();
            cycle.push(m);
            return Some(cycle);
        }
        if !done.insert(m) {
            return None;
        }
        path.push(m);
        for to in edges.get(m).into_iter().flat_map(|e| e.keys()) {
            if let Some(c) = visit(to, edges, path, done) {
                return Some(c);
            }
        }
        path.pop();
        None
    }
    let mut done = BTreeSet::new();
    for m in edges.keys() {
        if let Some(cycle) = visit(m, &edges, &mut Vec::new(), &mut done) {
            let at: Vec<String> = cycle
                .windows(2)
                .map(|w| format!("{} → {} ({})", w[0], w[1], edges[w[0]][w[1]]))
                .collect();
            panic!("module dependency cycle: {}", at.join(", "));
        }
    }
    assert!(
        edges["indexer"].contains_key("catalog") && edges["catalog"].contains_key("analyze"),
        "the scan finds the crate's dependencies: {edges:?}"
    );
}
