//! The import structure of src/: no import circle among the source files, and no module
//! importing from a layer above its own (docs/architecture.md, "Layers", draws `LAYERS`).
//!
//! Reads every file of the library's module tree (from src/lib.rs through its `mod`
//! declarations) as text: the paths written `crate::…`, `super::…` and `self::…`, in `use`
//! trees and in code, each resolved to the file of the module it names (following
//! `pub use` re-exports). That gives file-to-file edges, with these left out:
//! - code under `#[cfg(test)]` (a test may build its fixtures from any module);
//! - a module naming its own submodules (declaring, re-exporting and dispatching to its
//!   children is the module tree, not an import);
//! - bare paths (`child::x`, external crates).
//!
//! The circles are the strongly connected components of that graph (Tarjan); an upward
//! import is an edge to a module whose layer is above its own.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The layers, lowest first. A module belongs to the longest entry matching its file
/// (`measure/speed.rs` before `measure`); every module must belong to one. A module
/// may import from its own layer and those below it, never from one above.
const LAYERS: &[(&str, &[&str])] = &[
    (
        "base: errors, output, bounded reads, units, the finding type",
        &[
            "error",
            "stdout",
            "bounded",
            "duration",
            "redact",
            "repeated",
            "json_text",
            "knob",
            "safe_file",
            "interrupt",
            "deadline",
            "lock",
            "units",
            "parallel",
            "finding",
        ],
    ),
    (
        "measuring primitives: batches, clocks, statistics, perf_event",
        &["measure"],
    ),
    ("probe: the machine as data", &["probe"]),
    ("plan: placements", &["placement"]),
    (
        "observe: readers of the kernel beside a run",
        &["observe", "descendants", "watchdog"],
    ),
    (
        "workloads and their execution policies",
        &["policy", "loadstep"],
    ),
    ("the run document", &["result"]),
    ("analyze: finding rules over documents", &["findings"]),
    ("run: the benchmarks", &["bench"]),
    ("compare: runs against each other", &["compare"]),
    (
        "store: the results database, and which stored runs make a calibration",
        &["store"],
    ),
    (
        "fleet: several runs against a baseline, many hosts against the fleet",
        &["fleet"],
    ),
    (
        "present: tables, the HTML report, exports, predictions",
        &["trend", "report", "export", "predict"],
    ),
    (
        "the session: one path for every measuring command",
        &["session", "cleanup"],
    ),
    ("the command line", &["cli"]),
];

/// A module: its path from the crate root (`["bench", "memory", "latency"]`) and file.
struct Module {
    path: Vec<String>,
    file: PathBuf,
}

/// Where one file names another module: the target's path and the line.
struct Reference {
    target: Vec<String>,
    line: usize,
}

/// What one file says: its `mod x;` children, `pub use` re-exports (name -> absolute
/// path) and every module path it names.
#[derive(Default)]
struct Parsed {
    children: Vec<String>,
    reexports: BTreeMap<String, Vec<String>>,
    references: Vec<Reference>,
}

