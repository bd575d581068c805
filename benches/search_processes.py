#!/usr/bin/env python3
"""Wall time of `lakestar search` processes (start, open, query, exit), binaries compared
fairly: each of the index bench's questions is asked of every binary in turn, the order reversed each round, so
that a noisy machine's drift falls on all of them alike. p50 and max of rounds × 10.
BENCHMARKS.md, "Search latency".

usage: benches/search_processes.py INDEX BIN [BIN ...] [--rounds N] [--questions FILE]

A BIN written `VAR=VALUE,VAR=VALUE@PATH` runs PATH with those variables set (one binary
with a ranking switch off, say). `--questions` takes the first 20 `query` fields of a
JSONL task file instead of the index bench's questions.
"""
import json
import os
import pathlib
import re
import statistics
import subprocess
import sys
import time



def questions():
    """The index bench's ten questions (`QUESTIONS` in benches/index.rs), read from there
    so that both ask the same."""
    src = (pathlib.Path(__file__).parent / "index.rs").read_text()
    block = src[src.index("const QUESTIONS") :]
    block = block[block.index("[", block.index("=")) : block.index("];")]
    return re.findall(r'"((?:[^"\\]|\\.)*)"', block)


def main(argv):
    rounds = 3
    if "--rounds" in argv:
        i = argv.index("--rounds")
        rounds = int(argv[i + 1])
        del argv[i : i + 2]
    asked = questions()
    if "--questions" in argv:
        i = argv.index("--questions")
        with open(argv[i + 1]) as f:
            asked = [json.loads(l)["query"] for l in f if l.strip()][:20]
        del argv[i : i + 2]
    if len(argv) < 2:
        sys.exit(__doc__)
    index, bins = argv[0], argv[1:]

    def command(b):
        env, _, path = b.rpartition("@")
        extra = dict(kv.split("=", 1) for kv in env.split(",") if kv)
        return path, {**os.environ, **extra}

    times = {b: [] for b in bins}
    for r in range(rounds):
        for q in asked:
            for b in bins if r % 2 == 0 else bins[::-1]:
                path, env = command(b)
                t = time.perf_counter()
                subprocess.run(
                    [path, "search", q, "--index", index, "-k", "10", "--json"],
                    stdout=subprocess.DEVNULL,
                    stderr=subprocess.DEVNULL,
                    check=True,
                    env=env,
                )
                times[b].append((time.perf_counter() - t) * 1e3)
    for b in bins:
        v = sorted(times[b])
        print(f"{index} {b}: p50 {statistics.median(v):.1f} ms, max {v[-1]:.1f} ms over {len(v)}")


if __name__ == "__main__":
    main(sys.argv[1:])
