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
    hits.length === 0 ? "No file matches." : `${hits.length} file${hits.length === 1 ? "" : "s"} in ${ms} ms, best first` +
      (hits.length > 1 ? "; each bar spans from the last hit's score (empty) to the best's (full)." : ".")));
  const scale = spread(hits);
  results.append(ui.el("ol", { class: "hits" }, hits.map((h, i) => hit(h, i, scale, words))));
});

// The scores the bars span: the best hit's and the last one's. Shares of the best score
// read 96–100 % on most hits of a question; where a hit falls between the first and the
// last shown is what sets it apart.
function spread(hits) {
  const scores = hits.map((h) => h.score);
  return { top: Math.max(0, ...scores), low: Math.min(...scores) };
}

// The hit's score as a share of the best hit's, 0..1 (the server's, else computed).
function share(h, top) {
  if (typeof h.share === "number") return h.share;
  return top > 0 ? h.score / top : 0;
}

// The bar's length, 0..1: the hit's place between the last hit's score and the best's
// (full for all when they are equal).
function place(h, scale) {
  const range = scale.top - scale.low;
  return range > 0 ? (h.score - scale.low) / range : 1;
}

// The longest folder (ending in `/`) that every path is in; "" when none.
function commonFolder(paths) {
  if (!paths.length) return "";
  let dir = paths[0].slice(0, paths[0].lastIndexOf("/") + 1);
  while (dir && !paths.every((p) => p.startsWith(dir))) {
    dir = dir.slice(0, dir.lastIndexOf("/", dir.length - 2) + 1);
  }
  return dir;
}

// Names a folded collection shows before it is opened.
const MEMBERS_SHOWN = 3;

// A collection's other matching members: their folder once, a few names, and all the
// names listed (as links) in their place when opened.
function members(c) {
  const dir = commonFolder(c.matching);
  const names = c.matching.map((p) => p.slice(dir.length));
  const others = `${ui.num(c.matched)} other member${c.matched === 1 ? "" : "s"} match`;
  const more = c.matched > MEMBERS_SHOWN ? ", …" : "";
  const summary = ui.el("summary", {}, others,
    dir ? [" in ", ui.el("span", { class: "mono" }, dir)] : "",
    ui.el("span", { class: "preview" }, ": ", ui.el("span", { class: "mono" }, names.slice(0, MEMBERS_SHOWN).join(", ") + more)));
  const list = ui.el("ul", { class: "member-list" }, c.matching.map((p, j) =>
    ui.el("li", {}, ui.el("a", { href: ui.fileHref(p), class: "mono", title: p }, names[j]))));
  const box = ui.el("details", { class: "members" }, summary, list);
  if (c.matched > c.matching.length) {
    box.append(ui.el("p", { class: "muted small" }, `and ${ui.num(c.matched - c.matching.length)} more, not listed`));
  }
  return box;
}

// The summary without the path it starts with, shown just above it.
function summaryText(h) {
  const head = h.path + " — ";
  return h.summary.startsWith(head) ? h.summary.slice(head.length) : h.summary;
}

// Badge kinds of the server's relevance labels.
const LABELS = { strong: "ok", fair: "", weak: "grey" };

function hit(h, i, scale, queryWords) {
  // The server's matched words catch what a prefix does not ("Burglaries" for "burglary").
  const words = [...new Set([...queryWords, ...(h.words || []).map((w) => w.toLowerCase())])];
  const r = share(h, scale.top);
  const fill = ui.el("div", { class: "fill" });
  fill.style.width = Math.max(2, Math.round(100 * place(h, scale))) + "%";
  const rel = ui.el("span", { class: "relevance", title: `Score ${h.score.toFixed(4)}, ${Math.round(100 * r)}% of the best hit's. ` +
      `The bar shows where it falls between the last hit's score ${scale.low.toFixed(4)} (empty) and the best's ${scale.top.toFixed(4)} (full).` },
    typeof h.relevance === "string" ? ui.badge(h.relevance, LABELS[h.relevance]) : "relevance",
    ui.el("span", { class: "track" }, fill), `${Math.round(100 * r)}%`);
  const link = ui.el("a", { class: "path", href: ui.fileHref(h.path) }, ui.highlight(h.path, words));
  const li = ui.el("li", { class: "hit", "data-path": h.path },
    ui.el("div", { class: "hit-head" }, ui.el("span", { class: "rank" }, `${i + 1}.`), link, ui.badge(h.format), rel),
    ui.el("div", { class: "summary" }, ui.highlight(summaryText(h), words)));
  if (h.reasons && h.reasons.length) {
    li.append(ui.el("ul", { class: "reasons" }, h.reasons.map((r) => ui.el("li", {}, ui.highlight(r, words)))));
  }
  if (h.collection) {
    const c = h.collection;
    const extra = ui.el("div", { class: "extra collection" },
      "Collection ", ui.el("span", { class: "mono" }, c.template), ` · ${ui.num(c.members)} members`,
      c.singled_out ? " · this member is the one the question names" : "");
    li.append(extra);
    if (c.matching && c.matching.length) li.append(members(c));
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
