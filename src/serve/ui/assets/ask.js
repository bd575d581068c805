// Ask: POST /ask starts a run; its trace is followed live from /runs/{id}/events, then
// the answer is read from /runs/{id}. `?run=ID` shows a run again.
"use strict";

ui.start(async () => {
  const m = ui.main();
  ui.setTitle("Ask");
  const question = ui.el("textarea", { name: "question", id: "question", required: true,
    placeholder: "e.g. Which card scheme has the highest average fee?" });
  const guidelines = ui.el("input", { type: "text", name: "guidelines", id: "guidelines",
    placeholder: "optional, e.g. a number rounded to 2 decimals" });
  const files = ui.el("input", { type: "text", name: "files", id: "files",
    placeholder: "optional: lake paths, comma-separated (default: retrieved)" });
  const button = ui.el("button", { type: "submit", id: "ask-button" }, "Ask");
  const form = ui.el("form", { class: "panel", id: "ask-form" },
    ui.el("label", { class: "grow" }, "Question", question),
    ui.el("label", { class: "grow" }, "Answer format", guidelines),
    ui.el("label", { class: "grow" }, "Files", files),
    button);
  const run = ui.el("div", { id: "run" });
  m.append(ui.el("h1", {}, "Ask the lake"),
    ui.el("p", { class: "muted" }, "The agent plans, writes Python, runs it on the files and checks the output until the plan suffices; every step shows below as it happens."),
    form, run);

  form.addEventListener("submit", async (ev) => {
    ev.preventDefault();
    const body = { question: question.value };
    if (guidelines.value.trim()) body.guidelines = guidelines.value.trim();
    const pinned = files.value.split(",").map((s) => s.trim()).filter(Boolean);
    if (pinned.length) body.files = pinned;
    button.disabled = true;
    run.replaceChildren(ui.el("p", { class: "muted" }, "Starting…"));
    try {
      const started = await ui.api("/ask", body);
      history.replaceState(null, "", "/ui/ask?run=" + encodeURIComponent(started.id));
      follow(run, started.id, () => { button.disabled = false; });
    } catch (e) {
      run.replaceChildren(ui.errorBox(e));
      button.disabled = false;
    }
  });

  const id = ui.params().get("run");
  if (id) follow(run, id, () => {});

  // Without an LLM no run can start: say so, and how to configure one, before a
  // question is typed (runs already recorded are still shown).
  let ready;
  try {
    ready = await ui.api("/ask");
  } catch (_) {
    return; // An older server without GET /ask: POST /ask says it instead.
  }
  if (!ready.ready) {
    for (const c of [question, guidelines, files, button]) c.disabled = true;
    form.classList.add("disabled");
    form.before(ui.el("p", { class: "note-box", id: "no-llm" },
      "Asking is unavailable: ", ready.why || "no LLM is configured",
      ". A lakestar.toml counts at once (reload this page); environment variables once `lakestar serve` restarts with them."));
  }
});

// Show run `id` in `box`: its events as they come, then its outcome.
function follow(box, id, done) {
  const status = ui.el("p", { class: "live", id: "run-live" }, `Run ${id} in progress`);
  const answer = ui.el("div", { id: "answer-slot" });
  const trace = ui.el("ol", { class: "trace", id: "trace" });
  box.replaceChildren(status, answer, ui.el("h2", {}, "Trace"), trace);
  const es = new EventSource(`/runs/${encodeURIComponent(id)}/events`);
  let ended = false;
  const end = async () => {
    if (ended) return;
    ended = true;
    es.close();
    status.remove();
    await outcome(answer, id);
    done();
  };
  for (const kind of ["start", "note", "rule", "plan", "llm", "retry", "llm_failed", "exec", "verdict", "files", "route", "finish", "line"]) {
    es.addEventListener(kind, (ev) => {
      let data;
      try { data = JSON.parse(ev.data); } catch (_) { data = { text: ev.data }; }
      trace.append(event(kind, data));
      if (kind === "finish") end();
    });
  }
  // The stream ends by closing after `finish`, or early when the run stopped without
  // one: either way the run's state says the rest (and no reconnect replays it).
  es.onerror = () => end();
}

// The answer (or why there is none) from /runs/{id}.
async function outcome(slot, id) {
  let r;
  try {
    r = await ui.api(`/runs/${encodeURIComponent(id)}`);
  } catch (e) {
    slot.replaceChildren(ui.errorBox(e));
    return;
  }
  const s = r.summary || {};
  const failed = r.status !== "finished" || !s.answer;
  const box = ui.el("div", { class: "answer" + (failed ? " failed" : ""), id: "answer" },
    ui.el("div", { class: "muted small" }, failed ? `Run ${r.status}` : "Answer"),
    ui.el("div", { class: "text", id: "answer-text" }, s.answer || r.error || s.error || "no answer"));
  const facts = [];
  if (s.status) facts.push(String(s.status));
  if (s.rounds !== undefined) facts.push(`${s.rounds} round${s.rounds === 1 ? "" : "s"}`);
  if (s.duration_ms !== undefined) facts.push(`${(s.duration_ms / 1000).toFixed(1)} s`);
  if (s.llm && s.llm.calls !== undefined) facts.push(`${s.llm.calls} LLM calls`);
  if (s.answer_source) facts.push(`from ${String(s.answer_source).replace("_", " ")}`);
  const fired = Object.entries((s.rules && s.rules.fired) || {});
  if (fired.length) facts.push("rules " + fired.map(([r, n]) => `${r} ×${n}`).join(", "));
  if (facts.length) box.append(ui.el("div", { class: "muted small" }, facts.join(" · ")));
  slot.replaceChildren(box);
}