/// The source without comments, strings and character literals (each replaced by a
/// space, newlines kept so line numbers stay right).
fn strip(src: &str) -> String {
    let b = src.as_bytes();
    let mut out = String::with_capacity(src.len());
    let mut i = 0;
    let blank = |out: &mut String, s: &[u8]| {
        for &c in s {
            out.push(if c == b'\n' { '\n' } else { ' ' });
        }
    };
    let ident = |c: u8| c.is_ascii_alphanumeric() || c == b'_';
    while i < b.len() {
        let c = b[i];
        if b[i..].starts_with(b"//") {
            let end = src[i..].find('\n').map_or(b.len(), |k| i + k);
            blank(&mut out, &b[i..end]);
            i = end;
        } else if b[i..].starts_with(b"/*") {
            let (mut depth, start) = (0, i);
            while i < b.len() {
                if b[i..].starts_with(b"/*") {
                    depth += 1;
                    i += 2;
                } else if b[i..].starts_with(b"*/") {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    i += 1;
                }
            }
            blank(&mut out, &b[start..i]);
        } else if (c == b'r' || c == b'b')
            && (i == 0 || !ident(b[i - 1]))
            && raw_string(&b[i..]).is_some()
        {
            let len = raw_string(&b[i..]).unwrap();
            blank(&mut out, &b[i..i + len]);
            i += len;
        } else if c == b'"' {
            let start = i;
            i += 1;
            while i < b.len() && b[i] != b'"' {
                i += if b[i] == b'\\' { 2 } else { 1 };
            }
            i += 1;
            blank(&mut out, &b[start..i.min(b.len())]);
        } else if c == b'\'' {
            // A character literal ('x', '\n', '\u{..}'), or a lifetime (left as it is).
            let rest = &b[i + 1..];
            let len = if rest.first() == Some(&b'\\') {
                rest.iter().skip(1).position(|&c| c == b'\'').map(|k| k + 2)
            } else {
                let ch = src[i + 1..].chars().next().map_or(1, char::len_utf8);
                (rest.get(ch) == Some(&b'\'')).then_some(ch)
            };
            match len {
                Some(n) => {
                    blank(&mut out, &b[i..i + n + 2]);
                    i += n + 2;
                }
                None => {
                    out.push('\'');
                    i += 1;
                }
            }
        } else {
            let ch = src[i..].chars().next().unwrap();
            out.push(ch);
            i += ch.len_utf8();
        }
    }
    out
}

/// The length of a raw (byte) string literal starting here (`r"…"`, `br#"…"#`).
fn raw_string(b: &[u8]) -> Option<usize> {
    let mut i = usize::from(b.first() == Some(&b'b'));
    if b.get(i) != Some(&b'r') {
        return None;
    }
    i += 1;
    let hashes = b[i..].iter().take_while(|&&c| c == b'#').count();
    i += hashes;
    if b.get(i) != Some(&b'"') {
        return None;
    }
    let close: Vec<u8> = std::iter::once(b'"')
        .chain(std::iter::repeat_n(b'#', hashes))
        .collect();
    let end = b[i + 1..]
        .windows(close.len())
        .position(|w| w == close.as_slice())?;
    Some(i + 1 + end + close.len())
}

/// Tokens: identifiers (with `$` kept on `$crate`), `::` and single punctuation, each
/// with its line.
fn tokens(src: &str) -> Vec<(String, usize)> {
    let mut out = Vec::new();
    let mut line = 1;
    let mut chars = src.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        if c == '\n' {
            line += 1;
        } else if c.is_alphanumeric() || c == '_' || c == '$' {
            let mut end = i + c.len_utf8();
            while let Some(&(j, d)) = chars.peek() {
                if !(d.is_alphanumeric() || d == '_') {
                    break;
                }
                end = j + d.len_utf8();
                chars.next();
            }
            out.push((src[i..end].to_string(), line));
        } else if c == ':' && chars.peek().map(|&(_, d)| d) == Some(':') {
            chars.next();
            out.push(("::".to_string(), line));
        } else if !c.is_whitespace() {
            out.push((c.to_string(), line));
        }
    }
    out
}

/// Expands the use tree starting at `toks[*i]` (after `use`) into full paths, each with
/// the name it binds (`None` for a glob) and its line.
fn use_tree(
    toks: &[(String, usize)],
    i: &mut usize,
    prefix: &[String],
    out: &mut Vec<(Vec<String>, Option<String>, usize)>,
) {
    let mut path = prefix.to_vec();
    let line = toks.get(*i).map_or(0, |t| t.1);
    loop {
        let Some((t, _)) = toks.get(*i) else { return };
        match t.as_str() {
            "::" => *i += 1,
            "{" => {
                *i += 1;
                loop {
                    match toks.get(*i).map(|t| t.0.as_str()) {
                        Some("}") => {
                            *i += 1;
                            return;
                        }
                        Some(",") => *i += 1,
                        None => return,
                        Some(_) => use_tree(toks, i, &path, out),
                    }
                }
            }
            "*" => {
                *i += 1;
                out.push((path, None, line));
                return;
            }
            "," | "}" | ";" => {
                let name = path.last().cloned();
                if path.last().is_some_and(|s| s == "self") {
                    path.pop();
                    let name = path.last().cloned();
                    out.push((path, name, line));
                } else {
                    out.push((path, name, line));
                }
                return;
            }
            "as" => {
                *i += 1;
                let alias = toks.get(*i).map(|t| t.0.clone());
                *i += 1;
                if path.last().is_some_and(|s| s == "self") {
                    path.pop();
                }
                out.push((path, alias, line));
                return;
            }
            _ => {
                path.push(t.clone());
                *i += 1;
            }
        }
    }
}

