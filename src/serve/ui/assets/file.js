// One file: its description (GET /files/{path}) and its first rows
// (GET /files/{path}/rows).
"use strict";

const PREVIEW_ROWS = 20;

ui.start(async () => {
  const path = ui.params().get("path");
  const m = ui.main();
  if (!path) {
    m.append(ui.el("p", { class: "muted" }, "No file given: open one from the overview or a search."));
    return;
  }
  ui.setTitle(path);
  const d = await ui.api(ui.filePath(path) + "?max_bytes=16384");
  m.append(ui.el("h1", { id: "file-path", class: "mono" }, d.path));

  const facts = ui.el("dl", { class: "facts" });
  const fact = (k, ...v) => facts.append(ui.el("dt", {}, k), ui.el("dd", {}, v));
  fact("Format", ui.badge(d.format), " ", ui.stateBadge(d.state), d.stale ? [" ", ui.badge("changed since indexed", "warn")] : null);
  fact("Size", `${ui.bytes(d.size)} (${ui.num(d.size)} bytes)`);
  if (d.time_coverage) {
    const t = d.time_coverage;
    fact("Days", t.start === t.end ? t.start : `${t.start} → ${t.end}`, ui.el("span", { class: "muted" }, ` (from ${t.source})`));
  }
  if (d.collection) {
    const c = d.collection;
    fact("Collection", ui.el("span", { class: "mono" }, c.template), ` · ${ui.num(c.members)} members · ${ui.bytes(c.bytes)}`,
      c.representative !== d.path ? [" · like ", ui.fileLink(c.representative)] : null);
  }
  if (d.error) fact("Error", ui.el("span", { class: "error-text" }, d.error));
  if (d.hash) fact("BLAKE3", ui.el("span", { class: "mono small" }, d.hash));
  m.append(facts);

  structure(m, d.description);

  m.append(ui.el("h2", {}, "First rows"));
  const preview = ui.el("div", { id: "preview" }, ui.el("p", { class: "muted" }, "Loading…"));
  m.append(preview);
  showRows(preview, d.path, null);

  m.append(ui.el("h2", {}, "Description"));
  m.append(ui.el("p", { class: "muted small" }, "As search and the agent read it."));
  m.append(ui.el("pre", { class: "text", id: "description" }, d.text));
});

// Keys JSON-like descriptions list at most.
const KEYS_SHOWN = 200;

// The shape of the file: its columns (per table), or its keys.
function structure(m, desc) {
  const c = desc && desc.content;
  if (!c) return;
  if (c.kind === "table" && c.columns) {
    m.append(ui.el("h2", {}, `Columns (${c.columns.length})`), columnTable(c.columns));
  } else if (c.kind === "tables" && c.tables) {
    m.append(ui.el("h2", {}, `Tables (${c.tables.length})`));
    for (const t of c.tables) {
      m.append(ui.el("h3", {}, ui.el("code", {}, t.name),
        ui.el("span", { class: "muted" }, ` ${t.kind} · ${ui.num(t.rows)} rows · ${t.columns.length} columns`)));
      if (t.columns.length) m.append(columnTable(t.columns));
    }
  } else if (c.kind === "json" && c.paths) {
    const shown = c.paths.slice(0, KEYS_SHOWN);
    m.append(ui.el("h2", {}, `Keys (${c.paths.length})`));
    m.append(ui.table(
      [["Path", ""], ["Types", ""], ["Count", "num"], ["Distinct", "num"], ["Examples", ""]],
      shown.map((p) => [
        ui.el("code", {}, p.path), (p.types || []).map(([t, n]) => `${t} ${ui.num(n)}`).join(", "),
        ui.num(p.count), ui.num(p.distinct), (p.examples || []).slice(0, 3).join(", "),
      ]), "keys"));
    if (c.paths.length > shown.length) m.append(ui.el("p", { class: "muted small" }, `The first ${shown.length} keys.`));
  }
}

function columnTable(columns) {
  return ui.table(
    [["Column", ""], ["Type", ""], ["Nulls", "num"], ["Distinct", "num"], ["Range", "nowrap"], ["Examples", ""]],
    columns.map((c) => [
      ui.el("code", {}, c.name), c.type || "", ui.num(c.nulls), ui.num(c.distinct),
      c.min !== undefined && c.min !== null ? `${written(c.min, c.notation)} … ${written(c.max, c.notation)}` : "",
      (c.examples || []).slice(0, 3).join(", "),
    ]), "columns");
}

// A figure of a column as the column writes its numbers: `12` of a column written
// `$3,100M` is `$12M`. The profile keeps figures in the written unit without the
// notation (`notation` lists it: `thousands ","`, `decimal ","`, `percent`,
// `currency "$"`, `scale "M"`); with several scales the figures are in units, unscaled.
function written(v, notation) {
  const n = notation || [];
  const s = String(v);
  if (!n.length || !/^-?\d+(\.\d+)?$/.test(s)) return s;
  const arg = (kind) => {
    const found = n.find((x) => x.startsWith(kind + ' "'));
    return found ? found.slice(kind.length + 2, -1) : null;
  };
  let [int, frac] = s.replace("-", "").split(".");
  const group = arg("thousands");
  if (group !== null) int = int.replace(/\B(?=(\d{3})+(?!\d))/g, group);
  let out = int + (frac === undefined ? "" : (arg("decimal") || ".") + frac);
  if (n.filter((x) => x.startsWith("scale ")).length === 1) out += arg("scale");
  if (n.includes("percent")) out += "%";
  const currency = arg("currency");
  if (currency) out = /^[A-Z]{3}$/.test(currency) ? `${out} ${currency}` : currency + out;
  return (s.startsWith("-") ? "-" : "") + out;
}

async function showRows(box, path, tableName) {
  const params = new URLSearchParams({ n: String(PREVIEW_ROWS) });
  if (tableName) params.set("table", tableName);
  let r;
  try {
    r = await ui.api(ui.filePath(path) + "/rows?" + params.toString());
  } catch (e) {
    // A server without the rows route (an older binary) answers 404 for it.
    const missing = e instanceof ui.ApiError && e.status === 404;
    box.replaceChildren(missing
      ? ui.el("p", { class: "note-box" }, "This server has no row preview (GET /files/{path}/rows); the description below shows sample values.")
      : ui.el("p", { class: "note-box" }, `No row preview: ${e.message}`));
    return;
  }
  box.replaceChildren();
  if (r.tables && r.tables.length > 1) {
    const pick = ui.el("select", { id: "table-picker", "aria-label": "Table" },
      r.tables.map((t) => ui.el("option", { value: t, selected: t === r.table }, t)));
    pick.addEventListener("change", () => showRows(box, path, pick.value));
    box.append(ui.el("label", { class: "picker" }, "Table ", pick));
  }
  const rows = r.rows.map((row, i) => [ui.el("span", {}, String(i + 1)),
    ...row.map((v) => (v === null ? ui.el("span", { class: "null" }, "null") : v))]);
  const table = ui.table([["#", "rownum"], ...r.columns.map((c) => [c, ""])], rows, "rows");
  box.append(table);
  box.append(ui.el("p", { class: "muted small" },
    `${r.rows.length} row${r.rows.length === 1 ? "" : "s"}` + (r.table ? ` of ${r.table}` : "") + (r.more ? "; more follow." : "; that is all.")));
}
