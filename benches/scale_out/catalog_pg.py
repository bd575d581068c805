"""What a shared PostgreSQL catalog sustains for the scale-out design (ARCHITECTURE.md,
"Beyond one machine"): batched upserts of file rows with their content-addressed
descriptions from several writers, the sorted read of one key range that classifies a
listing, and lease taking. Measured on a local PostgreSQL; the rows have the shape and
sizes of lakestar's catalog rows (path lengths and description blob sizes of the 1M
synthetic lake, BENCHMARKS.md).

    python3 -m venv /tmp/pgvenv && /tmp/pgvenv/bin/pip install 'psycopg[binary]'
    /tmp/pgvenv/bin/python benches/scale_out/catalog_pg.py --dsn dbname=lakestar_scale \
        --rows 400000 --writers 1,2,4

It drops and recreates its own tables (`scale_files`, `scale_descriptions`,
`scale_ranges`) in the database given.
"""

import argparse
import random
import threading
import time

import psycopg

BATCH = 512  # rows per transaction, as `CatalogWriter::apply` batches
RANGE_ROWS = 10_000  # objects per lease (a key range)
BLOB = 700  # bytes of a compressed description (1M lake: 300.9 MB / ~430k blobs)
PARTITIONS = 16


def schema(conn):
    conn.execute(
        """
        DROP TABLE IF EXISTS scale_files, scale_descriptions, scale_ranges;
        CREATE TABLE scale_files (
            range_id integer NOT NULL,
            path text NOT NULL,
            size bigint NOT NULL,
            mtime bigint NOT NULL,
            etag text NOT NULL,
            content bytea NOT NULL,
            analyzer text NOT NULL,
            template bigint,
            state smallint NOT NULL,
            PRIMARY KEY (range_id, path)
        ) PARTITION BY HASH (range_id);
        CREATE TABLE scale_descriptions (
            content bytea NOT NULL,
            analyzer text NOT NULL,
            blob bytea NOT NULL,
            PRIMARY KEY (content, analyzer)
        );
        CREATE TABLE scale_ranges (
            id integer PRIMARY KEY,
            holder text,
            lease_until timestamptz,
            done_run bigint NOT NULL DEFAULT 0
        );
        """
    )
    for p in range(PARTITIONS):
        conn.execute(
            f"CREATE TABLE scale_files_{p} PARTITION OF scale_files "
            f"FOR VALUES WITH (MODULUS {PARTITIONS}, REMAINDER {p})"
        )
    conn.commit()


def rows_of(range_id, start, n, rng):
    """`n` file rows of a range, paths in key order, each with its description."""
    out = []
    for i in range(start, start + n):
        path = f"lake/2025/{range_id % 12 + 1:02}/{range_id:06}/part-{i:06}_{rng.randrange(10**6):06}.csv"
        content = rng.randbytes(32)
        out.append(
            (
                range_id,
                path,
                rng.randrange(1, 10**7),
                1_760_000_000_000_000_000 + i,
                content.hex()[:32],
                content,
                "delimited@7",
                range_id,
                0,
                rng.randbytes(BLOB),
            )
        )
    return out


def write(dsn, ranges, stats, lock):
    """Describe-and-commit as a worker does: per range, batches of BATCH rows, each one
    transaction holding the descriptions and the rows that point at them."""
    rng = random.Random(ranges[0] if ranges else 0)
    with psycopg.connect(dsn) as conn:
        for r in ranges:
            for start in range(0, RANGE_ROWS, BATCH):
                rows = rows_of(r, start, min(BATCH, RANGE_ROWS - start), rng)
                with conn.transaction():
                    with conn.cursor() as cur:
                        cur.executemany(
                            "INSERT INTO scale_descriptions(content, analyzer, blob) "
                            "VALUES (%s, %s, %s) ON CONFLICT DO NOTHING",
                            [(x[5], x[6], x[9]) for x in rows],
                        )
                        cur.executemany(
                            "INSERT INTO scale_files(range_id, path, size, mtime, etag, content, analyzer, template, state) "
                            "VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s) "
                            "ON CONFLICT (range_id, path) DO UPDATE SET size = excluded.size, "
                            "mtime = excluded.mtime, etag = excluded.etag, content = excluded.content, "
                            "analyzer = excluded.analyzer, state = excluded.state",
                            [x[:9] for x in rows],
                        )
                with lock:
                    stats["rows"] += len(rows)


def write_copy(dsn, ranges, stats, lock):
    """[`write`] with each batch COPYed into a temporary table and upserted from it in the
    same transaction: what a worker would do at scale (one round trip per batch)."""
    rng = random.Random(ranges[0] if ranges else 0)
    with psycopg.connect(dsn) as conn:
        conn.execute(
            "CREATE TEMPORARY TABLE batch_rows (range_id integer, path text, size bigint, "
            "mtime bigint, etag text, content bytea, analyzer text, template bigint, "
            "state smallint, blob bytea) ON COMMIT DELETE ROWS"
        )
        conn.commit()
        for r in ranges:
            for start in range(0, RANGE_ROWS, BATCH):
                rows = rows_of(r, start, min(BATCH, RANGE_ROWS - start), rng)
                with conn.transaction():
                    with conn.cursor() as cur:
                        with cur.copy("COPY batch_rows FROM STDIN") as copy:
                            for x in rows:
                                copy.write_row(x)
                        cur.execute(
                            "INSERT INTO scale_descriptions(content, analyzer, blob) "
                            "SELECT content, analyzer, blob FROM batch_rows ON CONFLICT DO NOTHING"
                        )
                        cur.execute(
                            "INSERT INTO scale_files(range_id, path, size, mtime, etag, content, analyzer, template, state) "
                            "SELECT range_id, path, size, mtime, etag, content, analyzer, template, state FROM batch_rows "
                            "ON CONFLICT (range_id, path) DO UPDATE SET size = excluded.size, "
                            "mtime = excluded.mtime, etag = excluded.etag, content = excluded.content, "
                            "analyzer = excluded.analyzer, state = excluded.state"
                        )
                with lock:
                    stats["rows"] += len(rows)


