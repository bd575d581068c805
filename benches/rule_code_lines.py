#!/usr/bin/env python3
"""Non-test lines of the agent code that reads what a question asks for, writes answers,
repairs scripts or guards the loop by pattern: the size issue 53 bounds (at most 1,500).

A file's non-test lines are those before its first `#[cfg(test)]`; a `tests.rs` counts
none. Usage: python3 benches/rule_code_lines.py [--json]
"""

import json
import pathlib
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
PARTS = [
    "src/agent/answer",  # what is asked (names, statistics, constraints), output adapters
    "src/agent/repair.rs",  # scripts rewritten before they run
    "src/agent/repair",
    "src/agent/run/names.rs",  # names no given file has
    "src/agent/run/remedy.rs",  # cures added to well-known errors
]


def non_test_lines(path: pathlib.Path) -> int:
    if path.name == "tests.rs":
        return 0
    n = 0
    for line in path.read_text().splitlines():
        if line.strip() == "#[cfg(test)]":
            break
        n += 1
    return n


def main() -> None:
    counts = {}
    for part in PARTS:
        p = ROOT / part
        files = sorted(p.rglob("*.rs")) if p.is_dir() else [p]
        for f in files:
            counts[str(f.relative_to(ROOT))] = non_test_lines(f)
    total = sum(counts.values())
    if "--json" in sys.argv:
        print(json.dumps({"files": counts, "total": total}, indent=1))
        return
    for f, n in counts.items():
        print(f"{n:6} {f}")
    print(f"{total:6} total")


if __name__ == "__main__":
    main()
