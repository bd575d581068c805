//! `run.ipynb`: the run as a Jupyter notebook (nbformat 4.5), so that a person can open
//! it, read the plan next to the code and rerun it.
//!
//! Written as JSON by hand: the format is a small documented schema and no maintained
//! Rust crate writes it.

use serde_json::{json, Value};

/// What the notebook shows.
pub struct NotebookInput<'a> {
    /// The question asked.
    pub question: &'a str,
    /// The data files (absolute paths).
    pub files: &'a [String],
    /// The plan steps, in order.
    pub plan: &'a [String],
    /// The script implementing the plan, and its output.
    pub solution: Option<(&'a str, &'a str)>,
    /// The final script, and its output (the answer).
    pub final_script: Option<(&'a str, &'a str)>,
}

/// Source text as nbformat stores it: a list of lines, each keeping its newline.
fn lines(text: &str) -> Value {
    let mut out: Vec<String> = text.split_inclusive('\n').map(str::to_string).collect();
    if out.is_empty() {
        out.push(String::new());
    }
    json!(out)
}

fn markdown(id: usize, text: &str) -> Value {
    json!({"cell_type": "markdown", "id": format!("cell-{id}"), "metadata": {}, "source": lines(text)})
}

fn code(id: usize, count: usize, source: &str, output: &str) -> Value {
    let outputs = if output.is_empty() {
        json!([])
    } else {
        json!([{"output_type": "stream", "name": "stdout", "text": lines(output)}])
    };
    json!({
        "cell_type": "code",
        "id": format!("cell-{id}"),
        "execution_count": count,
        "metadata": {},
        "outputs": outputs,
        "source": lines(source),
    })
}

/// The notebook document.
pub fn notebook(input: &NotebookInput) -> Value {
    let mut cells = Vec::new();
    let mut files = String::new();
    for f in input.files {
        files.push_str(&format!("- `{f}`\n"));
    }
    cells.push(markdown(
        cells.len(),
        &format!(
            "# {}\n\nAnswered by lakestar (DS-STAR loop) over:\n\n{files}",
            input.question.trim()
        ),
    ));
    for (i, step) in input.plan.iter().enumerate() {
        cells.push(markdown(
            cells.len(),
            &format!("## Step {}\n\n{}", i + 1, step.trim()),
        ));
    }
    let mut count = 0;
    if let Some((src, out)) = input.solution {
        count += 1;
        cells.push(markdown(
            cells.len(),
            "## The plan's code\n\nOne script implements every step above; its output follows.",
        ));
        cells.push(code(cells.len(), count, src, out));
    }
    if let Some((src, out)) = input.final_script {
        count += 1;
        cells.push(markdown(
            cells.len(),
            "## Final answer\n\nThe finalyzer's script: its output is the answer.",
        ));
        cells.push(code(cells.len(), count, src, out));
    }
    json!({
        "cells": cells,
        "metadata": {
            "kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"},
            "language_info": {"name": "python"}
        },
        "nbformat": 4,
        "nbformat_minor": 5
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn notebook_has_a_cell_per_step_and_the_code_with_output() {
        let files = vec!["/lake/a.csv".to_string()];
        let plan = vec!["Load a.csv".to_string(), "Average x".to_string()];
        let nb = notebook(&NotebookInput {
            question: "Mean of x?",
            files: &files,
            plan: &plan,
            solution: Some(("import pandas\nprint(1)\n", "1\n")),
            final_script: Some(("print(1)", "1\n")),
        });
        assert_eq!(nb["nbformat"], 4);
        let cells = nb["cells"].as_array().unwrap();
        let md: Vec<_> = cells
            .iter()
            .filter(|c| c["cell_type"] == "markdown")
            .collect();
        assert!(md[1]["source"][0]
            .as_str()
            .unwrap()
            .starts_with("## Step 1"));
        assert!(md[2]["source"][0]
            .as_str()
            .unwrap()
            .starts_with("## Step 2"));
        let code: Vec<_> = cells.iter().filter(|c| c["cell_type"] == "code").collect();
        assert_eq!(code.len(), 2);
        assert_eq!(code[0]["source"], json!(["import pandas\n", "print(1)\n"]));
        assert_eq!(code[0]["outputs"][0]["text"], json!(["1\n"]));
        let ids: std::collections::HashSet<_> =
            cells.iter().map(|c| c["id"].as_str().unwrap()).collect();
        assert_eq!(ids.len(), cells.len(), "cell ids are unique");
    }
}
