"""A discrete-event simulation of the scale-out design (ARCHITECTURE.md, "Beyond one
machine"): W workers index a bucket of N objects, key range by key range, sharing one
catalog server. It says which part bounds the first index and a no-change run at a given
size, and what a worker's crash costs. It is a model, not a measurement: its inputs are.

Inputs (flags), and where each default comes from:
  --cpu-ms 0.75       CPU per object, all stages: the 1M synthetic lake's first index took
                      754 s of CPU (BENCHMARKS.md, "Indexing"), measured
  --catalog-rows 22000  rows/s the catalog commits, in batches of 512 with their
                      descriptions: `catalog_pg.py`'s COPY batches, 4 writers, on this
                      2-core machine while it also compiled (a floor), measured
  --classify-rows 450000  rows/s of one range's rows read in key order, `catalog_pg.py`, measured
  --lease-ms 13       take + release a lease, one taker, `catalog_pg.py`, measured
  --list-ms 100       one LIST page of 1,000 keys, assumed (S3's guidance: 100-200 ms
                      first-byte latency for small requests)
  --get-ms 100        first byte of one ranged GET, assumed (the same guidance); drawn
                      log-normally with sigma 0.5 per batch's mean
  --get-kib 64        bytes read per object: the analyzers' head (a small object is read
                      whole, a large one costs its head, footer and samples), assumed
  --concurrency 64    GETs in flight per worker (`object_store` on tokio), assumed
  --mbps 100          a worker's network, MB/s, assumed
Crashes: --crash-per-hour R kills each worker at that Poisson rate; its lease expires after
--lease-s and a new worker takes its place after --restart-s.

    python3 benches/scale_out/simulate.py --objects 100000000 --workers 4,16,64
"""

import argparse
import heapq
import math
import random

BATCH = 512  # objects per catalog transaction
PAGE = 1000  # keys per LIST page
POLL_S = 5.0  # how often an idle worker looks for a range again