/// Reads one file of module `module`; with `tests`, the code under `#[cfg(test)]` too.
fn parse(src: &str, module: &[String], tests: bool) -> Parsed {
    let toks = tokens(&strip(src));
    let mut parsed = Parsed::default();
    // Inline modules open around this point: (name, brace depth inside it).
    let mut inline: Vec<(String, usize)> = Vec::new();
    let mut depth = 0usize;
    let here = |inline: &[(String, usize)]| -> Vec<String> {
        module
            .iter()
            .cloned()
            .chain(inline.iter().map(|m| m.0.clone()))
            .collect()
    };
    let absolute = |p: &[String], inline: &[(String, usize)]| -> Option<Vec<String>> {
        let mut base = here(inline);
        match p.first().map(String::as_str) {
            Some("crate") => Some(p[1..].to_vec()),
            Some("self") => {
                base.extend_from_slice(&p[1..]);
                Some(base)
            }
            Some("super") => {
                let supers = p.iter().take_while(|s| *s == "super").count();
                base.truncate(base.len().checked_sub(supers)?);
                base.extend_from_slice(&p[supers..]);
                Some(base)
            }
            _ => None,
        }
    };
    let mut i = 0;
    while i < toks.len() {
        let t = toks[i].0.as_str();
        // `#[cfg(test)]`: skip the item it marks.
        if !tests && t == "#" && toks.len() > i + 6 {
            let attr: Vec<&str> = toks[i + 1..i + 7].iter().map(|t| t.0.as_str()).collect();
            if attr == ["[", "cfg", "(", "test", ")", "]"] {
                i += 7;
                let is_use = toks[i..]
                    .iter()
                    .find(|t| matches!(t.0.as_str(), "use" | "{" | ";"))
                    .is_some_and(|t| t.0 == "use");
                let mut d = 0usize;
                while i < toks.len() {
                    match toks[i].0.as_str() {
                        "{" => d += 1,
                        "}" => {
                            d -= 1;
                            if d == 0 && !is_use {
                                i += 1;
                                break;
                            }
                        }
                        ";" if d == 0 => {
                            i += 1;
                            break;
                        }
                        _ => {}
                    }
                    i += 1;
                }
                continue;
            }
        }
        match t {
            "{" => depth += 1,
            "}" => {
                if inline.last().is_some_and(|m| m.1 == depth) {
                    inline.pop();
                }
                depth -= 1;
            }
            "mod" if toks.get(i + 1).is_some() => {
                let name = toks[i + 1].0.clone();
                match toks.get(i + 2).map(|t| t.0.as_str()) {
                    Some(";") if inline.is_empty() => parsed.children.push(name),
                    Some("{") => {
                        depth += 1;
                        inline.push((name, depth));
                        i += 3;
                        continue;
                    }
                    _ => {}
                }
            }
            "use" => {
                let public = i > 0 && (toks[i - 1].0 == "pub" || toks[i - 1].0 == ")");
                i += 1;
                let mut paths = Vec::new();
                use_tree(&toks, &mut i, &[], &mut paths);
                for (p, name, line) in paths {
                    let Some(target) = absolute(&p, &inline) else {
                        continue;
                    };
                    if public && inline.is_empty() {
                        if let Some(name) = name {
                            parsed.reexports.insert(name, target.clone());
                        }
                    }
                    parsed.references.push(Reference { target, line });
                }
                continue;
            }
            "crate" | "super" | "self"
                if toks.get(i + 1).is_some_and(|t| t.0 == "::")
                    && (i == 0 || toks[i - 1].0 != "::") =>
            {
                let line = toks[i].1;
                let mut p = vec![t.to_string()];
                let mut j = i + 1;
                while toks.get(j).is_some_and(|t| t.0 == "::")
                    && toks.get(j + 1).is_some_and(|t| {
                        t.0.chars()
                            .next()
                            .is_some_and(|c| c.is_alphabetic() || c == '_')
                    })
                {
                    p.push(toks[j + 1].0.clone());
                    j += 2;
                }
                if let Some(target) = absolute(&p, &inline) {
                    parsed.references.push(Reference { target, line });
                }
                i = j;
                continue;
            }
            _ => {}
        }
        i += 1;
    }
    parsed
}

