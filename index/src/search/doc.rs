//! What retrieval reads of a description: names (columns, keys, sheets, tables, arrays,
//! members), values worth matching (categories), and the text.

use crate::analyze::{ColumnProfile, ColumnType, Content, Description};

/// Names a description exposes, in order, without duplicates: column names, sheet and
/// table names, JSON key names (the last segment of each path), array names.
pub fn names(d: &Description) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut push = |s: &str| {
        let s = s.trim();
        if !s.is_empty() && !out.iter().any(|x| x == s) {
            out.push(s.to_string());
        }
    };
    match &d.content {
        Content::Table(t) => t.columns.iter().for_each(|c| push(&c.name)),
        Content::Tables(ts) => {
            for t in &ts.tables {
                push(&t.name);
                t.columns.iter().for_each(|c| push(&c.name));
            }
        }
        Content::Json(j) => {
            for p in &j.paths {
                let last = p.path.rsplit('.').next().unwrap_or(&p.path);
                push(last.trim_end_matches("[]").trim_start_matches('@'));
            }
        }
        Content::Arrays(a) => {
            a.arrays.iter().for_each(|x| push(&x.name));
            a.dimensions.iter().for_each(|(n, _)| push(n));
        }
        Content::Archive(a) => {
            for (member, inner) in &a.described {
                push(member);
                for n in names(inner) {
                    push(&n);
                }
            }
        }
        Content::Text(t) => t
            .tables
            .iter()
            .flat_map(|x| &x.columns)
            .for_each(|c| push(c)),
        Content::Media(_) | Content::Opaque(_) => {}
    }
    out
}

fn column_values(c: &ColumnProfile, out: &mut Vec<String>) {
    if matches!(c.kind, ColumnType::Categorical | ColumnType::Boolean) {
        out.extend(c.top.iter().map(|(v, _)| v.clone()));
    } else if matches!(c.kind, ColumnType::Text | ColumnType::Identifier) {
        out.extend(c.examples.iter().cloned());
    }
}

/// The categories of a description's categorical columns (their most frequent values):
/// what a question names when it says "in the Americas region" or "for diesel cars".
pub fn categories(d: &Description) -> Vec<String> {
    let mut out: Vec<String> = d
        .content
        .profiled_columns()
        .map(|(_, c)| c)
        .filter(|c| c.kind == ColumnType::Categorical)
        .flat_map(|c| c.top.iter().map(|(v, _)| v.trim().to_string()))
        .filter(|v| !v.is_empty())
        .collect();
    out.sort();
    out.dedup();
    out
}

/// The categories that make up at least half of their column's values (a file of one
/// incident: its `incident` column is all `Camp Fire`): values that say what the file
/// is about, not merely that it holds them.
pub fn dominant_categories(d: &Description) -> Vec<String> {
    d.content
        .profiled_columns()
        .filter(|(_, c)| c.kind == ColumnType::Categorical)
        .flat_map(|(rows, c)| {
            let filled = rows.saturating_sub(c.nulls).max(1);
            c.top
                .iter()
                .filter(move |(_, n)| n * 2 >= filled)
                .map(|(v, _)| v.trim().to_string())
        })
        .filter(|v| !v.is_empty())
        .collect()
}

/// Values worth matching a question against: categories and text examples.
pub fn values(d: &Description) -> Vec<String> {
    let mut out = Vec::new();
    match &d.content {
        Content::Table(t) => t.columns.iter().for_each(|c| column_values(c, &mut out)),
        Content::Tables(ts) => ts
            .tables
            .iter()
            .flat_map(|t| &t.columns)
            .for_each(|c| column_values(c, &mut out)),
        Content::Json(j) => {
            for p in j
                .paths
                .iter()
                .filter(|p| p.distinct_exact && p.distinct <= 50)
            {
                out.extend(p.examples.iter().map(|e| e.trim_matches('"').to_string()));
            }
        }
        Content::Text(t) => out.extend(t.definitions.iter().cloned()),
        Content::Archive(_) | Content::Arrays(_) | Content::Media(_) | Content::Opaque(_) => {}
    }
    out.retain(|v| !v.is_empty());
    out
}

/// The words a description is about, without the statistics vocabulary of its rendering
/// ("mean", "distinct", "null" appear in every table's description and would make every
/// question about a mean match every table): names, values, notes, outline, excerpt.
pub fn semantic_text(d: &Description) -> String {
    let mut parts: Vec<String> = Vec::new();
    let names = names(d);
    if !names.is_empty() {
        parts.push(names.join(", "));
    }
    let values = values(d);
    if !values.is_empty() {
        parts.push(values.join(", "));
    }
    match &d.content {
        Content::Tables(ts) => {
            parts.extend(ts.notes.iter().cloned());
            parts.extend(ts.tables.iter().flat_map(|t| t.notes.iter().cloned()));
        }
        Content::Table(t) => parts.extend(t.preamble.iter().chain(&t.footer).cloned()),
        Content::Json(j) => parts.extend(j.notes.iter().cloned()),
        Content::Text(t) => {
            parts.extend(t.outline.iter().map(|h| h.text.clone()));
            parts.extend(t.terms.iter().map(|(w, _)| w.clone()));
            parts.push(t.excerpt.clone());
        }
        Content::Media(m) => {
            parts.extend(m.title.iter().cloned());
            parts.extend(m.outline.iter().cloned());
        }
        Content::Archive(a) => {
            for (_, inner) in &a.described {
                parts.push(semantic_text(inner));
            }
        }
        Content::Arrays(a) => parts.extend(
            a.arrays
                .iter()
                .flat_map(|x| x.attrs.iter().map(|(_, v)| v.clone())),
        ),
        Content::Opaque(o) => parts.push(o.detected.clone()),
    }
    parts.retain(|p| !p.trim().is_empty());
    parts.join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analyze::{describe, Source};

    #[test]
    fn dominant_categories_make_up_half_their_column() {
        let mut csv = String::from("incident,cause,day\n");
        for (i, cause) in ["lightning", "arson", "lightning", "campfire", "arson"]
            .iter()
            .enumerate()
        {
            csv.push_str(&format!("Camp Fire,{cause},2018-11-0{}\n", i + 1));
        }
        let d = describe(&Source::from_bytes("f.csv", csv.into_bytes()));
        assert_eq!(dominant_categories(&d), ["Camp Fire"]);
    }

    #[test]
    fn names_and_values_of_a_table_and_a_document() {
        let csv =
            "region,amount,note\nemea,1,first one\napac,2,second one\nemea,3,third\nemea,4,x\n";
        let d = describe(&Source::from_bytes("t.csv", csv.as_bytes().to_vec()));
        assert_eq!(names(&d), ["region", "amount", "note"]);
        assert!(values(&d).contains(&"emea".to_string()));
        let d = describe(&Source::from_bytes(
            "t.json",
            br#"[{"card_scheme":"NexPay","aci":["A"]}]"#.to_vec(),
        ));
        assert_eq!(names(&d), ["card_scheme", "aci"]);
        assert!(values(&d).contains(&"NexPay".to_string()));
    }
}