class Sim:
    """Workers as generators that yield the time they next resume at; the catalog server is
    one FIFO queue, whose reservations are made in time order (events run in time order)."""

    def __init__(self, a, workers, changed_share, seed):
        self.a = a
        self.rng = random.Random(seed)
        self.workers = workers
        self.changed = changed_share
        self.ranges = math.ceil(a.objects / a.range_objects)
        self.pool = list(range(self.ranges))  # ranges to do, lowest first
        self.committed = [0] * self.ranges  # objects of each range committed (and not to redo)
        self.catalog_free = 0.0
        self.catalog_busy = 0.0
        self.cpu_busy = 0.0
        self.processed = 0  # objects read and analyzed, counting work a crash threw away
        self.crashes = 0
        self.done = 0  # ranges finished
        self.now = 0.0
        self.end = 0.0
        self.heap = []
        self.seq = 0

    def schedule(self, t, proc):
        self.seq += 1
        heapq.heappush(self.heap, (t, self.seq, proc))

    def catalog(self, seconds):
        """Queue `seconds` of catalog work now: when it is done."""
        start = max(self.now, self.catalog_free)
        self.catalog_free = start + seconds
        self.catalog_busy += seconds
        return self.catalog_free

    def objects_in(self, r):
        return min(self.a.range_objects, self.a.objects - r * self.a.range_objects)

    def worker(self, dies):
        a = self.a
        while True:
            if not self.pool:
                if self.done == self.ranges:
                    self.end = max(self.end, self.now)
                    return
                # Ranges are still leased by others (or by the dead, until their lease
                # expires): look again a little later.
                yield self.now + POLL_S
                continue
            r = self.pool.pop(0)
            n = self.objects_in(r)
            # Lease, then the listing (pages follow one another: continuation tokens),
            # then the range's catalog rows in key order.
            yield self.catalog(a.lease_ms / 1000)
            pages = math.ceil(n / PAGE)
            yield self.now + sum(
                self.rng.lognormvariate(math.log(a.list_ms / 1000), 0.3) for _ in range(pages)
            )
            yield self.catalog(n / a.classify_rows)
            left = n - self.committed[r]  # committed objects compare unchanged
            todo = round(left * self.changed)
            inflight = []  # (end, objects) of commits sent, at most two (the bounded channel)
            crashed = False
            while todo > 0 and not crashed:
                b = min(BATCH, todo)
                get = self.rng.lognormvariate(math.log(a.get_ms / 1000), 0.5)
                fetch = b * get / a.concurrency + b * a.get_kib * 1024 / (a.mbps * 1e6)
                cpu = b * a.cpu_ms / 1000
                yield self.now + max(fetch, cpu / a.cores)
                # A batch being read when its worker dies is work thrown away: counted.
                self.cpu_busy += cpu
                self.processed += b
                if self.now >= dies:
                    crashed = True
                    break
                if len(inflight) >= 2:
                    yield max(self.now, inflight[0][0])
                    if self.now >= dies:
                        crashed = True
                        break
                    self.committed[r] += inflight.pop(0)[1]
                inflight.append((self.catalog(b / a.catalog_rows), b))
                todo -= b
            if not crashed:
                for e, b in inflight:
                    yield max(self.now, e)
                    if self.now >= dies:
                        crashed = True
                        break
                    self.committed[r] += b
                    inflight = inflight[1:]
            if crashed:
                # Commits the catalog finished before the death count; the range goes back
                # to the pool when its lease expires; a new worker starts later.
                self.committed[r] += sum(b for e, b in inflight if e <= dies)
                self.crashes += 1
                self.schedule(dies + a.lease_s, self.expire(r))
                restart = dies + a.restart_s
                self.schedule(restart, self.worker(self.life(restart)))
                return
            self.committed[r] = n if self.changed >= 1 else self.committed[r]
            self.done += 1
            yield self.catalog(a.lease_ms / 1000)
            if self.now >= dies:
                self.crashes += 1
                self.schedule(dies + a.restart_s, self.worker(self.life(dies + a.restart_s)))
                return

    def expire(self, r):
        self.pool.insert(0, r)
        return
        yield

    def run(self):
        for _ in range(self.workers):
            self.schedule(0.0, self.worker(self.life(0.0)))
        while self.heap:
            t, _, proc = heapq.heappop(self.heap)
            self.now = t
            try:
                nxt = next(proc)
            except StopIteration:
                continue
            self.schedule(nxt, proc)
        return self.end

    def life(self, t):
        if self.a.crash_per_hour <= 0:
            return math.inf
        return t + self.rng.expovariate(self.a.crash_per_hour / 3600)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--objects", type=int, default=100_000_000)
    ap.add_argument("--workers", default="4,16,32,64,128")
    ap.add_argument("--cores", type=int, default=2)
    ap.add_argument("--range-objects", type=int, default=10_000)
    ap.add_argument("--cpu-ms", type=float, default=0.75)
    ap.add_argument("--catalog-rows", type=float, default=22_000)
    ap.add_argument("--classify-rows", type=float, default=450_000)
    ap.add_argument("--lease-ms", type=float, default=13)
    ap.add_argument("--list-ms", type=float, default=100)
    ap.add_argument("--get-ms", type=float, default=100)
    ap.add_argument("--get-kib", type=float, default=64)
    ap.add_argument("--concurrency", type=int, default=64)
    ap.add_argument("--mbps", type=float, default=100)
    ap.add_argument("--crash-per-hour", type=float, default=0)
    ap.add_argument("--lease-s", type=float, default=60)
    ap.add_argument("--restart-s", type=float, default=30)
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()
    print(
        f"{a.objects:,} objects in ranges of {a.range_objects:,}; catalog {a.catalog_rows:,.0f} rows/s; "
        f"workers of {a.cores} cores, {a.concurrency} GETs in flight, crashes {a.crash_per_hour}/h per worker"
    )
    print("| workers | first index | catalog busy | workers' CPU busy | no-change run | 1 % changed | crashes | objects redone |")
    print("|---:|---:|---:|---:|---:|---:|---:|---:|")
    for w in [int(x) for x in a.workers.split(",")]:
        first = Sim(a, w, 1.0, a.seed)
        t = first.run()
        redone = first.processed - a.objects
        again = Sim(a, w, 0.0, a.seed).run()
        some = Sim(a, w, 0.01, a.seed).run()
        print(
            f"| {w} | {hours(t)} | {first.catalog_busy / t:.0%} | {first.cpu_busy / (t * w * a.cores):.0%} "
            f"| {hours(again)} | {hours(some)} | {first.crashes} | {redone:,} |"
        )


def hours(s):
    return f"{s / 3600:.2f} h" if s >= 3600 else f"{s / 60:.1f} min"


if __name__ == "__main__":
    main()