/// The library's modules, from src/lib.rs through `mod x;`, each with what it says.
fn modules(src: &Path, tests: bool) -> Vec<(Module, Parsed)> {
    let mut out = Vec::new();
    let mut todo = vec![(Vec::<String>::new(), src.join("lib.rs"))];
    while let Some((path, file)) = todo.pop() {
        let text =
            std::fs::read_to_string(&file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
        let parsed = parse(&text, &path, tests);
        let dir = match file.file_name().and_then(|n| n.to_str()) {
            Some("lib.rs" | "mod.rs") => file.parent().unwrap().to_path_buf(),
            _ => file.with_extension(""),
        };
        for child in &parsed.children {
            let flat = dir.join(format!("{child}.rs"));
            let file = if flat.exists() {
                flat
            } else {
                dir.join(child).join("mod.rs")
            };
            let mut p = path.clone();
            p.push(child.clone());
            todo.push((p, file));
        }
        out.push((Module { path, file }, parsed));
    }
    out.sort_by(|a, b| a.0.path.cmp(&b.0.path));
    out
}

/// The module a path lands in: the longest known prefix, following `pub use` re-exports
/// of the item named next.
fn resolve(
    mut target: Vec<String>,
    known: &BTreeMap<Vec<String>, usize>,
    parsed: &[(Module, Parsed)],
) -> Option<usize> {
    for _ in 0..8 {
        let (len, &m) = (0..=target.len())
            .rev()
            .find_map(|n| known.get(&target[..n]).map(|m| (n, m)))?;
        let next = target
            .get(len)
            .and_then(|name| parsed[m].1.reexports.get(name));
        match next {
            Some(to) if to.as_slice() != target.as_slice() => {
                let mut t = to.clone();
                t.extend_from_slice(&target[len + 1..]);
                target = t;
            }
            _ => return Some(m),
        }
    }
    None
}

/// The layer of a module's file (its path under src/): the longest entry of `LAYERS` that
/// is the file itself (`findings/mod.rs`), the file without `.rs` (`error`) or a folder
/// above it (`probe`).
fn layer(file: &str) -> Option<usize> {
    let mut best: Option<(usize, usize)> = None;
    for (rank, (_, entries)) in LAYERS.iter().enumerate() {
        for e in *entries {
            let matches = file == *e
                || file.strip_suffix(".rs") == Some(e)
                || file.starts_with(&format!("{e}/"));
            if matches && best.is_none_or(|(_, len)| e.len() > len) {
                best = Some((rank, e.len()));
            }
        }
    }
    best.map(|b| b.0)
}

/// Tarjan's strongly connected components with more than one member.
fn circles(edges: &[BTreeSet<usize>]) -> Vec<Vec<usize>> {
    struct State<'a> {
        edges: &'a [BTreeSet<usize>],
        index: Vec<Option<usize>>,
        low: Vec<usize>,
        stack: Vec<usize>,
        on_stack: Vec<bool>,
        next: usize,
        out: Vec<Vec<usize>>,
    }
    fn visit(s: &mut State, v: usize) {
        s.index[v] = Some(s.next);
        s.low[v] = s.next;
        s.next += 1;
        s.stack.push(v);
        s.on_stack[v] = true;
        for &w in s.edges[v].iter() {
            match s.index[w] {
                None => {
                    visit(s, w);
                    s.low[v] = s.low[v].min(s.low[w]);
                }
                Some(iw) if s.on_stack[w] => s.low[v] = s.low[v].min(iw),
                Some(_) => {}
            }
        }
        if Some(s.low[v]) == s.index[v] {
            let mut component = Vec::new();
            loop {
                let w = s.stack.pop().unwrap();
                s.on_stack[w] = false;
                component.push(w);
                if w == v {
                    break;
                }
            }
            if component.len() > 1 {
                component.sort();
                s.out.push(component);
            }
        }
    }
    let n = edges.len();
    let mut s = State {
        edges,
        index: vec![None; n],
        low: vec![0; n],
        stack: vec![],
        on_stack: vec![false; n],
        next: 0,
        out: vec![],
    };
    for v in 0..n {
        if s.index[v].is_none() {
            visit(&mut s, v);
        }
    }
    s.out.sort();
    s.out
}

