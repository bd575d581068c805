"""Write -> visible-in-search latency through `lakestar serve --watch` on a 100k-file lake.

Usage: python3 benches/serve_watch_latency.py LAKESTAR_BIN WORKDIR [FILES] [PROBES]
Generates WORKDIR/lake (FILES small CSVs in folders of 1000, varied column names and
values) once, indexes it into WORKDIR/idx, starts `serve --watch`, then per probe writes a
CSV whose column is a word found nowhere else and polls GET /search until that file is
the first hit. Prints p50/p95/max in ms.
"""
import urllib.parse
import json, os, random, re, subprocess, sys, time, urllib.request

bin_, work = sys.argv[1], sys.argv[2]
files = int(sys.argv[3]) if len(sys.argv) > 3 else 100000
probes = int(sys.argv[4]) if len(sys.argv) > 4 else 20
lake, idx = os.path.join(work, "lake"), os.path.join(work, "idx")
words = "price volume region station rainfall salary revenue species height weight age score city country sensor voltage temperature pressure latency count".split()
if not os.path.isdir(lake):
    rng = random.Random(7)
    for i in range(files):
        d = os.path.join(lake, f"d{i // 1000:03d}")
        os.makedirs(d, exist_ok=True)
        cols = rng.sample(words, 3) + [f"c{rng.randrange(5000)}"]
        rows = "\n".join(",".join(str(rng.randrange(1000)) for _ in cols) for _ in range(5))
        with open(os.path.join(d, f"{rng.choice(words)}_{i}.csv"), "w") as f:
            f.write(",".join(cols) + "\n" + rows + "\n")
    t = time.time()
    subprocess.run([bin_, "index", lake, "--index", idx], check=True, stdout=subprocess.DEVNULL)
    print(f"first index of {files} files: {time.time() - t:.1f} s", flush=True)

srv = subprocess.Popen([bin_, "serve", "--index", idx, "--watch", "--addr", "127.0.0.1:0"],
                       stderr=subprocess.PIPE, text=True)
port = None
for line in srv.stderr:
    m = re.search(r"listening on http://127\.0\.0\.1:(\d+)", line)
    if m:
        port = int(m.group(1)); break
base = f"http://127.0.0.1:{port}"

def top(word):
    with urllib.request.urlopen(f"{base}/search?q={urllib.parse.quote(word)}&k=1", timeout=30) as r:
        hits = json.load(r)["hits"]
    return hits[0]["path"] if hits else None

top("warmup price")  # the first search opens the searcher
time.sleep(3)  # the reconcile batch
lat = []
for n in range(probes):
    word = f"zq{random.randrange(10**9):09d}"
    rel = f"probes/p{n}_{word}.csv"
    os.makedirs(os.path.join(lake, "probes"), exist_ok=True)
    t = time.time()
    with open(os.path.join(lake, rel), "w") as f:
        f.write(f"{word},other\n1,2\n")
    while top(word) != rel:
        if time.time() - t > 60:
            raise SystemExit(f"probe {n} not visible after 60 s")
        time.sleep(0.01)
    lat.append((time.time() - t) * 1000)
    time.sleep(1)
srv.terminate(); srv.wait()
lat.sort()
q = lambda p: lat[min(len(lat) - 1, int(p * len(lat)))]
print(f"write -> first hit via serve --watch, {len(lat)} probes: p50 {q(0.5):.0f} ms, p95 {q(0.95):.0f} ms, max {lat[-1]:.0f} ms")
