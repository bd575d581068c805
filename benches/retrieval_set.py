#!/usr/bin/env python3
"""The real-lake retrieval set: questions that need several files, collection members,
two time windows and several parts, over one lake made of the shared lakes' real files.

    python3 benches/retrieval_set.py OUT [--shared ../shared/lakes] [--devset DEVSET_DIR]
    lakestar index OUT/lake --index OUT/idx
    lakestar eval retrieval --tasks OUT/test.jsonl --index OUT/idx -k 10,100 --fold

The units questions are built from (DABench tables, DA-Code tasks, the tables split
into collections, the generated dev set's questions) are split into dev and test by
SEED before any question is written: a unit goes to test when the first byte of
sha256(f"{SEED}:{unit}") is odd. Rules are written from dev; test is read only as
totals. `benches/retrieval-split.json` records the split this script makes.

The lake:
- `dabench/`: the 64 InfiAgent-DABench tables as published.
- `dacode/<task>/`: the DA-Code sample's source folders as published.
- `split/<table>/`: real DABench tables cut into the layouts lakes are made of: one file
  per year, per month or per category value, each with the source's header. Questions
  ask for members by their period or value, and for two time windows at once.
- `agency/` (with --devset): the generated dev set's lake (`lakestar bench devset`).

Each task line: {"query", "relevant", "mechanism"}; mechanisms: single (one DABench
question), several (a DA-Code task over several files), multi-part (two to five DABench
questions about different tables asked at once), member (one member of a split table by
its period or value), two-windows (the members of two periods), devset-* (the generated
set's own mechanisms).
"""

import argparse
import csv
import hashlib
import json
import os
import random
import shutil
import sys
from pathlib import Path

SEED = 54

# Tables cut into collections: (table, column, how, topic words a person would use).
# `how`: year (a year or a date column), month (a date column, YYYY-MM), value (one
# file per distinct value of a categorical column).
SPLITS = [
    ("vgsales.csv", "Year", "year", "video game sales"),
    ("estimated_numbers.csv", "Year", "year", "estimated malaria cases and deaths"),
    ("arrest_expungibility.csv", "Date", "year", "arrests and offence expungibility"),
    ("YAHOO-BTC_USD_D.csv", "Date", "year", "bitcoin daily prices"),
    ("Zip_MedianSoldPricePerSqft_AllHomes.csv", "Month", "month", "median sold price per square foot of homes"),
    ("bike_rental_hour.csv", "dteday", "month", "hourly bike rentals"),
    ("country_vaccinations.csv", "country", "value", "covid vaccinations"),
    ("cms_hospital_readmissions.csv", "State", "value", "hospital readmissions"),
    ("election2016.csv", "state_abbr", "value", "2016 county election results"),
]


def is_test(unit: str) -> bool:
    return hashlib.sha256(f"{SEED}:{unit}".encode()).digest()[0] % 2 == 1


def period_of(value: str, how: str):
    v = value.strip()
    if how == "year":
        head = v[:4]
        if len(v) >= 4 and head.isdigit() and 1800 <= int(head) <= 2100:
            return head
        return None
    if how == "month":
        if len(v) >= 7 and v[:4].isdigit() and v[4] in "-/" and v[5:7].isdigit():
            return f"{v[:4]}-{v[5:7]}"
        return None
    return v or None


def safe(v: str) -> str:
    return "".join(c if c.isalnum() else "_" for c in v).strip("_") or "blank"


def split_table(src: Path, column: str, how: str, out: Path):
    """Write one file per period/value of `column`; return {period: relative path}."""
    stem = src.stem.lower().replace("-", "_")
    with open(src, newline="", encoding="utf-8-sig", errors="replace") as f:
        rows = list(csv.reader(f))
    header, body = rows[0], rows[1:]
    at = [h.strip() for h in header].index(column)
    groups = {}
    for r in body:
        if at < len(r):
            p = period_of(r[at], how)
            if p:
                groups.setdefault(p, []).append(r)
    folder = out / stem
    folder.mkdir(parents=True, exist_ok=True)
    members = {}
    for p, rs in sorted(groups.items()):
        name = f"{stem}_{safe(p)}.csv"
        with open(folder / name, "w", newline="") as f:
            w = csv.writer(f)
            w.writerow(header)
            w.writerows(rs)
        members[p] = f"split/{stem}/{name}"
    return members


MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August",
          "September", "October", "November", "December"]