/// The file-to-file edges: for each module, the modules it imports with the first line.
fn graph(parsed: &[(Module, Parsed)]) -> Vec<BTreeMap<usize, usize>> {
    let known: BTreeMap<Vec<String>, usize> = parsed
        .iter()
        .enumerate()
        .map(|(i, (m, _))| (m.path.clone(), i))
        .collect();
    let mut edges = vec![BTreeMap::new(); parsed.len()];
    for (from, (module, p)) in parsed.iter().enumerate() {
        for r in &p.references {
            let Some(to) = resolve(r.target.clone(), &known, parsed) else {
                continue;
            };
            let own_descendant = parsed[to].0.path.starts_with(&module.path);
            if to != from && !own_descendant {
                edges[from].entry(to).or_insert(r.line);
            }
        }
    }
    edges
}

fn name(m: &Module) -> String {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    m.file
        .strip_prefix(&src)
        .unwrap_or(&m.file)
        .display()
        .to_string()
}

/// The circles of a graph, each written as its links (`a.rs:12 -> b.rs`).
fn circle_problems(parsed: &[(Module, Parsed)], edges: &[BTreeMap<usize, usize>]) -> Vec<String> {
    let sets: Vec<BTreeSet<usize>> = edges.iter().map(|e| e.keys().copied().collect()).collect();
    let mut problems = Vec::new();
    for circle in circles(&sets) {
        let members: BTreeSet<usize> = circle.iter().copied().collect();
        let links: Vec<String> = circle
            .iter()
            .flat_map(|&a| {
                edges[a]
                    .iter()
                    .filter(|(b, _)| members.contains(b))
                    .map(move |(&b, line)| {
                        format!("{}:{line} -> {}", name(&parsed[a].0), name(&parsed[b].0))
                    })
            })
            .collect();
        problems.push(format!("import circle: {}", links.join(", ")));
    }
    problems
}

#[test]
fn no_import_circle_and_no_upward_import() {
    let parsed = modules(&Path::new(env!("CARGO_MANIFEST_DIR")).join("src"), false);
    assert!(parsed.len() > 100, "read only {} modules", parsed.len());
    let edges = graph(&parsed);
    let mut problems = Vec::new();
    for (m, _) in &parsed {
        if !m.path.is_empty() && layer(&name(m)).is_none() {
            problems.push(format!(
                "{} is in no layer of LAYERS (tests/layers.rs)",
                name(m)
            ));
        }
    }
    problems.extend(circle_problems(&parsed, &edges));
    for (from, e) in edges.iter().enumerate() {
        let Some(lf) = layer(&name(&parsed[from].0)) else {
            continue;
        };
        for (&to, line) in e {
            let Some(lt) = layer(&name(&parsed[to].0)) else {
                continue;
            };
            if lt > lf {
                problems.push(format!(
                    "upward import: {}:{line} ({}) -> {} ({})",
                    name(&parsed[from].0),
                    LAYERS[lf].0,
                    name(&parsed[to].0),
                    LAYERS[lt].0
                ));
            }
        }
    }
    assert!(
        problems.is_empty(),
        "{} problem(s):\n{}",
        problems.len(),
        problems.join("\n")
    );
}

