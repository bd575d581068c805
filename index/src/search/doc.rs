//! What retrieval reads of a description: names (columns, keys, sheets, tables, arrays,
//! members), values worth matching (categories), and the text.

use crate::analyze::{ColumnProfile, ColumnType, Content, Description};

// Defined with the ranking record that stores them (the catalog, below search, derives
// it when it stores a description).
pub use crate::analyze::record::{categories, dominant_categories, names};

fn column_values(c: &ColumnProfile, out: &mut Vec<String>) {
    if matches!(c.kind, ColumnType::Categorical | ColumnType::Boolean) {
        out.extend(c.top.iter().map(|(v, _)| v.clone()));
    } else if matches!(c.kind, ColumnType::Text | ColumnType::Identifier) {
        out.extend(c.examples.iter().cloned());
    }
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