function event(kind, d) {
  const meta = [];
  if (d.round !== undefined) meta.push(`round ${d.round}`);
  if (d.t_ms !== undefined) meta.push(`${(d.t_ms / 1000).toFixed(1)} s`);
  const head = ui.el("div", { class: "ev-head" }, ui.el("span", { class: "kind" }, title(kind, d)),
    ui.el("span", { class: "meta" }, meta.join(" · ")));
  const li = ui.el("li", { class: "k-" + kind, "data-kind": kind }, head);
  switch (kind) {
    case "start":
      li.append(ui.el("div", {}, d.question),
        ui.el("div", { class: "muted small" }, `${(d.files || []).length} file(s), ${d.selection}: `,
          (d.files || []).map((f) => f.split("/").pop()).join(", ")));
      break;
    case "note":
      li.append(ui.el("div", { class: "muted" }, d.message));
      break;
    case "rule":
      li.append(ui.el("div", { class: "muted" }, d.message),
        ui.el("div", { class: "muted small" }, d.class));
      break;
    case "plan":
      li.append(ui.el("ol", {}, (d.steps || []).map((s) => ui.el("li", {}, s))));
      break;
    case "llm":
      head.append(ui.el("span", { class: "meta" },
        `${d.model} · ${ui.num(d.prompt_tokens)} → ${ui.num(d.completion_tokens)} tokens · ${ui.num(d.latency_ms)} ms`));
      li.append(ui.el("details", {}, ui.el("summary", {}, "reply"), ui.el("pre", {}, d.reply)));
      break;
    case "retry":
      li.append(ui.el("div", { class: "muted" }, `retry ${d.retry} of ${d.max_retries} after ${d.reason}`));
      break;
    case "llm_failed":
      li.append(ui.el("div", { class: "muted" }, d.error));
      break;
    case "exec": {
      const ok = d.exit_code === 0;
      head.append(ui.badge(ok ? "exit 0" : d.timed_out ? "timed out" : `exit ${d.exit_code ?? "signal " + d.signal}`, ok ? "ok" : "bad"),
        ui.el("span", { class: "meta" }, `${ui.num(d.duration_ms)} ms`));
      li.append(ui.el("details", { open: true }, ui.el("summary", {}, "code"), ui.el("pre", { class: "code" }, d.code)));
      if (d.stdout) li.append(ui.el("div", { class: "muted small" }, "output"), ui.el("pre", { class: "stdout" }, d.stdout));
      if (d.stderr) li.append(ui.el("div", { class: "muted small" }, "errors"), ui.el("pre", { class: "stderr" }, d.stderr));
      break;
    }
    case "verdict":
      head.append(ui.badge(String(d.verdict), d.verdict === "sufficient" ? "ok" : "warn"));
      if (d.missing && d.missing.length) li.append(ui.el("div", { class: "muted small" }, "missing: " + d.missing.join(", ")));
      if (d.reply) li.append(ui.el("details", {}, ui.el("summary", {}, "verifier"), ui.el("pre", {}, d.reply)));
      break;
    case "files":
      li.append(ui.el("div", { class: "small" }, `names ${d.names}`,
        d.added && d.added.length ? ` · added ${d.added.map((f) => f.split("/").pop()).join(", ")}` : "",
        d.unknown && d.unknown.length ? ` · unknown ${d.unknown.join(", ")}` : ""));
      break;
    case "route":
      li.append(ui.el("div", { class: "small" }, `${typeof d.route === "string" ? d.route : JSON.stringify(d.route)} · ${d.kept} step(s) kept`));
      break;
    case "finish":
      head.append(ui.badge(String(d.status), d.answer ? "ok" : "bad"));
      if (d.answer) li.append(ui.el("div", {}, d.answer));
      break;
    default:
      li.append(ui.el("pre", {}, JSON.stringify(d, null, 2)));
  }
  return li;
}

function title(kind, d) {
  switch (kind) {
    case "llm": return `${d.role || "LLM"}`;
    case "retry": return `${d.role || "LLM"} retried`;
    case "llm_failed": return `${d.role || "LLM"} failed`;
    case "exec": return `run ${d.purpose || "script"}`;
    case "files": return "files added";
    case "rule": return `rule ${d.rule}`;
    default: return kind;
  }
}
