//! `lakestar head`.

use super::describe::lookup;
use super::output::print_json;
use super::{IndexDirArg, UsageError};
use crate::service::rows::{self, rows, Rows, DEFAULT_ROWS};
use anyhow::Result;
use comfy_table::{presets, Table};
use std::path::PathBuf;

/// Characters of a cell shown in the text table; longer cells end in `…`.
const CELL_CHARS: usize = 40;

/// Arguments of `lakestar head`.
#[derive(Debug, clap::Args)]
pub(crate) struct HeadArgs {
    /// The file: relative to the lake root (or to the current directory), or absolute.
    path: PathBuf,
    /// Rows to show, 1 to 1000.
    #[arg(short = 'n', long = "rows", value_name = "N", default_value_t = DEFAULT_ROWS)]
    n: usize,
    /// The table or sheet, by name or by number (1-based, as listed) [default: the
    /// first with rows].
    #[arg(long, value_name = "NAME|N")]
    table: Option<String>,
    #[command(flatten)]
    index: IndexDirArg,
    /// Print {path, format, table, tables, columns, rows, n, more} as JSON.
    #[arg(long)]
    json: bool,
}

pub(crate) fn run(a: HeadArgs) -> Result<()> {
    let cwd = std::env::current_dir()?;
    let out = match lookup(&a.path, a.index.index.as_deref(), &cwd)? {
        // Known to an index: the lake's file, under its lake-relative path.
        Some((cat, lake, row)) => {
            let objects = cat.object_lake()?.map(std::sync::Arc::new);
            rows::indexed(&lake, objects.as_ref(), &row, a.table.as_deref(), a.n)?
        }
        None => {
            let file = cwd.join(&a.path);
            let refused = if file.is_dir() {
                Some("is a directory; head shows the rows of a file")
            } else if !file.is_file() {
                Some("is not a file (and no index lists it); give a path relative to the lake root or the current directory")
            } else {
                None
            };
            if let Some(why) = refused {
                return Err(UsageError(format!("{} {why}", a.path.display())).into());
            }
            rows(&file, &a.path.to_string_lossy(), a.table.as_deref(), a.n)?
        }
    };
    if a.json {
        return print_json(&out);
    }
    print!("{}", text(&out));
    Ok(())
}

/// The rows as an aligned table, with a line naming the table above and a line saying
/// whether more rows follow below.
fn text(r: &Rows) -> String {
    let mut s = format!("{} · {}", r.path, r.format);
    if r.tables.len() > 1 {
        let at = r.tables.iter().position(|t| *t == r.table).unwrap_or(0);
        s.push_str(&format!(
            " · {} {:?} ({} of {}; --table NAME or --table N picks another: {})",
            if r.format == "excel" {
                "sheet"
            } else {
                "table"
            },
            r.table,
            at + 1,
            r.tables.len(),
            r.tables
                .iter()
                .take(10)
                .enumerate()
                .map(|(i, t)| format!("{} {t:?}", i + 1))
                .collect::<Vec<_>>()
                .join(", ")
                + if r.tables.len() > 10 { ", …" } else { "" }
        ));
    }
    s.push('\n');
    let mut t = Table::new();
    t.load_style(presets::UTF8_FULL_CONDENSED);
    t.set_header(r.columns.iter().map(|c| cut(c)));
    for row in &r.rows {
        t.add_row(row.iter().map(|c| cut(c.as_deref().unwrap_or(""))));
    }
    s.push_str(&t.to_string());
    s.push('\n');
    if r.more {
        s.push_str(&format!(
            "… more rows follow ({} shown; -n N shows up to 1000)\n",
            r.rows.len()
        ));
    } else {
        let n = r.rows.len();
        s.push_str(&format!("{n} row{}\n", if n == 1 { "" } else { "s" }));
    }
    s
}

/// `c` on one line, cut to [`CELL_CHARS`].
fn cut(c: &str) -> String {
    let one: String = c.split_whitespace().collect::<Vec<_>>().join(" ");
    if one.chars().count() <= CELL_CHARS {
        one
    } else {
        let mut s: String = one.chars().take(CELL_CHARS - 1).collect();
        s.push('…');
        s
    }
}
