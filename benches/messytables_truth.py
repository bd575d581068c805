#!/usr/bin/env python3
"""Facts read right on the messytables corpus, against the blind truth records.

usage: python3 benches/messytables_truth.py BIN [--lake DIR] [--show-dev] [--json]
       python3 benches/messytables_truth.py BIN --others [--python PY]

BIN is a built `lakestar`. The corpus (default ../shared/lakes/messytables/horror) is
indexed into a temporary directory and every file described with `describe --json`; each
description is compared with `tests/data/messytables/truth/FILE.json`. Facts per file:
readable or not; per truth table: a table found for it, its data rows, its column count,
and per column its name and its type. `--show-dev` lists the dev files' misses; the test
part's are never printed, only its totals (tests/data/messytables/README.md). `--json`
prints the totals as one JSON object (the integration test reads it).

`--others` scores, beside lakestar, what DuckDB's `read_csv_auto` and pandas' defaults
(`read_csv`, `read_table` for .tsv, `read_excel(sheet_name=None)`, `read_html`) read, each
on the files of the formats it reads, with types compared by class (integer, number,
date/datetime, time, duration, boolean, text for text/categorical/identifier, empty): the
only type distinctions the other readers make. PY is a Python with duckdb, pandas,
openpyxl, xlrd, odfpy and lxml (default: target/bench-venv/bin/python).
"""

import argparse
import json
import pathlib
import subprocess
import tempfile

ROOT = pathlib.Path(__file__).resolve().parent.parent
DATA = ROOT / "tests" / "data" / "messytables"

# lakestar's column types in the truth's words.
TYPES = {"float": "number"}


def norm(name):
    return " ".join(str(name or "").lower().split())


def described_tables(content, name=None):
    """The tables a description holds; an archive's are its described members' (a
    member holding one table is named by its path)."""
    kind = content.get("kind") if content else None
    if kind == "table":
        return [dict(content, name=name)]
    if kind == "tables":
        return content.get("tables", [])
    if kind == "archive":
        return [t for member, d in content.get("described", [])
                for t in described_tables((d or {}).get("content"), member)]
    return []


def match(truth_table, tables, taken):
    """The described table a truth table is compared with: the same name, else the one
    sharing most column names, else none."""
    want = norm(truth_table.get("name"))
    names = {norm(c.get("name")) for c in truth_table["columns"]}
    best, best_overlap = None, 0
    for i, t in enumerate(tables):
        if i in taken:
            continue
        if want and norm(t.get("name")) == want:
            return i
        overlap = len(names & {norm(c.get("name")) for c in t.get("columns", [])})
        if overlap > best_overlap:
            best, best_overlap = i, overlap
    if best is None and len(tables) - len(taken) == 1 and len(truth_table["columns"]) > 0:
        best = next(i for i in range(len(tables)) if i not in taken)
    return best


# Type classes for the comparison with readers that only tell these apart.
CLASS = {"integer": "integer", "number": "number", "float": "number", "date": "date",
         "datetime": "date", "time": "time", "duration": "duration", "boolean": "boolean",
         "text": "text", "categorical": "text", "identifier": "text", "empty": "empty"}


def compare(truth, described, coarse=False):
    """(facts checked, misses) of one file: every fact is one check below."""
    checks, misses = 0, []

    def check(right, miss):
        nonlocal checks
        checks += 1
        if not right:
            misses.append(miss)

    state = described.get("state")
    check((state == "ok") == truth["readable"],
          f"readable: truth {truth['readable']}, described {state}")
    content = (described.get("description") or {}).get("content")
    tables = described_tables(content)
    taken = set()
    for tt in truth["tables"]:
        label = tt.get("name") or "the table"
        i = match(tt, tables, taken)
        check(i is not None, f"{label}: no table found")
        t = tables[i] if i is not None else {}
        if i is not None:
            taken.add(i)
        cols = t.get("columns", [])
        check(t.get("rows") == tt["rows"], f"{label}: rows {t.get('rows')} (truth {tt['rows']})")
        check(len(cols) == len(tt["columns"]),
              f"{label}: {len(cols)} columns (truth {len(tt['columns'])})")
        for j, tc in enumerate(tt["columns"]):
            dc = cols[j] if j < len(cols) else {}
            if tc.get("name") is not None:
                check(norm(dc.get("name")) == norm(tc.get("name")),
                      f"{label}: column {j + 1} named {dc.get('name')!r} (truth {tc.get('name')!r})")
            dtype = TYPES.get(dc.get("type"), dc.get("type"))
            want = tc.get("type")
            if coarse:
                dtype, want = CLASS.get(dtype, dtype), CLASS.get(want, want)
            check(dtype == want,
                  f"{label}: column {j + 1} ({tc.get('name')}) typed {dtype} (truth {tc.get('type')})")
    return checks, misses


