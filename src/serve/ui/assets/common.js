// Shared by every page. Everything from the lake (paths, summaries, cell values) is put
// into the page as text (text nodes, textContent), never parsed as HTML.
"use strict";

const ui = {};

// An element: `attrs` sets properties (class → className) and `data-*` attributes;
// children are nodes or strings (strings become text nodes).
ui.el = function (tag, attrs, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k === "class") e.className = v;
    else if (k.startsWith("data-") || k.startsWith("aria-")) e.setAttribute(k, v);
    else e[k] = v;
  }
  ui.append(e, children);
  return e;
};

ui.append = function (parent, children) {
  for (const c of children.flat(Infinity)) {
    if (c === undefined || c === null || c === false) continue;
    parent.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return parent;
};

// The page's main element, emptied.
ui.main = function () {
  const m = document.getElementById("main");
  m.replaceChildren();
  return m;
};

// An API error: the server's `{"error": {"code", "message"}}`.
class ApiError extends Error {
  constructor(status, code, message) {
    super(message);
    this.status = status;
    this.code = code;
  }
}
ui.ApiError = ApiError;

// GET (or POST `body` as JSON) an API path; the parsed answer, or an ApiError.
ui.api = async function (path, body) {
  const init = body === undefined ? {} : {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  };
  const r = await fetch(path, init);
  let data = null;
  try { data = await r.json(); } catch (_) { /* not JSON */ }
  if (!r.ok) {
    const err = (data && data.error) || {};
    throw new ApiError(r.status, err.code || "http_" + r.status, err.message || r.statusText);
  }
  return data;
};

ui.errorBox = function (e) {
  const what = e instanceof ApiError ? `${e.message} (${e.status} ${e.code})` : String(e);
  return ui.el("p", { class: "error-box" }, what);
};

ui.bytes = function (n) {
  if (n === undefined || n === null) return "";
  const units = ["B", "KB", "MB", "GB", "TB"];
  let i = 0;
  let v = n;
  while (v >= 1000 && i < units.length - 1) { v /= 1000; i++; }
  return (i === 0 ? String(v) : v.toFixed(v < 10 ? 2 : 1)) + " " + units[i];
};

ui.num = function (n) {
  return n === undefined || n === null ? "" : Number(n).toLocaleString("en-US");
};

// The URL of a file's page; the path goes in the query, encoded.
ui.fileHref = function (path) {
  return "/ui/file?path=" + encodeURIComponent(path);
};

ui.fileLink = function (path, cls) {
  return ui.el("a", { href: ui.fileHref(path), class: cls || "mono" }, path);
};

// The API path of a file: each segment percent-encoded.
ui.filePath = function (path) {
  return "/files/" + path.split("/").map(encodeURIComponent).join("/");
};

ui.params = function () {
  return new URLSearchParams(window.location.search);
};

// Words of a query worth highlighting (lowercase, without the commonest English words).
const STOP = new Set(("a an and are as at be by did do does for from has have how i in is it of on or " +
  "that the their this to was were what when where which who whose why with").split(" "));
ui.queryWords = function (q) {
  const words = (q || "").toLowerCase().match(/[\p{L}\p{N}]+/gu) || [];
  return [...new Set(words.filter((w) => w.length > 1 && !STOP.has(w)))];
};

function escapeRegExp(s) {
  return s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

// `text` as a fragment with each occurrence of one of `words` in a <mark> (prefix match
// inside words too: "merchant" marks "merchant_category_codes").
ui.highlight = function (text, words) {
  const frag = document.createDocumentFragment();
  text = String(text === undefined || text === null ? "" : text);
  if (!words || words.length === 0) {
    frag.append(document.createTextNode(text));
    return frag;
  }
  const sorted = [...words].sort((a, b) => b.length - a.length).map(escapeRegExp);
  const re = new RegExp("(" + sorted.join("|") + ")", "giu");
  let last = 0;
  for (const m of text.matchAll(re)) {
    if (m.index > last) frag.append(document.createTextNode(text.slice(last, m.index)));
    frag.append(ui.el("mark", {}, m[0]));
    last = m.index + m[0].length;
  }
  if (last < text.length) frag.append(document.createTextNode(text.slice(last)));
  return frag;
};

// A table: `columns` are [header, class]; `rows` arrays of cells (nodes or strings).
ui.table = function (columns, rows, cls) {
  const head = ui.el("tr", {}, columns.map(([h, c]) => ui.el("th", { class: c }, h)));
  const body = rows.map((r) => ui.el("tr", {}, r.map((cell, i) => ui.el("td", { class: columns[i][1] }, cell))));
  return ui.el("div", { class: "table-wrap" },
    ui.el("table", { class: cls }, ui.el("thead", {}, head), ui.el("tbody", {}, body)));
};

ui.card = function (label, value, sub) {
  return ui.el("div", { class: "card" },
    ui.el("div", { class: "label" }, label),
    ui.el("div", { class: "value" }, value),
    sub ? ui.el("div", { class: "sub" }, sub) : null);
};

ui.badge = function (text, kind) {
  return ui.el("span", { class: "badge" + (kind ? " " + kind : "") }, text);
};

ui.stateBadge = function (state) {
  return ui.badge(state, state === "ok" ? "ok" : "bad");
};

ui.setTitle = function (t) {
  document.title = t + " · lakestar";
};

// Run the page's `render` once the document is parsed; show what stops it.
ui.start = function (render) {
  const run = async () => {
    try {
      await render();
    } catch (e) {
      ui.main().append(ui.errorBox(e));
    }
  };
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", run);
  else run();
};
