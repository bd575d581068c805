#!/usr/bin/env python3
"""Prefix reuse, measured: how many prompt tokens of each chat call the local
llama-cpp-python server took from its prompt cache, read off its log.

    python3 benches/prefix_reuse.py ~/.cache/local-llm/server-8080.log [--from-byte N] [--to-byte M]

The server (../shared/tools/local-llm.sh) logs, per call, `Llama.generate: P
prefix-match hit, remaining R prompt tokens to eval` when its cache shares a prefix
with the prompt, and llama.cpp's `prompt eval time = … / N tokens`. A call with no
hit line evaluated its whole prompt (N tokens). Calls are delimited by the access log's
`POST /v1/chat/completions` line. `--from-byte` and `--to-byte` bound the part read (the
log's sizes before and after a run), so one run is measured alone.

Prints the calls, prompt tokens, tokens reused, the share reused, and the calls that
reused fewer than 300 tokens (what a prefix shared only up to the common rules looks
like).
"""

import argparse
import json
import re

HIT = re.compile(r"Llama\.generate: (\d+) prefix-match hit, remaining (\d+) prompt tokens")
EVAL = re.compile(r"prompt eval time =\s*[\d.]+ ms /\s*(\d+) tokens")
DONE = re.compile(r'"POST /v1/chat/completions HTTP/1\.1" 200')
LOW = 300


def calls(lines):
    """(reused, evaluated) per completed chat call."""
    hit = None
    evaluated = None
    for line in lines:
        m = HIT.search(line)
        if m:
            hit = (int(m.group(1)), int(m.group(2)))
            continue
        m = EVAL.search(line)
        if m:
            evaluated = int(m.group(1))
            continue
        if DONE.search(line):
            if hit is not None:
                yield hit
            elif evaluated is not None:
                yield (0, evaluated)
            hit = evaluated = None


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("log")
    ap.add_argument("--from-byte", type=int, default=0)
    ap.add_argument("--to-byte", type=int, default=None)
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args()
    with open(a.log, "rb") as f:
        f.seek(a.from_byte)
        size = -1 if a.to_byte is None else max(a.to_byte - a.from_byte, 0)
        text = f.read(size).decode("utf-8", "replace")
    found = list(calls(text.splitlines()))
    reused = sum(r for r, _ in found)
    total = sum(r + e for r, e in found)
    low = sum(1 for r, _ in found if r < LOW)
    out = {
        "calls": len(found),
        "prompt_tokens": total,
        "reused_tokens": reused,
        "reused_share": round(reused / total, 4) if total else None,
        "calls_reusing_under_300": low,
    }
    if a.json:
        print(json.dumps(out))
    else:
        print(
            f"{out['calls']} calls, {total} prompt tokens, {reused} reused "
            f"({100 * reused / max(total, 1):.1f} %); {low} calls reused fewer than {LOW}"
        )


if __name__ == "__main__":
    main()
