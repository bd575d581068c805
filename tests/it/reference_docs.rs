//! The reference pages: the generated parts of `docs/cli.md`, `docs/http.md` and
//! `docs/mcp.md` are what `lakestar docs PAGE` prints, and every relative link of the
//! README and of `docs/` leads to a file (and heading) that exists.

use crate::common::lakestar;
use std::path::{Path, PathBuf};

const PAGES: [&str; 3] = ["cli", "http", "mcp"];

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn generated(page: &str) -> String {
    let out = lakestar().args(["docs", page]).output().unwrap();
    assert!(
        out.status.success(),
        "lakestar docs {page}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// Where a page's generated part starts: its marker line (the output's first line).
fn generated_part<'a>(text: &'a str, page_output: &str) -> Option<&'a str> {
    let marker = format!("{}\n", page_output.lines().next()?);
    let at = text.find(&marker)?;
    (at == 0 || text[..at].ends_with('\n')).then(|| &text[at..])
}

#[test]
fn the_generated_pages_are_what_the_binary_prints() {
    for page in PAGES {
        let file = repo().join("docs").join(format!("{page}.md"));
        let text =
            std::fs::read_to_string(&file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
        let output = generated(page);
        let fix = format!("regenerate it: cargo run -- docs {page} --update docs/{page}.md");
        let Some(part) = generated_part(&text, &output) else {
            panic!(
                "docs/{page}.md lacks the line {:?}; {fix}",
                output.lines().next()
            );
        };
        if part != output {
            let (line, (want, got)) = output
                .lines()
                .zip(part.lines())
                .enumerate()
                .find(|(_, (a, b))| a != b)
                .unwrap_or((0, ("(a line count differs)", "")));
            panic!(
                "docs/{page}.md differs from `lakestar docs {page}` at line {} of the \
                 generated part:\n  binary: {want}\n  file:   {got}\n{fix}",
                line + 1
            );
        }
    }
}

#[test]
fn update_rewrites_the_generated_part_and_keeps_the_rest() {
    let tmp = tempfile::tempdir().unwrap();
    let page = tmp.path().join("mcp.md");
    let output = generated("mcp");
    let marker = output.lines().next().unwrap();
    let head = "# MCP\n\nWritten by hand.\n\n";
    std::fs::write(&page, format!("{head}{marker}\n\nstale tools\n")).unwrap();
    let out = lakestar()
        .args(["docs", "mcp", "--update"])
        .arg(&page)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        std::fs::read_to_string(&page).unwrap(),
        format!("{head}{output}")
    );

    // A page without the marker is refused rather than appended to.
    std::fs::write(&page, "# MCP\n\nno marker\n").unwrap();
    let out = lakestar()
        .args(["docs", "mcp", "--update"])
        .arg(&page)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("has no line"));
    assert_eq!(
        std::fs::read_to_string(&page).unwrap(),
        "# MCP\n\nno marker\n"
    );
}

// ---- links ---------------------------------------------------------------------------

/// The lines outside fenced code blocks.
fn unfenced(text: &str) -> impl Iterator<Item = &str> {
    let mut fenced = false;
    text.lines().filter(move |line| {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            return false;
        }
        !fenced
    })
}

/// The text outside fenced code blocks and code spans, line by line.
fn prose(text: &str) -> Vec<String> {
    let mut lines = Vec::new();
    for line in unfenced(text) {
        // Drop code spans: every other piece between backticks.
        let kept: String = line
            .split('`')
            .enumerate()
            .filter(|(i, _)| i % 2 == 0)
            .map(|(_, s)| s)
            .collect::<Vec<_>>()
            .join(" ");
        lines.push(kept);
    }
    lines
}

/// The targets of a Markdown text's links: `[text](target)`, `![alt](target)` and
/// `[label]: target`.
fn link_targets(text: &str) -> Vec<String> {
    let mut targets = Vec::new();
    for line in prose(text) {
        let trimmed = line.trim_start();
        if trimmed.starts_with('[') {
            if let Some((label, rest)) = trimmed.split_once("]:") {
                if !label.contains('(') {
                    if let Some(t) = rest.split_whitespace().next() {
                        targets.push(t.to_string());
                    }
                }
            }
        }
        let mut rest = line.as_str();
        while let Some(at) = rest.find("](") {
            rest = &rest[at + 2..];
            let end = rest.find(')').unwrap_or(rest.len());
            let target = rest[..end].split_whitespace().next().unwrap_or("");
            targets.push(target.trim_matches(['<', '>']).to_string());
            rest = &rest[end..];
        }
    }
    targets
}

/// GitHub's anchors of a Markdown text's headings (lower case, spaces to hyphens, other
/// punctuation dropped, `-1`, `-2` for repeats), and any `id="…"` of its HTML.
fn anchors(text: &str) -> Vec<String> {
    let mut seen: Vec<String> = Vec::new();
    for line in unfenced(text) {
        for attr in ["id=\"", "name=\""] {
            if let Some(at) = line.find(attr) {
                let v = &line[at + attr.len()..];
                seen.push(v[..v.find('"').unwrap_or(v.len())].to_string());
            }
        }
        let Some(heading) = line.strip_prefix('#') else {
            continue;
        };
        let heading = heading.trim_start_matches('#');
        if !heading.starts_with(' ') {
            continue;
        }
        let slug: String = heading
            .trim()
            .to_lowercase()
            .chars()
            .filter_map(|c| match c {
                ' ' => Some('-'),
                c if c.is_alphanumeric() || c == '-' || c == '_' => Some(c),
                _ => None,
            })
            .collect();
        let repeats = seen
            .iter()
            .filter(|s| {
                s.as_str() == slug
                    || s.strip_prefix(&slug)
                        .and_then(|r| r.strip_prefix('-'))
                        .is_some_and(|n| n.parse::<u32>().is_ok())
            })
            .count();
        seen.push(if repeats == 0 {
            slug
        } else {
            format!("{slug}-{repeats}")
        });
    }
    seen
}

