//! The `ask` tool: one agent run over the files retrieved for the question, recorded
//! in `INDEX/runs/ID`, with MCP progress notifications while it runs.

use super::tools::{in_range, AskParams};
use super::{blocking, tool_error, LakeServer, ToolResult};
use crate::agent::rules::RuleSet;
use crate::agent::{Agent, AgentError, Progress, Status};
use crate::service::ask::{self as service, AskRequest, Limits, Selection};
use rmcp::model::ProgressNotificationParam;
use rmcp::service::RequestContext;
use rmcp::RoleServer;
use serde_json::json;
use std::path::Path;

/// The CLI's message for a missing model, told where an MCP server's settings go.
fn not_configured(index_dir: &Path) -> String {
    format!(
        "no LLM is configured, so ask cannot run: set LAKESTAR_MODEL (and OPENAI_BASE_URL, OPENAI_API_KEY as your server needs) in the `env` of lakestar's entry in the MCP client's configuration, or `model` under [llm] in lakestar.toml (in the index directory {} or ~/.config/lakestar/), then restart the server. search_files and describe_file work without an LLM.",
        index_dir.display()
    )
}

/// Run the agent for `p`; `Err` is the tool error to return.
pub(super) async fn ask(
    server: &LakeServer,
    p: AskParams,
    context: RequestContext<RoleServer>,
) -> ToolResult {
    let opts = &server.options;
    // JSON integers may be negative: in range before they become counts.
    let k =
        p.k.map(|k| in_range("k", k, 1, service::MAX_FILES as i64))
            .transpose()?;
    let max_rounds = match p.max_rounds {
        None => opts.max_rounds,
        Some(n) => in_range("max_rounds", n, 0, service::MAX_ROUNDS as i64)?,
    };
    let rules = match &p.rules {
        Some(r) => r
            .parse::<RuleSet>()
            .map_err(|e| tool_error(format!("rules: {e}")))?,
        None => RuleSet::all(),
    };
    let (wanted, form) =
        service::answer_fields(p.answer_names.as_deref(), p.answer_form.as_deref())
            .map_err(tool_error)?;
    let request = AskRequest {
        question: p.question.trim().to_string(),
        guidelines: p.guidelines,
        wanted,
        form,
        selection: Selection::Retrieved {
            k,
            budget: Some(opts.budget.max(1)),
        },
        limits: Limits {
            max_rounds,
            debug_attempts: opts.debug_attempts,
            rules,
            ..Limits::default()
        },
    };
    request.validate().map_err(tool_error)?;

    let dir = server.lake.dir().to_path_buf();
    let lake = server.lake.clone();
    let setup = opts.agent.clone();
    let (agent, files, request) = blocking(move || {
        // Built per call: a lakestar.toml edited while the server runs takes effect.
        let agent = Agent::build(Some(&dir), &setup).map_err(|e| match e {
            AgentError::NotConfigured(_) => tool_error(not_configured(&dir)),
            e => tool_error(e),
        })?;
        if let Some(w) = agent.python_warning() {
            tracing::warn!("{w}");
        }
        // The served searcher: no second load of the embedder and the vector graph.
        let searcher = lake.searcher().map_err(tool_error)?;
        let (files, _) = request
            .files(Some(&dir), Some(&searcher), &dir, agent.prompts.methods())
            .map_err(tool_error)?;
        Ok((agent, files, request))
    })
    .await?;

    let run_dir = service::default_run_dir(Some(server.lake.dir()));
    tracing::info!(
        "ask {:?} over {} file(s); run {}",
        request.question,
        files.len(),
        run_dir.display()
    );

    // The agent reports progress through a plain callback; notifications are async, so
    // a task forwards them (and ends when the callback's sender is dropped).
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<String>();
    let token = context.meta.get_progress_token();
    let peer = context.peer.clone();
    let forward = tokio::spawn(async move {
        let mut n = 0u32;
        while let Some(line) = rx.recv().await {
            n += 1;
            tracing::info!("{line}");
            if let Some(token) = &token {
                let note =
                    ProgressNotificationParam::new(token.clone(), f64::from(n)).with_message(line);
                if let Err(e) = peer.notify_progress(note).await {
                    tracing::debug!("progress notification not sent: {e}");
                }
            }
        }
    });
    let progress = move |p: Progress| {
        let _ = tx.send(p.to_string());
    };
    let run = request.run(&agent, &files, Some(server.lake.dir()), &run_dir, &progress);
    // A cancelled request drops the run, and dropping it kills its running script.
    let outcome = tokio::select! {
        out = run => Some(out),
        _ = context.ct.cancelled() => None,
    };
    drop(progress);
    let _ = forward.await;
    let (summary, stopped) = match outcome {
        None => {
            return Err(tool_error(format!(
                "cancelled; the trace so far is in {}",
                run_dir.join("trace.jsonl").display()
            )))
        }
        Some(Err(e)) => return Err(tool_error(e)),
        Some(Ok(out)) => out,
    };
    if let Some(e) = stopped {
        return Err(tool_error(format!(
            "the run stopped: {e} (record in {})",
            summary.run_dir.display()
        )));
    }
    if summary.status == Status::NoAnswer || summary.answer.is_none() {
        return Err(tool_error(format!(
            "no answer: the final script failed or printed nothing (record in {})",
            summary.run_dir.display()
        )));
    }
    Ok(super::json_result(json!({
        "answer": summary.answer,
        "answers": summary.answers,
        "status": summary.status,
        "rounds": summary.rounds,
        "files": summary.files,
        "run_dir": summary.run_dir,
        "llm": {
            "calls": summary.llm.calls,
            "usage": summary.llm.usage,
            "cost": summary.llm.cost,
        },
        "duration_ms": summary.duration_ms,
    })))
}
