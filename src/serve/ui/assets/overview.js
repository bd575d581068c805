// The lake at a glance: GET /overview.
"use strict";

ui.start(async () => {
  const o = await ui.api("/overview");
  const s = o.status;
  const m = ui.main();
  ui.setTitle("Overview");

  m.append(ui.el("h1", {}, "The lake at a glance"));
  m.append(ui.el("p", { class: "lead" }, ui.el("code", {}, s.lake_root)));

  const errors = s.files - (s.by_state.ok || 0);
  const span = o.time ? `${o.time.start} → ${o.time.end}` : "none found";
  m.append(ui.el("div", { class: "cards", id: "figures" },
    ui.card("Files", ui.num(s.files), ui.bytes(s.bytes)),
    ui.card("Formats", ui.num(o.formats.length), o.formats.slice(0, 3).map((f) => f.format).join(", ")),
    ui.card("Collections", ui.num(s.collections), "same-schema file sets"),
    ui.card("Errors", ui.num(errors), errors ? "files not described" : "every file described"),
    ui.card("Time coverage", o.time ? o.time.start.slice(0, 4) + (o.time.end.slice(0, 4) !== o.time.start.slice(0, 4) ? "–" + o.time.end.slice(0, 4) : "") : "—",
      o.time ? `${span} · ${ui.num(o.time.files)} files` : span),
    ui.card("Index", ui.bytes(s.index_bytes), s.last_index_at ? "indexed " + s.last_index_at.replace("T", " ").replace("Z", " UTC") : "")));

  m.append(ui.el("h2", {}, "Formats"));
  const maxFiles = Math.max(1, ...o.formats.map((f) => f.files));
  m.append(ui.table(
    [["Format", ""], ["Files", "num"], ["Size", "num"], ["Share of files", "barcell"]],
    o.formats.map((f) => {
      const bar = ui.el("span", { class: "bar" });
      bar.style.width = (100 * f.files / maxFiles).toFixed(1) + "%";
      return [ui.badge(f.format), ui.num(f.files), ui.bytes(f.bytes), bar];
    }), "formats"));

  m.append(ui.el("h2", {}, "Time coverage"));
  m.append(o.time
    ? ui.el("p", {}, ui.el("strong", {}, span), ` — from the content or the paths of ${ui.num(o.time.files)} of ${ui.num(s.files)} files.`)
    : ui.el("p", { class: "muted" }, "No file says which days it covers."));

  m.append(ui.el("h2", {}, `Collections (${ui.num(s.collections)})`));
  if (o.collections.length === 0) {
    m.append(ui.el("p", { class: "muted" }, "No collections: no set of files shares a path pattern and a schema."));
  } else {
    m.append(ui.table(
      [["Template", "path"], ["Format", ""], ["Members", "num"], ["Size", "num"], ["Days", ""], ["Representative", "path"]],
      o.collections.map((c) => [
        c.template, ui.badge(c.format), ui.num(c.members), ui.bytes(c.bytes),
        c.time_start ? `${c.time_start} → ${c.time_end}` : "",
        ui.fileLink(c.representative),
      ]), "collections"));
  }

  m.append(ui.el("h2", {}, `Errors (${ui.num(errors)})`));
  if (s.errors.length === 0) {
    m.append(ui.el("p", { class: "muted" }, "None: every file was described."));
  } else {
    m.append(ui.table([["File", "path"], ["State", ""], ["Why", ""]],
      s.errors.map((e) => [ui.fileLink(e.path), ui.stateBadge(e.state), e.error]), "errors"));
  }

  // Worth a table of its own only when the listing is longer.
  if (s.files > o.largest.length) {
    m.append(ui.el("h2", {}, "Largest files"));
    m.append(fileTable(o.largest, "largest"));
  }

  const listed = o.files.length < s.files ? ` (the first ${ui.num(o.files.length)} of ${ui.num(s.files)})` : "";
  m.append(ui.el("h2", {}, `Files${listed}`));
  const filter = ui.el("input", { type: "search", class: "filter", placeholder: "Filter by path…", "aria-label": "Filter files by path" });
  const all = fileTable(o.files, "files");
  filter.addEventListener("input", () => {
    const needle = filter.value.toLowerCase();
    for (const tr of all.querySelectorAll("tbody tr")) {
      tr.hidden = needle !== "" && !tr.firstChild.textContent.toLowerCase().includes(needle);
    }
  });
  m.append(filter, all);
});

function fileTable(files, cls) {
  return ui.table(
    [["Path", "path"], ["Format", ""], ["Size", "num"], ["State", ""], ["Days", ""]],
    files.map((f) => [
      ui.fileLink(f.path), ui.badge(f.format), ui.bytes(f.size), ui.stateBadge(f.state),
      f.time ? (f.time[0] === f.time[1] ? f.time[0] : `${f.time[0]} → ${f.time[1]}`) : "",
    ]), cls);
}
