#!/usr/bin/env python3
"""The latest run of every question per mode, as one results.jsonl per mode, for
`lakestar bench dabench --grade-only`.

Record files are ordered by their commit's date (`results.jsonl` and
`results-with-q62.jsonl` are a93d07a's); a later line for a question replaces an earlier.

    python3 latest.py OUT && for m in single-shot ds-star; do
      lakestar bench dabench --dabench ../shared/lakes/dabench --out OUT/$m --grade-only; done
"""
import glob
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
MODES = ["single-shot", "ds-star", "no-verifier", "oracle-files"]


def commit_time(commit):
    out = subprocess.check_output(["git", "-C", HERE, "log", "-1", "--format=%ct", commit])
    return int(out.strip())


def main(out):
    for mode in MODES:
        files = []
        for f in glob.glob(os.path.join(HERE, mode, "results*.jsonl")):
            name = os.path.basename(f)
            if name in ("results.jsonl", "results-with-q62.jsonl"):
                commit = "a93d07a"
            else:
                commit = name[len("results-"):-len(".jsonl")]
            files.append((commit_time(commit), name, f))
        latest = {}
        for _, _, f in sorted(files):
            with open(f) as lines:
                for line in lines:
                    if line.strip():
                        latest[json.loads(line)["id"]] = line.rstrip("\n") + "\n"
        os.makedirs(os.path.join(out, mode), exist_ok=True)
        with open(os.path.join(out, mode, "results.jsonl"), "w") as o:
            o.writelines(latest[i] for i in sorted(latest))
        print(mode, len(latest), "questions")


if __name__ == "__main__":
    main(sys.argv[1])
