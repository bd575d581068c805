"""Indexing a lake on a loopback S3 server against the same lake on disk (BENCHMARKS.md,
"Object-store lakes"): moto's server from the test venv on 127.0.0.1, the lake uploaded
with boto3, then `lakestar index` of the directory and of `s3://bench/lake`, each twice
(a first index, then a no-change run), timed; the run reports give the requests and
bytes fetched.

    cargo build --release
    target/test-venv/bin/python benches/object_store.py --lake LAKE --files 10000 \\
        --lakestar target/release/lakestar

`--files N` takes the first N files of LAKE (in sorted path order) into a scratch copy.
The test venv has moto[server] and boto3 (the integration tests install them).
"""

import argparse
import concurrent.futures
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time

import boto3


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def first_files(lake, n):
    out = []
    for root, dirs, names in os.walk(lake):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        for name in sorted(names):
            out.append(os.path.relpath(os.path.join(root, name), lake))
            if len(out) == n:
                return out
    return out


def run(cmd, env):
    started = time.perf_counter()
    out = subprocess.run(cmd, env=env, capture_output=True, text=True)
    wall = time.perf_counter() - started
    if out.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed: {out.stderr}")
    return wall, json.loads(out.stdout.strip().splitlines()[-1])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--lake", required=True)
    ap.add_argument("--files", type=int, default=10_000)
    ap.add_argument("--lakestar", default="target/release/lakestar")
    ap.add_argument("--jobs", type=int, default=0, help="--jobs for lakestar (0: its default)")
    a = ap.parse_args()
    scratch = tempfile.mkdtemp(prefix="lakestar-s3-bench-")
    lake = os.path.join(scratch, "lake")
    files = first_files(a.lake, a.files)
    for rel in files:
        os.makedirs(os.path.dirname(os.path.join(lake, rel)), exist_ok=True)
        shutil.copyfile(os.path.join(a.lake, rel), os.path.join(lake, rel))
    size = sum(os.path.getsize(os.path.join(lake, r)) for r in files)
    port = free_port()
    moto = subprocess.Popen(
        [sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        endpoint = f"http://127.0.0.1:{port}"
        for _ in range(600):
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                time.sleep(0.1)
        s3 = boto3.client(
            "s3",
            endpoint_url=endpoint,
            aws_access_key_id="testing",
            aws_secret_access_key="testing",
            region_name="us-east-1",
        )
        s3.create_bucket(Bucket="bench")
        started = time.perf_counter()
        with concurrent.futures.ThreadPoolExecutor(8) as pool:
            list(pool.map(lambda r: s3.upload_file(os.path.join(lake, r), "bench", "lake/" + r), files))
        print(f"{len(files):,} files, {size / 1e6:.1f} MB, uploaded in {time.perf_counter() - started:.0f} s")
        env = dict(
            os.environ,
            AWS_ACCESS_KEY_ID="testing",
            AWS_SECRET_ACCESS_KEY="testing",
            AWS_REGION="us-east-1",
            AWS_ENDPOINT_URL=endpoint,
        )
        jobs = ["--jobs", str(a.jobs)] if a.jobs else []
        print("| run | wall | run's seconds | analyzed | unchanged | GETs | bytes fetched |")
        print("|---|---:|---:|---:|---:|---:|---:|")
        for name, target, idx in [
            ("disk", lake, os.path.join(scratch, "idx-disk")),
            ("moto", "s3://bench/lake", os.path.join(scratch, "idx-s3")),
        ]:
            for what in ("first index", "no change"):
                wall, r = run([a.lakestar, "index", target, "--index", idx, "--json"] + jobs, env)
                fetched = r.get("fetched") or {}
                print(
                    f"| {name}, {what} | {wall:.2f} s | {r['seconds']:.2f} s | {r['analyzed']:,} "
                    f"| {r['unchanged']:,} | {fetched.get('requests', '—')} | {fetched.get('bytes', '—')} |"
                )
    finally:
        moto.kill()
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
