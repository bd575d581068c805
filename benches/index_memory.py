#!/usr/bin/env python3
"""Memory of a first `lakestar index` run: `/proc/PID/status` sampled every 250 ms, the
peaks of VmRSS, RssAnon (the process's own memory: heap, stacks) and RssFile (mapped
files, the page cache it touches) with the second each came, and RssAnon every 10 s.
A fresh INDEX directory is made (it must not exist). The hash embedder, as the index
bench uses. BENCHMARKS.md, "Indexing".

usage: benches/index_memory.py BIN LAKE INDEX [ARG ...]
(ARGs are passed on to `lakestar index`, e.g. --graph; the environment is inherited,
e.g. LAKESTAR_SCAN_UP_TO=0 to measure a lake above the scan threshold.)
"""
import os
import re
import subprocess
import sys
import time

FIELDS = ("VmRSS", "RssAnon", "RssFile")


def main(argv):
    if len(argv) < 3:
        sys.exit(__doc__)
    binary, lake, index, extra = argv[0], argv[1], argv[2], argv[3:]
    if os.path.exists(index):
        sys.exit(f"{index} exists: the run measures a first index")
    p = subprocess.Popen(
        [binary, "index", lake, "--index", index, "--embedder", "hash", "--json", *extra],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    peak, at, series, last, t0 = {}, {}, [], -10.0, time.time()
    while p.poll() is None:
        try:
            status = open(f"/proc/{p.pid}/status").read()
        except FileNotFoundError:
            break
        now = time.time() - t0
        values = {}
        for k in FIELDS:
            m = re.search(rf"^{k}:\s+(\d+) kB", status, re.M)
            if m:
                values[k] = int(m.group(1)) // 1024
                if values[k] > peak.get(k, -1):
                    peak[k], at[k] = values[k], round(now, 1)
        if now - last >= 10:
            series.append((round(now), values.get("RssAnon")))
            last = now
        time.sleep(0.25)
    rc = p.wait()
    if rc != 0:
        sys.exit(f"lakestar index failed ({rc}): {p.stderr.read().decode()[-2000:]}")
    wall = time.time() - t0
    print(f"wall {wall:.1f} s; peaks, MB (at s):")
    for k in FIELDS:
        print(f"  {k}: {peak.get(k)} ({at.get(k)})")
    print("RssAnon every 10 s (s, MB):", series)


if __name__ == "__main__":
    main(sys.argv[1:])