/// No import circle either when the code under `#[cfg(test)]` is read too: a test's
/// fixtures come from its own layer or one below, or from a test module of their own.
#[test]
fn no_import_circle_in_test_code() {
    let parsed = modules(&Path::new(env!("CARGO_MANIFEST_DIR")).join("src"), true);
    let problems = circle_problems(&parsed, &graph(&parsed));
    assert!(
        problems.is_empty(),
        "{} circle(s) with test code:\n{}",
        problems.len(),
        problems.join("\n")
    );
}

/// The reader on a file written for it: use trees, re-exports, inline and test modules,
/// comments and strings.
#[test]
fn reader_finds_the_paths_a_file_names() {
    let src = r##"
//! crate::doc::comment is not a path
use super::sibling::{self, Thing as Other, deep::{A, B}};
use crate::a::b::*;
pub use crate::re::Exported;
pub(crate) use inner::Item;
mod child;
fn f() {
    let s = "crate::in::string";
    let c = '"';
    crate::inline::call();
    let _ = super::super::up::X;
}
mod inner {
    use super::Local;
}
#[cfg(test)]
mod tests {
    use crate::only::in_tests;
}
#[cfg(test)]
use crate::test::import;
"##;
    let module = vec!["m".to_string(), "n".to_string()];
    let p = parse(src, &module, false);
    let targets: Vec<String> = p.references.iter().map(|r| r.target.join("::")).collect();
    assert_eq!(
        targets,
        [
            "m::sibling",
            "m::sibling::Thing",
            "m::sibling::deep::A",
            "m::sibling::deep::B",
            "a::b",
            "re::Exported",
            "inline::call",
            "up::X",
            "m::n::Local"
        ]
    );
    assert_eq!(p.children, ["child"]);
    assert_eq!(
        p.reexports.get("Exported").map(|t| t.join("::")).as_deref(),
        Some("re::Exported")
    );
    assert_eq!(p.references[6].line, 11);
}

/// Tarjan on a small graph: one circle of three, one of two, a tail outside both.
#[test]
fn circles_are_the_strongly_connected_components() {
    let edges: Vec<BTreeSet<usize>> = [&[1][..], &[2], &[0, 3], &[4], &[3], &[0]]
        .iter()
        .map(|e| e.iter().copied().collect())
        .collect();
    assert_eq!(circles(&edges), [vec![0, 1, 2], vec![3, 4]]);
}

/// The upward imports docs/architecture.md names: each `a.rs -> b.rs` in backticks in its
/// section "Upward imports".
fn named_upward_imports(doc: &str) -> Vec<String> {
    let section = doc
        .split("\n### Upward imports\n")
        .nth(1)
        .expect("docs/architecture.md has a section \"Upward imports\"");
    let section = section.split("\n#").next().unwrap_or(section);
    section
        .split('`')
        .skip(1)
        .step_by(2)
        .filter(|s| s.contains(" -> "))
        .map(|s| format!("`{s}`"))
        .collect()
}

/// How many upward imports test code may keep, at most: the three named in
/// docs/architecture.md (issue 48 counted 23, then 8).
const MOST_UPWARD_IN_TESTS: usize = 3;