/// The links of `file` that lead nowhere: to no file, or to no heading of a Markdown
/// file. Links with a scheme (`https:`, `mailto:`) are not followed.
fn broken_links(file: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(file).unwrap();
    let dir = file.parent().unwrap();
    let mut broken = Vec::new();
    for target in link_targets(&text) {
        if target.contains("://") || target.starts_with("mailto:") {
            continue;
        }
        let (path, fragment) = match target.split_once('#') {
            Some((p, f)) => (p, Some(f)),
            None => (target.as_str(), None),
        };
        let dest = if path.is_empty() {
            file.to_path_buf()
        } else {
            dir.join(path)
        };
        if !dest.exists() {
            broken.push(format!("{}: {target}: no such file", file.display()));
            continue;
        }
        if let Some(fragment) = fragment.filter(|_| dest.extension().is_some_and(|e| e == "md")) {
            let dest_text = std::fs::read_to_string(&dest).unwrap();
            if !anchors(&dest_text).iter().any(|a| a == fragment) {
                broken.push(format!(
                    "{}: {target}: no heading with the anchor #{fragment}",
                    file.display()
                ));
            }
        }
    }
    broken
}

/// The README and every Markdown page of `docs/`.
fn pages() -> Vec<PathBuf> {
    let mut files = vec![repo().join("README.md")];
    for entry in std::fs::read_dir(repo().join("docs")).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "md") {
            files.push(path);
        }
    }
    files.sort();
    files
}

#[test]
fn every_relative_link_of_the_readme_and_docs_leads_somewhere() {
    let broken: Vec<String> = pages().iter().flat_map(|f| broken_links(f)).collect();
    assert!(broken.is_empty(), "broken links:\n{}", broken.join("\n"));
}

#[test]
fn the_link_check_finds_a_missing_file_and_a_missing_heading() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    std::fs::create_dir(dir.join("docs")).unwrap();
    std::fs::write(
        dir.join("docs/agent.md"),
        "# The agent\n\n## Run directory\n\n## Run directory\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("README.md"),
        "See [the agent](docs/agent.md), [its runs](docs/agent.md#run-directory-1), \
         [the web](https://example.org/x.md) and `[code](nowhere.md)`.\n\
         ```\n[fenced](nowhere.md)\n```\n\
         Broken: [gone](docs/gone.md), [no heading](docs/agent.md#runs), [self](#nothing).\n\
         [ref]: ../outside-of-it.md\n",
    )
    .unwrap();
    let broken = broken_links(&dir.join("README.md"));
    let found: Vec<&str> = broken
        .iter()
        .map(|b| b.split(": ").nth(1).unwrap())
        .collect();
    assert_eq!(
        found,
        [
            "docs/gone.md",
            "docs/agent.md#runs",
            "#nothing",
            "../outside-of-it.md"
        ],
        "{broken:?}"
    );
}

// ---- environment variables -----------------------------------------------------------

/// The `.rs` files under `dir`, recursively.
fn rust_files(dir: &Path, into: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, into);
        } else if path.extension().is_some_and(|e| e == "rs") {
            into.push(path);
        }
    }
}

/// The string literals `"LAKESTAR_…"` and `"OPENAI_…"` of a source text.
fn variables_named(source: &str) -> Vec<String> {
    let mut names = Vec::new();
    for prefix in ["\"LAKESTAR_", "\"OPENAI_"] {
        for (at, _) in source.match_indices(prefix) {
            let rest = &source[at + 1..];
            let len = rest
                .find(|c: char| !(c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_'))
                .unwrap_or(rest.len());
            if rest[len..].starts_with('"') {
                names.push(rest[..len].to_string());
            }
        }
    }
    names
}

#[test]
fn the_configuration_page_names_every_variable_the_code_reads() {
    let mut files = Vec::new();
    rust_files(&repo().join("src"), &mut files);
    rust_files(&repo().join("index/src"), &mut files);
    let mut names: Vec<String> = files
        .iter()
        .flat_map(|f| variables_named(&std::fs::read_to_string(f).unwrap()))
        .collect();
    names.sort();
    names.dedup();
    assert!(
        names.len() > 20,
        "the scan found too few variables: {names:?}"
    );
    let page = std::fs::read_to_string(repo().join("docs/configuration.md")).unwrap();
    let missing: Vec<&String> = names
        .iter()
        .filter(|n| !page.contains(&format!("`{n}`")))
        .collect();
    assert!(
        missing.is_empty(),
        "docs/configuration.md does not name {missing:?}: add each to its tables"
    );
    assert_eq!(
        variables_named(r#"var("LAKESTAR_X1"); "LAKESTAR_lower"; "OPENAI_API_KEY""#),
        ["LAKESTAR_X1", "OPENAI_API_KEY"]
    );
}