# Run by --others in a Python that has the readers: prints one JSON object per file, in
# the shape of `describe --json` (state, description.content.tables[].{name,rows,columns}).
OTHERS = r"""
import json, sys, pathlib, warnings
warnings.simplefilter("ignore")
import pandas as pd, duckdb

def kind_pd(s):
    t = s.dtype
    if pd.api.types.is_bool_dtype(t): return "boolean"
    if pd.api.types.is_integer_dtype(t): return "integer"
    if pd.api.types.is_float_dtype(t): return "empty" if s.isna().all() else "number"
    if pd.api.types.is_datetime64_any_dtype(t): return "datetime"
    if pd.api.types.is_timedelta64_dtype(t): return "duration"
    return "empty" if s.isna().all() else "text"

DUCK = {"BIGINT": "integer", "INTEGER": "integer", "SMALLINT": "integer", "TINYINT": "integer",
        "HUGEINT": "integer", "DOUBLE": "number", "FLOAT": "number", "DATE": "date",
        "TIMESTAMP": "datetime", "TIME": "time", "BOOLEAN": "boolean", "VARCHAR": "text",
        "INTERVAL": "duration"}

def table(name, columns, rows):
    return {"name": name, "rows": rows, "columns": columns}

def ok(tables):
    return {"state": "ok", "description": {"content": {"kind": "tables", "tables": tables}}}

def pandas_read(path):
    ext = path.suffix.lower()
    if ext in (".xls", ".xlsx", ".xlsm", ".ods"):
        sheets = pd.read_excel(path, sheet_name=None)
        return ok([table(n, [{"name": str(c), "type": kind_pd(df[c])} for c in df.columns], len(df))
                   for n, df in sheets.items()])
    if ext == ".html":
        return ok([table(None, [{"name": str(c), "type": kind_pd(df[c])} for c in df.columns], len(df))
                   for df in pd.read_html(path)])
    df = pd.read_table(path) if ext == ".tsv" else pd.read_csv(path)
    return ok([table(None, [{"name": str(c), "type": kind_pd(df[c])} for c in df.columns], len(df))])

def duck_read(path):
    rel = duckdb.sql(f"SELECT * FROM read_csv_auto('{path}')")
    cols = [{"name": n, "type": DUCK.get(str(t).split("(")[0], "text")} for n, t in zip(rel.columns, rel.types)]
    rows = duckdb.sql(f"SELECT count(*) FROM read_csv_auto('{path}')").fetchall()[0][0]
    return ok([table(None, cols, rows)])

reader, lake = sys.argv[1], pathlib.Path(sys.argv[2])
for name in sys.argv[3:]:
    path = lake / name
    ext = path.suffix.lower()
    reads = {"duckdb": ext not in (".xls", ".xlsx", ".xlsm", ".ods", ".html"),
             "pandas": True}[reader]
    if not reads:
        print(json.dumps({"file": name, "reads": False}))
        continue
    try:
        out = (duck_read if reader == "duckdb" else pandas_read)(path)
    except Exception as e:
        out = {"state": "error", "error": f"{type(e).__name__}: {e}"[:200]}
    out["file"], out["reads"] = name, True
    print(json.dumps(out))
"""


def lakestar_read(bin_, idx, name):
    out = subprocess.run([bin_, "describe", name, "--index", str(idx), "--json"],
                         capture_output=True, text=True)
    return json.loads(out.stdout) if out.returncode == 0 else {"state": "error"}


def score(pairs, coarse):
    """(facts right, facts) over (truth, described) pairs."""
    total = wrong = 0
    for truth, described in pairs:
        facts, misses = compare(truth, described, coarse)
        total += facts
        wrong += len(misses)
    return total - wrong, total


def others(args, split, idx):
    py = args.python or str(ROOT / "target" / "bench-venv" / "bin" / "python")
    print("| split | reader | files it reads | facts right (types by class) | lakestar on those files |")
    print("|---|---|---|---|---|")
    for part in ("dev", "test"):
        truths = {n: json.loads((DATA / "truth" / f"{n}.json").read_text()) for n in split[part]}
        ours = {n: lakestar_read(args.bin, idx, n) for n in split[part]}
        right, total = score([(truths[n], ours[n]) for n in split[part]], True)
        print(f"| {part} | lakestar | {len(split[part])} | {right}/{total} ({100 * right / total:.1f} %) | |")
        for reader in ("duckdb", "pandas"):
            out = subprocess.run([py, "-c", OTHERS, reader, args.lake, *split[part]],
                                 capture_output=True, text=True, check=True)
            got = [json.loads(l) for l in out.stdout.splitlines() if l.strip()]
            read = [g for g in got if g["reads"]]
            right, total = score([(truths[g["file"]], g) for g in read], True)
            l_right, l_total = score([(truths[g["file"]], ours[g["file"]]) for g in read], True)
            print(f"| {part} | {reader} | {len(read)} | {right}/{total} ({100 * right / total:.1f} %) "
                  f"| {l_right}/{l_total} ({100 * l_right / l_total:.1f} %) |")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("bin")
    ap.add_argument("--lake", default=str(ROOT.parent / "shared/lakes/messytables/horror"))
    ap.add_argument("--show-dev", action="store_true")
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--others", action="store_true")
    ap.add_argument("--python")
    args = ap.parse_args()
    split = json.loads((DATA / "split.json").read_text())
    with tempfile.TemporaryDirectory() as tmp:
        idx = pathlib.Path(tmp) / "idx"
        subprocess.run([args.bin, "index", args.lake, "--index", str(idx), "--json"],
                       check=True, stdout=subprocess.DEVNULL)
        if args.others:
            others(args, split, idx)
            return
        totals = {}
        for part in ("dev", "test"):
            total = wrong = 0
            for name in split[part]:
                truth = json.loads((DATA / "truth" / f"{name}.json").read_text())
                facts, misses = compare(truth, lakestar_read(args.bin, idx, name))
                total += facts
                wrong += len(misses)
                if part == "dev" and args.show_dev:
                    for m in misses:
                        print(f"  dev {name}: {m}")
            totals[part] = {"right": total - wrong, "facts": total, "files": len(split[part])}
            if not args.json:
                print(f"{part}: {total - wrong} of {total} facts right "
                      f"({100 * (total - wrong) / max(total, 1):.1f} %), {len(split[part])} files")
        if args.json:
            print(json.dumps(totals))


if __name__ == "__main__":
    main()