/// The upward imports of test code (`#[cfg(test)]`, left out above: a test may build its
/// fixtures from any module): at most `MOST_UPWARD_IN_TESTS`, each one named in
/// docs/architecture.md ("Upward imports"), and every one named there still there.
#[test]
fn upward_imports_of_test_code_are_few_and_named() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let parsed = modules(&root.join("src"), true);
    let doc = std::fs::read_to_string(root.join("docs/architecture.md")).unwrap();
    let mut upward = Vec::new();
    for (from, e) in graph(&parsed).iter().enumerate() {
        let Some(lf) = layer(&name(&parsed[from].0)) else {
            continue;
        };
        for &to in e.keys() {
            if layer(&name(&parsed[to].0)).is_some_and(|lt| lt > lf) {
                upward.push(format!(
                    "`{} -> {}`",
                    name(&parsed[from].0),
                    name(&parsed[to].0)
                ));
            }
        }
    }
    assert!(
        upward.len() <= MOST_UPWARD_IN_TESTS,
        "{} upward imports: {upward:?}",
        upward.len()
    );
    let named = named_upward_imports(&doc);
    let unnamed: Vec<&String> = upward.iter().filter(|u| !named.contains(u)).collect();
    assert!(
        unnamed.is_empty(),
        "upward imports not named in docs/architecture.md: {unnamed:?}"
    );
    let stale: Vec<&String> = named.iter().filter(|n| !upward.contains(n)).collect();
    assert!(
        stale.is_empty(),
        "docs/architecture.md names upward imports that are no longer there: {stale:?}"
    );
}

/// The names are read from their section only, in backticks, each one `a -> b`.
#[test]
fn the_named_upward_imports_are_read_from_their_section() {
    let doc = "## Layers\n`x.rs -> y.rs` elsewhere\n### Upward imports\n\nText `code`:\n\
               - `a.rs -> b.rs`: why.\n- `c/d.rs -> e.rs`\n## Next\n`f.rs -> g.rs`\n";
    assert_eq!(
        named_upward_imports(doc),
        ["`a.rs -> b.rs`", "`c/d.rs -> e.rs`"]
    );
}

/// The folder (top-level module) of a file under src/: `measure/speed.rs` -> `measure`,
/// `units.rs` -> `units`.
fn folder(file: &str) -> &str {
    let first = file.split('/').next().unwrap_or(file);
    first.strip_suffix(".rs").unwrap_or(first)
}

/// The folder-level imports that run up: a file of one folder importing a file of another
/// whose folder's own layer (`layer` of the folder's name) is above it. A file placed in
/// another layer than its folder's (`measure/speed.rs`) makes its folder import upward.
fn folder_upward_imports(parsed: &[(Module, Parsed)]) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for (from, e) in graph(parsed).iter().enumerate() {
        let a = name(&parsed[from].0);
        for &to in e.keys() {
            let b = name(&parsed[to].0);
            let (fa, fb) = (folder(&a), folder(&b));
            if fa == fb {
                continue;
            }
            if let (Some(la), Some(lb)) = (layer(fa), layer(fb)) {
                if lb > la {
                    out.insert(format!("`{fa}/ -> {fb}/`"));
                }
            }
        }
    }
    out
}

/// How many folder-level imports may run up, at most (7 before issue 60 moved the files
/// placed outside their folder's layer, none after).
const MOST_FOLDER_UPWARD: usize = 7;

/// Folders sit in one layer: at most `MOST_FOLDER_UPWARD` folder-level imports run up,
/// each one named in docs/architecture.md ("Folders that import upward"), and every one
/// named there still there.
#[test]
fn folder_level_upward_imports_are_few_and_named() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let parsed = modules(&root.join("src"), false);
    let upward = folder_upward_imports(&parsed);
    let doc = std::fs::read_to_string(root.join("docs/architecture.md")).unwrap();
    let section = doc
        .split("\n### Folders that import upward\n")
        .nth(1)
        .expect("docs/architecture.md has a section \"Folders that import upward\"");
    let section = section.split("\n#").next().unwrap_or(section);
    let named: BTreeSet<String> = section
        .split('`')
        .skip(1)
        .step_by(2)
        .filter(|s| s.contains(" -> "))
        .map(|s| format!("`{s}`"))
        .collect();
    let unnamed: Vec<&String> = upward.difference(&named).collect();
    let stale: Vec<&String> = named.difference(&upward).collect();
    assert!(
        upward.len() <= MOST_FOLDER_UPWARD && unnamed.is_empty() && stale.is_empty(),
        "{} folder-level upward imports (at most {MOST_FOLDER_UPWARD}): {upward:?}; not named in docs/architecture.md: {unnamed:?}; named there but gone: {stale:?}",
        upward.len()
    );
}
