#!/usr/bin/env python3
"""Describing speed of two lakestar binaries, measured in one run, beside DuckDB.

usage: python3 benches/describe_ab.py OLD NEW [--reps 5] [--mb 300] [--python PY]

OLD and NEW are built `lakestar` binaries (e.g. the last release build and this one).
Runs alternate (OLD, NEW, DuckDB, OLD, NEW, …) so that both see the same machine load;
each figure is the median of `--reps` runs.

1. Files/s: `lakestar index ../shared/lakes --index FRESH` (every file described, all
   cores), wall time.
2. Exact profile: `lakestar index DIR --full` on a directory holding one generated CSV
   (fixed seed; `--mb` MB; 20 columns: keys, integers with empty cells, floats, ISO dates,
   datetimes, categories, `NA`s, quoted text, numbers with a `M` missing marker, `HH:MM:SS`
   durations, `YYYYMM` months), against DuckDB's `SUMMARIZE SELECT * FROM
   read_csv_auto(file)` in a Python child (PY: a Python with duckdb; default
   target/bench-venv/bin/python).
"""

import argparse
import pathlib
import random
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parent.parent

SUMMARIZE = """
import sys, duckdb
con = duckdb.connect()
print(len(con.execute("SUMMARIZE SELECT * FROM read_csv_auto(?)", [sys.argv[1]]).fetchall()))
"""


def generate(path, mb):
    """A seeded CSV of about `mb` MB."""
    if path.exists() and path.stat().st_size >= mb * 1_000_000:
        return
    rng = random.Random(52)
    cats = ["north", "south", "east", "west", "central"]
    words = ["rain", "heat", "wind", "late", "early", "storm", "dry", "wet"]
    header = ["key", "count", "amount", "ratio", "day", "stamp", "region", "flag", "note",
              "level", "temp", "wait", "month", "score", "code", "share", "group", "depth",
              "speed", "comment"]
    with open(path, "w") as f:
        f.write(",".join(header) + "\n")
        written, i = 0, 0
        while written < mb * 1_000_000:
            d = 1 + i % 28
            row = [
                f"K{i:09d}",
                "" if rng.random() < 0.05 else str(rng.randint(0, 10_000)),
                f"{rng.uniform(0, 1e6):.2f}",
                f"{rng.random():.4f}",
                f"20{10 + i % 14}-{1 + i % 12:02d}-{d:02d}",
                f"20{10 + i % 14}-{1 + i % 12:02d}-{d:02d} {i % 24:02d}:{i % 60:02d}:00",
                rng.choice(cats),
                rng.choice(["true", "false"]),
                "NA" if rng.random() < 0.1 else rng.choice(words),
                str(rng.randint(1, 5)),
                "M" if rng.random() < 0.03 else f"{rng.uniform(-20, 40):.1f}",
                f"{rng.randint(0, 2):02d}:{rng.randint(0, 59):02d}:{rng.randint(0, 59):02d}",
                f"{2000 + i % 20}{1 + i % 12:02d}",
                f"{rng.gauss(50, 10):.3f}",
                rng.choice(["A1", "B2", "C3", "D4"]),
                f"{rng.random() * 100:.1f}",
                str(i % 100),
                f"{rng.uniform(0, 5000):.0f}",
                f"{rng.uniform(0, 120):.2f}",
                '"' + " ".join(rng.choice(words) for _ in range(5)) + ', ok"',
            ]
            line = ",".join(row) + "\n"
            f.write(line)
            written += len(line)
            i += 1


def timed(cmd):
    t = time.perf_counter()
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - t


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("old")
    ap.add_argument("new")
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--mb", type=int, default=300)
    ap.add_argument("--python", default=str(ROOT / "target" / "bench-venv" / "bin" / "python"))
    args = ap.parse_args()
    lakes = ROOT.parent / "shared" / "lakes"
    files = sum(1 for p in lakes.rglob("*") if p.is_file())
    work = ROOT / "target" / "bench-ab"
    (work / "big").mkdir(parents=True, exist_ok=True)
    big = work / "big" / f"mixed-20x{args.mb}mb.csv"
    generate(big, args.mb)

    index = {"old": [], "new": []}
    full = {"old": [], "new": [], "duckdb": []}
    with tempfile.TemporaryDirectory() as tmp:
        for r in range(args.reps):
            for name, binary in (("old", args.old), ("new", args.new)):
                idx = pathlib.Path(tmp) / f"{name}-{r}"
                index[name].append(timed([binary, "index", str(lakes), "--index", str(idx)]))
                idx = pathlib.Path(tmp) / f"{name}-big-{r}"
                full[name].append(timed([binary, "index", str(big.parent), "--index", str(idx),
                                         "--full"]))
            full["duckdb"].append(timed([args.python, "-c", SUMMARIZE, str(big)]))
    med = {k: statistics.median(v) for k, v in index.items()}
    fmed = {k: statistics.median(v) for k, v in full.items()}
    print(f"shared lakes, {files} files, `index` (median of {args.reps}):")
    for k in ("old", "new"):
        print(f"  {k}: {med[k]:.2f} s, {files / med[k]:.0f} files/s")
    print(f"  new / old files/s: {med['old'] / med['new']:.3f}")
    print(f"exact profile, {big.name} ({big.stat().st_size / 1e6:.0f} MB), median of {args.reps}:")
    for k in ("old", "new", "duckdb"):
        print(f"  {k}: {fmed[k]:.2f} s")
    print(f"  DuckDB s / old s: {fmed['duckdb'] / fmed['old']:.2f}×; "
          f"DuckDB s / new s: {fmed['duckdb'] / fmed['new']:.2f}×; "
          f"new / old speed: {fmed['old'] / fmed['new']:.3f}")


if __name__ == "__main__":
    sys.exit(main())
