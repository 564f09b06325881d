//! The top-level modules of `rust/core/src` form a graph without cycles:
//! each module may use the ones below it, never one that uses it back. The
//! check reads the sources: a path `crate::x`, `crate::{x, ..}`, or a
//! `super::` chain that climbs to the crate root, names module `x`.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

/// Every `.rs` file under `dir`.
fn files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).expect("readable source dir") {
        let path = entry.expect("dir entry").path();
        if path.is_dir() {
            out.extend(files(&path));
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
    out
}

/// Source text without its line comments (doc comments name modules freely).
fn without_comments(text: &str) -> String {
    text.lines().map(|line| line.split("//").next().unwrap_or("")).collect::<Vec<_>>().join("\n")
}

/// Identifiers that follow `prefix` in `code`, including each name of a
/// `prefix{a, b::c}` group.
fn names_after(code: &str, prefix: &str) -> Vec<String> {
    let ident = |s: &str| s.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect::<String>();
    let mut out = Vec::new();
    for (at, _) in code.match_indices(prefix) {
        let rest = &code[at + prefix.len()..];
        if let Some(group) = rest.strip_prefix('{') {
            let group = &group[..group.find('}').unwrap_or(group.len())];
            out.extend(group.split(',').map(|item| ident(item.trim())));
        } else {
            out.push(ident(rest));
        }
    }
    out
}

/// Module `from` → the top-level modules its files name.
fn graph() -> BTreeMap<String, BTreeSet<String>> {
    let root = src();
    let mut tops = BTreeSet::new();
    for entry in std::fs::read_dir(&root).expect("src") {
        let path = entry.expect("entry").path();
        let stem = path.file_stem().and_then(|s| s.to_str()).unwrap_or("").to_string();
        if stem != "lib" && (path.is_dir() || path.extension().is_some_and(|e| e == "rs")) {
            tops.insert(stem);
        }
    }
    let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for file in files(&root) {
        let rel = file.strip_prefix(&root).expect("under src");
        let parts: Vec<String> = rel.iter().map(|p| p.to_string_lossy().into_owned()).collect();
        let Some(top) = parts.first().map(|p| p.trim_end_matches(".rs").to_string()) else { continue };
        if top == "lib" {
            continue;
        }
        // How many `super::` climb from this file's module to the crate root.
        let depth = parts.len() - usize::from(parts.last().is_some_and(|p| p == "mod.rs"));
        let code = without_comments(&std::fs::read_to_string(&file).expect("readable source"));
        let mut named = names_after(&code, "crate::");
        named.extend(names_after(&code, &"super::".repeat(depth)));
        let entry = graph.entry(top.clone()).or_default();
        entry.extend(named.into_iter().filter(|n| tops.contains(n) && *n != top));
    }
    graph
}

/// A cycle through `start`, if any, as the list of modules on it.
fn cycle_from(graph: &BTreeMap<String, BTreeSet<String>>, start: &str) -> Option<Vec<String>> {
    let mut stack = vec![(start.to_string(), vec![start.to_string()])];
    let mut seen = BTreeSet::new();
    while let Some((node, path)) = stack.pop() {
        for next in graph.get(&node).into_iter().flatten() {
            if next == start {
                return Some(path.iter().cloned().chain([start.to_string()]).collect());
            }
            if seen.insert(next.clone()) {
                stack.push((next.clone(), path.iter().cloned().chain([next.clone()]).collect()));
            }
        }
    }
    None
}

#[test]
fn top_level_modules_have_no_import_cycle() {
    let graph = graph();
    assert!(graph.len() > 8, "read too few modules: {graph:?}");
    let cycles: Vec<String> = graph.keys().filter_map(|m| cycle_from(&graph, m)).map(|c| c.join(" -> ")).collect();
    assert!(cycles.is_empty(), "import cycles between top-level modules:\n{}", cycles.join("\n"));
}

#[test]
fn the_reader_sees_paths_in_every_spelling() {
    let code = without_comments("use crate::{a, b::c};\nlet x = super::super::d::f(); // crate::e\n");
    assert_eq!(names_after(&code, "crate::"), ["a", "b"]);
    assert_eq!(names_after(&code, "super::super::"), ["d"]);
    let graph: BTreeMap<String, BTreeSet<String>> = [("a", "b"), ("b", "c"), ("c", "a")]
        .iter()
        .map(|(from, to)| (from.to_string(), BTreeSet::from([to.to_string()])))
        .collect();
    assert_eq!(cycle_from(&graph, "a").map(|c| c.join(" -> ")).as_deref(), Some("a -> b -> c -> a"));
}
