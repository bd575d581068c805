#!/usr/bin/env python3
"""Facts read right on the messytables corpus, against the blind truth records.

usage: python3 benches/messytables_truth.py BIN [--lake DIR] [--show-dev]

BIN is a built `lakestar`. The corpus (default ../shared/lakes/messytables/horror) is
indexed into a temporary directory and every file described with `describe --json`; each
description is compared with `tests/data/messytables/truth/FILE.json`. Facts per file:
readable or not; per truth table: a table found for it, its data rows, its column count,
and per column its name and its type. `--show-dev` lists the dev files' misses; the test
part's are never printed, only its totals (tests/data/messytables/README.md).
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


def described_tables(content):
    kind = content.get("kind") if content else None
    if kind == "table":
        return [dict(content, name=None)]
    if kind == "tables":
        return content.get("tables", [])
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


def compare(truth, described):
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
            check(dtype == tc.get("type"),
                  f"{label}: column {j + 1} ({tc.get('name')}) typed {dtype} (truth {tc.get('type')})")
    return checks, misses


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("bin")
    ap.add_argument("--lake", default=str(ROOT.parent / "shared/lakes/messytables/horror"))
    ap.add_argument("--show-dev", action="store_true")
    args = ap.parse_args()
    split = json.loads((DATA / "split.json").read_text())
    with tempfile.TemporaryDirectory() as tmp:
        idx = pathlib.Path(tmp) / "idx"
        subprocess.run([args.bin, "index", args.lake, "--index", str(idx), "--json"],
                       check=True, stdout=subprocess.DEVNULL)
        for part in ("dev", "test"):
            total = wrong = 0
            for name in split[part]:
                truth = json.loads((DATA / "truth" / f"{name}.json").read_text())
                out = subprocess.run([args.bin, "describe", name, "--index", str(idx), "--json"],
                                     capture_output=True, text=True)
                described = json.loads(out.stdout) if out.returncode == 0 else {"state": "error"}
                facts, misses = compare(truth, described)
                total += facts
                wrong += len(misses)
                if part == "dev" and args.show_dev:
                    for m in misses:
                        print(f"  dev {name}: {m}")
            print(f"{part}: {total - wrong} of {total} facts right "
                  f"({100 * (total - wrong) / max(total, 1):.1f} %), {len(split[part])} files")


if __name__ == "__main__":
    main()
