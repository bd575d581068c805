//! The blocks of text the loop's prompts show: requested quantities, what is missing,
//! the numbered plan, a script's observed output.

use crate::agent::answer::Quantity;
use crate::agent::sandbox::Execution;

/// The `{{quantities}}` block: what the question asks for, one per line; `tagged` when
/// the answer is written in the `@name[value]` form.
pub(in crate::agent) fn quantities_text(quantities: &[Quantity], tagged: bool) -> String {
    if quantities.is_empty() {
        return "(none named explicitly: read them from the question, and give each with `answer(\"<short name>\", value)`)".into();
    }
    quantities
        .iter()
        .map(|q| {
            if q.formatted && tagged {
                format!(
                    "- {}: `answer({:?}, value)` (answered as @{}[value])",
                    q.name, q.name, q.name
                )
            } else if q.formatted {
                format!("- {}: `answer({:?}, value)`", q.name, q.name)
            } else {
                format!("- the {}: `answer({:?}, value)`", q.name, q.name)
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The `{{constraints}}` block of the verifier: the question's constraints, numbered.
pub(super) fn constraints_text(constraints: &[String]) -> String {
    if constraints.is_empty() {
        return "(none beyond the question itself)".into();
    }
    numbered(constraints)
}

/// The `{{missing}}` block of the router and the next-step planner: the quantities the
/// output lacks, the constraints the verifier found not applied, or that the script failed.
pub(super) fn missing_text(lacking: &[String], unapplied: &[&str], ran_ok: bool) -> String {
    if lacking.is_empty() && !unapplied.is_empty() && ran_ok {
        return format!(
            "The verifier found these constraints of the question not applied by the script: {}. The plan must apply each.",
            unapplied
                .iter()
                .map(|c| format!("\"{c}\""))
                .collect::<Vec<_>>()
                .join("; ")
        );
    }
    if !lacking.is_empty() {
        format!(
            "No value was given for: {}. The plan must compute each, print it with its name as a label (`name: value`) and give it with `answer(\"name\", value)`, the value a plain number or word (`float(...)`), not a result object or a Series. A value of nan counts as missing: it comes from an empty selection or missing values.",
            lacking.join(", ")
        )
    } else if !ran_ok {
        "The script failed (its error is in the output above).".into()
    } else {
        "The verifier judged the output not yet sufficient to answer the question.".into()
    }
}

/// Steps numbered from 1, one per line.
pub fn numbered(plan: &[String]) -> String {
    plan.iter()
        .enumerate()
        .map(|(i, s)| format!("{}. {}", i + 1, s))
        .collect::<Vec<_>>()
        .join("\n")
}

/// What a script showed, as the LLM reads it: stdout, then stderr when it holds anything
/// (warnings of a successful run, the traceback of a failed one).
pub fn observation(exec: &Execution) -> String {
    let mut s = exec.stdout.trim_end().to_string();
    let err = exec.stderr.trim_end();
    if !err.is_empty() {
        if !s.is_empty() {
            s.push_str("\n\n");
        }
        if exec.success() {
            s.push_str("[stderr]\n");
        } else {
            s.push_str("[the script failed]\n");
        }
        s.push_str(err);
    }
    if let Some(limit) = &exec.limit_hit {
        s.push_str(&format!("\n[stopped: {limit}]"));
    }
    if !exec.answers.is_empty() {
        if !s.is_empty() {
            s.push_str("\n\n");
        }
        s.push_str("[values given with answer()]");
        for a in &exec.answers {
            let mut v = a.value.to_string();
            if v.chars().count() > ANSWER_SHOWN_CHARS {
                v = v.chars().take(ANSWER_SHOWN_CHARS).collect::<String>() + " […]";
            }
            s.push_str(&format!("\n{} = {v}", a.name));
        }
    }
    if s.is_empty() {
        s = "(no output)".into();
    }
    s
}

/// Characters of one answer-API value an observation shows at most (a table is cut).
const ANSWER_SHOWN_CHARS: usize = 400;

/// Missing quantities one step asks for at most.
pub(super) const MAX_DUE: usize = 4;

/// The step asking for the quantities `due` (the first [`MAX_DUE`]), which the output
/// lacks and the planner's own step did not compute. All of them in one step: asked one
/// at a time, a four-value question uses four of five rounds.
pub(super) fn due_step(due: &[Quantity]) -> String {
    let due = &due[..due.len().min(MAX_DUE)];
    let named = |q: &Quantity| {
        let meaning = q
            .meaning
            .as_deref()
            .map(|m| format!(" ({m})"))
            .unwrap_or_default();
        format!("{}{meaning}", q.name)
    };
    match due {
        [q] => format!(
            "Compute {} from the data, following every constraint of the question, print it labelled `{}: <value>` and give it with `answer({:?}, value)`.",
            named(q),
            q.name,
            q.name
        ),
        _ => {
            let names: Vec<String> = due.iter().map(named).collect();
            let labels: Vec<String> = due.iter().map(|q| format!("`{}: <value>`", q.name)).collect();
            let calls: Vec<String> = due
                .iter()
                .map(|q| format!("`answer({:?}, value)`", q.name))
                .collect();
            format!(
                "Compute {} from the data, following every constraint of the question, print each labelled with its name: {}, and give each with {}.",
                names.join(", "),
                labels.join(", "),
                calls.join(", ")
            )
        }
    }
}

/// Whether two plan steps say the same thing: the same words, case, punctuation and
/// quoting aside (`the \`Age\` column.` and `the Age column`).
pub(super) fn same_step(a: &str, b: &str) -> bool {
    let words = |s: &str| -> Vec<String> {
        s.split(|c: char| !c.is_alphanumeric() && c != '_')
            .filter(|w| !w.is_empty())
            .map(str::to_lowercase)
            .collect()
    };
    let (a, b) = (words(a), words(b));
    !a.is_empty() && a == b
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_due_step_asks_for_every_missing_quantity_at_once() {
        let qs = crate::agent::answer::requested_in(
            "x",
            "@mean_wind_pre[mean wind before] @mean_wind_post[value] @a[value] @b[value] @c[value]",
        );
        assert_eq!(
            due_step(&qs[..2]),
            "Compute mean_wind_pre (mean wind before), mean_wind_post from the data, following every constraint of the question, print each labelled with its name: `mean_wind_pre: <value>`, `mean_wind_post: <value>`, and give each with `answer(\"mean_wind_pre\", value)`, `answer(\"mean_wind_post\", value)`."
        );
        // At most MAX_DUE of them.
        assert!(!due_step(&qs).contains("`c: <value>`"));
        assert!(due_step(&qs[..1]).ends_with(
            "print it labelled `mean_wind_pre: <value>` and give it with `answer(\"mean_wind_pre\", value)`."
        ));
    }

    #[test]
    fn steps_are_numbered_from_one() {
        assert_eq!(numbered(&["a".into(), "b".into()]), "1. a\n2. b");
    }

    #[test]
    fn steps_that_differ_only_in_quoting_and_case_are_the_same() {
        assert!(same_step(
            "Load the `my_test_01.csv` file and compute the Shapiro-Wilk test for the `Age` column.",
            "load the my_test_01.csv file and compute the Shapiro-Wilk test for the Age column"
        ));
        assert!(!same_step(
            "Compute the mean of `Age`.",
            "Compute the median of `Age`."
        ));
        assert!(!same_step("", "  "));
    }
}
