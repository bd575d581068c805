// Search: the form, then GET /search with the hits' evidence highlighted.
"use strict";

ui.start(async () => {
  const p = ui.params();
  const q = p.get("q") || "";
  const format = p.get("format") || "";
  const glob = p.get("glob") || "";
  const k = p.get("k") || "20";
  const m = ui.main();
  ui.setTitle(q ? `Search: ${q}` : "Search");

  const formats = ui.el("select", { name: "format", "aria-label": "Format" }, ui.el("option", { value: "" }, "any format"));
  const form = ui.el("form", { class: "panel", action: "/ui/search", method: "get", id: "search-form" },
    ui.el("label", { class: "grow" }, "Question or keywords",
      ui.el("input", { type: "search", name: "q", value: q, id: "q", placeholder: "e.g. merchant category codes", autofocus: true })),
    ui.el("label", {}, "Format", formats),
    ui.el("label", {}, "Paths (glob)", ui.el("input", { type: "text", name: "glob", value: glob, placeholder: "sales/**/*.csv" })),
    ui.el("label", {}, "Results", ui.el("select", { name: "k" },
      ["10", "20", "50", "100"].map((n) => ui.el("option", { value: n, selected: n === k }, n)))),
    ui.el("button", { type: "submit" }, "Search"));
  m.append(ui.el("h1", {}, "Search"), form);
  const results = ui.el("div", { id: "results" });
  m.append(results);

  // The formats the lake holds, for the picker (the search does not wait for them).
  ui.api("/status").then((s) => {
    for (const f of Object.keys(s.by_format)) {
      formats.append(ui.el("option", { value: f, selected: f === format }, f));
    }
  }).catch(() => {});

  if (!q.trim()) {
    results.append(ui.el("p", { class: "muted" }, "Ask in words (“fees by card scheme”) or name columns and files: hits come with why they rank."));
    return;
  }
  results.append(ui.el("p", { class: "muted" }, "Searching…"));
  const params = new URLSearchParams({ q, k });
  if (format) params.set("format", format);
  if (glob) params.set("glob", glob);
  const t0 = performance.now();
  let answer;
  try {
    answer = await ui.api("/search?" + params.toString());
  } catch (e) {
    results.replaceChildren(ui.errorBox(e));
    return;
  }
  const ms = Math.round(performance.now() - t0);
  const words = ui.queryWords(q);
  const hits = answer.hits;
  results.replaceChildren(ui.el("p", { class: "muted", id: "result-count" },
    hits.length === 0 ? "No file matches." : `${hits.length} file${hits.length === 1 ? "" : "s"} in ${ms} ms, best first.`));
  const top = hits.length ? hits[0].score : 1;
  results.append(ui.el("ol", { class: "hits" }, hits.map((h, i) => hit(h, i, top, words))));
});

// The hit's score as a share of the best hit's, 0..1 (the server's, else computed).
function share(h, top) {
  if (typeof h.share === "number") return h.share;
  return top > 0 ? h.score / top : 0;
}

// Badge kinds of the server's relevance labels.
const LABELS = { strong: "ok", fair: "", weak: "grey" };

function hit(h, i, top, queryWords) {
  // The server's matched words catch what a prefix does not ("Burglaries" for "burglary").
  const words = [...new Set([...queryWords, ...(h.words || []).map((w) => w.toLowerCase())])];
  const r = share(h, top);
  const fill = ui.el("div", { class: "fill" });
  fill.style.width = Math.max(2, Math.round(100 * r)) + "%";
  const rel = ui.el("span", { class: "relevance", title: `score ${h.score.toFixed(4)}: ${Math.round(100 * r)}% of the best hit's` },
    typeof h.relevance === "string" ? ui.badge(h.relevance, LABELS[h.relevance]) : "relevance",
    ui.el("span", { class: "track" }, fill), `${Math.round(100 * r)}%`);
  const link = ui.el("a", { class: "path", href: ui.fileHref(h.path) }, ui.highlight(h.path, words));
  const li = ui.el("li", { class: "hit", "data-path": h.path },
    ui.el("div", { class: "hit-head" }, ui.el("span", { class: "rank" }, `${i + 1}.`), link, ui.badge(h.format), rel),
    ui.el("div", { class: "summary" }, ui.highlight(h.summary, words)));
  if (h.reasons && h.reasons.length) {
    li.append(ui.el("ul", { class: "reasons" }, h.reasons.map((r) => ui.el("li", {}, ui.highlight(r, words)))));
  }
  if (h.collection) {
    const c = h.collection;
    const extra = ui.el("div", { class: "extra collection" },
      "Collection ", ui.el("span", { class: "mono" }, c.template), ` · ${ui.num(c.members)} members`,
      c.singled_out ? " · this member is the one the question names" : "");
    if (c.matching && c.matching.length) {
      extra.append(" · also matching: ");
      c.matching.forEach((p, j) => {
        if (j) extra.append(", ");
        extra.append(ui.fileLink(p));
      });
      if (c.matched > c.matching.length) extra.append(` and ${ui.num(c.matched - c.matching.length)} more`);
    }
    li.append(extra);
  }
  if (h.companions && h.companions.length) {
    const extra = ui.el("div", { class: "extra companions" }, "Open with: ");
    h.companions.forEach((c, j) => {
      if (j) extra.append(" · ");
      extra.append(ui.fileLink(c.path), ui.el("span", { class: "muted" }, ` (${c.why})`));
    });
    li.append(extra);
  }
  return li;
}