def say_period(p: str, how: str) -> str:
    if how == "month":
        return f"{MONTHS[int(p[5:7]) - 1]} {p[:4]}"
    return p


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--shared", default=str(Path(__file__).resolve().parents[2] / "shared" / "lakes"))
    ap.add_argument("--devset", help="a `lakestar bench devset` output folder")
    args = ap.parse_args()
    shared, out = Path(args.shared), Path(args.out)
    lake = out / "lake"
    if lake.exists():
        shutil.rmtree(lake)
    lake.mkdir(parents=True)
    rnd = random.Random(SEED)
    tasks = {"dev": [], "test": []}
    split_record = {"seed": SEED, "rule": "test when sha256(f'{seed}:{unit}')[0] is odd",
                    "test": []}

    def add(units, query, relevant, mechanism):
        side = "test" if any(is_test(u) for u in units) else "dev"
        if len({is_test(u) for u in units}) > 1:
            return  # a question mixing dev and test units is in neither
        tasks[side].append({"query": query, "relevant": relevant, "mechanism": mechanism})

    # DABench tables and their questions.
    dab = shared / "dabench"
    shutil.copytree(dab / "da-dev-tables", lake / "dabench")
    questions = [json.loads(l) for l in open(dab / "da-dev-questions.jsonl")]
    by_file = {}
    for q in questions:
        by_file.setdefault(q["file_name"], []).append(q)
    for f in sorted(by_file):
        if is_test(f"dabench:{f}"):
            split_record["test"].append(f"dabench:{f}")
    for q in questions:
        add([f"dabench:{q['file_name']}"], q["question"], [f"dabench/{q['file_name']}"], "single")
    # Multi-part: two to five questions about different tables of one side, asked at
    # once, joined as people join them.
    joins = ["; ", ". Also, ", ", and ", ". Then ", "; then "]
    for side in ("dev", "test"):
        pool = [q for q in questions if is_test(f"dabench:{q['file_name']}") == (side == "test")]
        rnd.shuffle(pool)
        i = 0
        while i + 5 <= len(pool) and i < 200:
            n = rnd.randint(2, 5)
            picked, files = [], set()
            for q in pool[i:]:
                if q["file_name"] not in files:
                    picked.append(q)
                    files.add(q["file_name"])
                if len(picked) == n:
                    break
            i += n
            text = picked[0]["question"].rstrip("?. ")
            for q in picked[1:]:
                part = q["question"].rstrip("?. ")
                text += rnd.choice(joins) + part[0].lower() + part[1:]
            add([f"dabench:{q['file_name']}" for q in picked], text + "?",
                [f"dabench/{q['file_name']}" for q in picked], "multi-part")

    # DA-Code tasks over several files.
    dac = shared / "dacode"
    for t in map(json.loads, open(dac / "tasks.jsonl")):
        src = dac / "tasks" / t["id"] / "source"
        if not src.is_dir():
            continue
        shutil.copytree(src, lake / "dacode" / t["id"])
        rel = [f"dacode/{t['id']}/{f}" for f in sorted(os.listdir(src))
               if not f.lower().startswith("readme") and "sample" not in f]
        unit = f"dacode:{t['id']}"
        if is_test(unit):
            split_record["test"].append(unit)
        if rel:
            add([unit], t["task"]["instruction"], rel, "several" if len(rel) > 1 else "single")

    # Tables cut into collections.
    for table, column, how, topic in SPLITS:
        unit = f"split:{table}"
        if is_test(unit):
            split_record["test"].append(unit)
        members = split_table(dab / "da-dev-tables" / table, column, how, lake / "split")
        periods = sorted(members)
        if len(periods) < 4:
            continue
        for p in rnd.sample(periods, min(6, len(periods))):
            if how == "value":
                q = f"{topic[0].upper()}{topic[1:]} for {p}"
            else:
                q = f"What were the {topic} in {say_period(p, how)}?"
            add([unit], q, [members[p]], "member")
        if how == "value":
            continue
        for _ in range(4):
            a = rnd.randrange(0, len(periods) - 3)
            b = min(len(periods) - 2, a + rnd.randint(1, 4))
            c = rnd.randrange(b + 1, len(periods))
            first, last, other = periods[a], periods[b], periods[c]
            q = (f"Compare the {topic} from {say_period(first, how)} to "
                 f"{say_period(last, how)} with those of {say_period(other, how)}")
            rel = [members[p] for p in periods[a:b + 1]] + [members[other]]
            add([unit], q, rel, "two-windows")

    # The generated dev set, its questions split one by one.
    if args.devset:
        ds = Path(args.devset)
        shutil.copytree(ds / "lake", lake / "agency")
        for i, line in enumerate(open(ds / "tasks.jsonl")):
            t = json.loads(line)
            unit = f"devset:{i}"
            if is_test(unit):
                split_record["test"].append(unit)
            add([unit], t["query"], [f"agency/{r}" for r in t["relevant"]],
                f"devset-{t.get('mechanism') or t.get('group') or 'other'}")

    for side, ts in tasks.items():
        with open(out / f"{side}.jsonl", "w") as f:
            for t in ts:
                f.write(json.dumps(t) + "\n")
        counts = {}
        for t in ts:
            counts[t["mechanism"]] = counts.get(t["mechanism"], 0) + 1
        print(side, len(ts), dict(sorted(counts.items())), file=sys.stderr)
    with open(out / "split.json", "w") as f:
        json.dump(split_record, f, indent=1)


if __name__ == "__main__":
    main()