def classify_reads(dsn, ranges, stats, lock):
    """The catalog side of classifying one range's listing: its rows in key order."""
    with psycopg.connect(dsn) as conn:
        for r in ranges:
            n = 0
            with conn.cursor() as cur:
                cur.execute(
                    "SELECT path, size, mtime, etag, state FROM scale_files "
                    "WHERE range_id = %s ORDER BY path",
                    (r,),
                )
                for _ in cur:
                    n += 1
            with lock:
                stats["rows"] += n


def leases(dsn, count, stats, lock, me):
    """Take and release leases: the one contended statement of the design."""
    with psycopg.connect(dsn, autocommit=True) as conn:
        for _ in range(count):
            row = conn.execute(
                "UPDATE scale_ranges SET holder = %s, lease_until = now() + interval '60 s' "
                "WHERE id = (SELECT id FROM scale_ranges WHERE holder IS NULL OR lease_until < now() "
                "ORDER BY done_run, id LIMIT 1 FOR UPDATE SKIP LOCKED) RETURNING id",
                (me,),
            ).fetchone()
            if row:
                conn.execute(
                    "UPDATE scale_ranges SET holder = NULL, done_run = done_run + 1 WHERE id = %s",
                    (row[0],),
                )
            with lock:
                stats["rows"] += 1


def timed(threads):
    started = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return time.perf_counter() - started


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--dsn", default="dbname=lakestar_scale")
    ap.add_argument("--rows", type=int, default=400_000, help="rows written per writer count")
    ap.add_argument("--writers", default="1,2,4")
    args = ap.parse_args()
    counts = [int(x) for x in args.writers.split(",")]
    with psycopg.connect(args.dsn) as conn:
        schema(conn)
    next_range = 0
    print("| batches | writers | rows | wall | rows/s | batches/s |")
    print("|---|---:|---:|---:|---:|---:|")
    for how, w in [("INSERT", w) for w in counts] + [("COPY", w) for w in counts]:
        ranges = list(range(next_range, next_range + args.rows // RANGE_ROWS))
        next_range += len(ranges)
        stats, lock = {"rows": 0}, threading.Lock()
        threads = [
            threading.Thread(
                target=write if how == "INSERT" else write_copy,
                args=(args.dsn, ranges[i::w], stats, lock),
            )
            for i in range(w)
        ]
        wall = timed(threads)
        print(f"| {how} | {w} | {stats['rows']:,} | {wall:.1f} s | {stats['rows'] / wall:,.0f} | {stats['rows'] / BATCH / wall:.1f} |")
    with psycopg.connect(args.dsn, autocommit=True) as conn:
        conn.execute("VACUUM ANALYZE scale_files, scale_descriptions")
        total = conn.execute("SELECT count(*) FROM scale_files").fetchone()[0]
        files = conn.execute("SELECT pg_total_relation_size('scale_files') + "
                             "(SELECT coalesce(sum(pg_total_relation_size(c.oid)), 0) FROM pg_inherits i "
                             "JOIN pg_class c ON c.oid = i.inhrelid WHERE i.inhparent = 'scale_files'::regclass)").fetchone()[0]
        descs = conn.execute("SELECT pg_total_relation_size('scale_descriptions')").fetchone()[0]
        conn.execute("INSERT INTO scale_ranges(id) SELECT g FROM generate_series(0, 9999) g")
    print(f"\nsize: {total:,} file rows {files / total:.0f} B a row with its indexes; "
          f"descriptions {descs / total:.0f} B a row ({BLOB} B blob)")
    all_ranges = list(range(next_range))
    for w in (1, 2):
        stats, lock = {"rows": 0}, threading.Lock()
        threads = [
            threading.Thread(target=classify_reads, args=(args.dsn, all_ranges[i::w], stats, lock))
            for i in range(w)
        ]
        wall = timed(threads)
        print(f"classify reads, {w} reader(s): {stats['rows']:,} rows in {wall:.2f} s, {stats['rows'] / wall:,.0f} rows/s")
    for w in (1, 4, 16):
        stats, lock = {"rows": 0}, threading.Lock()
        threads = [
            threading.Thread(target=leases, args=(args.dsn, 2000 // w, stats, lock, f"w{i}"))
            for i in range(w)
        ]
        wall = timed(threads)
        print(f"leases, {w} taker(s): {stats['rows']:,} take+release in {wall:.2f} s, {stats['rows'] / wall:,.0f}/s")


if __name__ == "__main__":
    main()
