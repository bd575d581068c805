import datetime, decimal, json, os, struct, sys, uuid
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
from deltalake import DeltaTable, write_deltalake
from pyiceberg.catalog.sql import SqlCatalog
from pyiceberg.expressions import EqualTo
from pyiceberg.partitioning import PartitionField, PartitionSpec
from pyiceberg.schema import Schema
from pyiceberg.transforms import IdentityTransform
from pyiceberg.types import BooleanType, DateType, DecimalType, DoubleType, LongType, NestedField, StringType, TimestampType

lake, scratch = sys.argv[1], sys.argv[2]

# Hive: pyarrow's partitioned dataset, two levels.
t = pa.table({
    "year": [2022, 2022, 2023, 2023, 2024],
    "region": ["eu", "us", "eu", "us", "eu"],
    "amount": [1.5, 2.5, 3.5, 4.5, 5.5],
    "units": [1, 2, 3, 4, 5],
})
pq.write_to_dataset(t, os.path.join(lake, "sales"), partition_cols=["year", "region"])

# Delta: three versions (create, append, overwrite).
d = os.path.join(lake, "orders")
write_deltalake(d, pd.DataFrame({"order_id": [1, 2, 3], "country": ["NO", "SE", "NO"], "qty": [10, 20, 30]}), partition_by=["country"])
write_deltalake(d, pd.DataFrame({"order_id": [4, 5], "country": ["DK", "NO"], "qty": [40, 50]}), mode="append")
write_deltalake(d, pd.DataFrame({"order_id": [6, 7, 8, 9], "country": ["SE", "SE", "DK", "FI"], "qty": [1, 2, 3, 4]}), mode="overwrite")

# Iceberg: a local SQL catalog, a partitioned table appended twice.
wh = os.path.join(lake, "warehouse")
os.makedirs(wh, exist_ok=True)
cat = SqlCatalog("local", uri=f"sqlite:///{scratch}/iceberg.db", warehouse=f"file://{wh}")
cat.create_namespace("shop")
schema = Schema(
    NestedField(1, "city", StringType(), required=False),
    NestedField(2, "day", DateType(), required=False),
    NestedField(3, "visits", LongType(), required=False),
)
spec = PartitionSpec(PartitionField(source_id=1, field_id=1000, transform=IdentityTransform(), name="city"))
tbl = cat.create_table("shop.visits", schema=schema, partition_spec=spec)
arrow = tbl.schema().as_arrow()
tbl.append(pa.table({"city": ["Oslo", "Bergen"], "day": [datetime.date(2024, 1, 1), datetime.date(2024, 1, 2)], "visits": [10, 20]}, schema=arrow))
tbl.append(pa.table({"city": ["Oslo", "Oslo", "Tromso"], "day": [datetime.date(2024, 2, 1), datetime.date(2024, 3, 5), datetime.date(2024, 3, 6)], "visits": [1, 2, 3]}, schema=arrow))

# Iceberg: an overwrite and a delete leave files of older snapshots in data/; only the
# current snapshot's manifests say which files are live, and their bounds the ranges.
prices = cat.create_table("shop.prices", schema=Schema(
    NestedField(1, "city", StringType(), required=False),
    NestedField(2, "day", DateType(), required=False),
    NestedField(3, "n", LongType(), required=False),
    NestedField(4, "price", DecimalType(9, 2), required=False),
    NestedField(5, "at", TimestampType(), required=False),
    NestedField(6, "ratio", DoubleType(), required=False),
    NestedField(7, "ok", BooleanType(), required=False),
), partition_spec=spec)
arrow = prices.schema().as_arrow()

def price_rows(cities, ns):
    return pa.table({
        "city": cities,
        "day": [datetime.date(2024, 5, n) for n in ns],
        "n": ns,
        "price": [decimal.Decimal("1.25") * n for n in ns],
        "at": [datetime.datetime(2024, 1, 1, 12, 0, n) for n in ns],
        "ratio": [n / 2 for n in ns],
        "ok": [n % 2 == 0 for n in ns],
    }, schema=arrow)

prices.append(price_rows(["Oslo", "Bergen"], [10, 20]))
prices.append(price_rows(["Oslo", "Tromso"], [1, 2]))
prices.overwrite(price_rows(["Oslo", "Oslo"], [5, 8]))
prices.append(price_rows(["Bergen"], [6]))
prices.delete(EqualTo("city", "Bergen"))
prices = cat.load_table("shop.prices")

# Delta: three commits, a checkpoint of the third, one commit after it; the commits the
# checkpoint holds are removed, as log clean-up does, so only the checkpoint has them.
def checkpointed(name):
    d = os.path.join(lake, name)
    write_deltalake(d, pd.DataFrame({"id": [1, 2], "kind": ["a", "b"]}), partition_by=["kind"])
    write_deltalake(d, pd.DataFrame({"id": [3, 4], "kind": ["c", "a"]}), mode="append")
    write_deltalake(d, pd.DataFrame({"id": [5], "kind": ["d"]}), mode="append")
    DeltaTable(d).create_checkpoint()
    write_deltalake(d, pd.DataFrame({"id": [6], "kind": ["e"]}), mode="append")
    log = os.path.join(d, "_delta_log")
    first = [json.loads(line) for line in open(os.path.join(log, f"{0:020}.json"))]
    for v in range(3):
        os.remove(os.path.join(log, f"{v:020}.json"))
    return log, 2, first

# A multi-part checkpoint: deltalake writes single-file checkpoints only, so its
# checkpoint is split into three parts named as the Delta protocol names them, and
# _last_checkpoint says `parts`, as Spark writes them (deltalake reads the result).
log, v, _ = checkpointed("events")
whole = os.path.join(log, f"{v:020}.checkpoint.parquet")
cp = pq.read_table(whole)
cuts = [0, 2, 4, cp.num_rows]
for i in range(3):
    part = cp.slice(cuts[i], cuts[i + 1] - cuts[i])
    pq.write_table(part, os.path.join(log, f"{v:020}.checkpoint.{i + 1:010}.{3:010}.parquet"))
os.remove(whole)
with open(os.path.join(log, "_last_checkpoint"), "w") as f:
    json.dump({"version": v, "size": cp.num_rows, "parts": 3}, f)

# A V2 checkpoint (deltalake writes none): the classic one rewritten as the protocol's
# UUID-named JSON checkpoint whose add and remove actions lie in a sidecar Parquet file,
# named by `v2Checkpoint` in _last_checkpoint (deltalake's QueryBuilder reads it).
log, v, first = checkpointed("clicks")
whole = os.path.join(log, f"{v:020}.checkpoint.parquet")
cp = pq.read_table(whole)
os.makedirs(os.path.join(log, "_sidecars"))
sidecar = f"{uuid.uuid4()}.parquet"
files = pc.or_(pc.is_valid(cp["add"]), pc.is_valid(cp["remove"]))
pq.write_table(cp.filter(files).select(["add", "remove"]), os.path.join(log, "_sidecars", sidecar))
os.remove(whole)
name = f"{v:020}.checkpoint.{uuid.uuid4()}.json"
with open(os.path.join(log, name), "w") as f:
    for action in [
        {"checkpointMetadata": {"version": v}},
        {"protocol": {"minReaderVersion": 3, "minWriterVersion": 7, "readerFeatures": ["v2Checkpoint"], "writerFeatures": ["v2Checkpoint"]}},
        next(a for a in first if "metaData" in a),
        {"sidecar": {"path": sidecar, "sizeInBytes": os.path.getsize(os.path.join(log, "_sidecars", sidecar)), "modificationTime": 1700000000000}},
    ]:
        f.write(json.dumps(action) + "\n")
with open(os.path.join(log, "_last_checkpoint"), "w") as f:
    json.dump({"version": v, "size": 4, "v2Checkpoint": {"path": name, "sizeInBytes": os.path.getsize(os.path.join(log, name)), "modificationTime": 1700000000000}}, f)

# Deletion vectors: deltalake's `delete` rewrites files even with
# delta.enableDeletionVectors, so the DELETE commit is written here as the protocol
# gives it: the table's protocol gains the deletionVectors feature, and the first file
# is removed and added again with an inline vector (storageType "i": the Z85 text of a
# RoaringBitmapArray, magic 1681511377 then 64-bit portable Roaring) deleting its rows
# at positions 1 and 3. deltalake's QueryBuilder reads the table with those rows gone.
d = os.path.join(lake, "returns")
write_deltalake(d, pd.DataFrame({"id": [1, 2, 3, 4], "reason": ["size", "late", "size", "broken"]}))
write_deltalake(d, pd.DataFrame({"id": [5, 6, 7], "reason": ["late", "size", "size"]}), mode="append")
log = os.path.join(d, "_delta_log")
add = next(json.loads(line)["add"] for line in open(os.path.join(log, f"{0:020}.json")) if '"add"' in line)
Z85 = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ.-:+=^!/*?&<>()[]{}@%$#"

def z85(b):
    b = b + b"\0" * (-len(b) % 4)
    words = (int.from_bytes(b[i:i + 4], "big") for i in range(0, len(b), 4))
    return "".join(Z85[w // 85 ** k % 85] for w in words for k in range(4, -1, -1))

rows = [1, 3]
# One 32-bit Roaring bitmap (no run containers: cookie 12346), one array container.
bitmap = struct.pack("<IIHHI", 12346, 1, 0, len(rows) - 1, 16) + b"".join(struct.pack("<H", r) for r in rows)
vector = struct.pack("<IQI", 1681511377, 1, 0) + bitmap
dv = {"storageType": "i", "pathOrInlineDv": z85(vector), "sizeInBytes": len(vector), "cardinality": len(rows)}
with open(os.path.join(log, f"{2:020}.json"), "w") as f:
    for action in [
        {"protocol": {"minReaderVersion": 3, "minWriterVersion": 7, "readerFeatures": ["deletionVectors"], "writerFeatures": ["deletionVectors"]}},
        {"add": dict(add, deletionVector=dv)},
        {"remove": {"path": add["path"], "deletionTimestamp": 1700000000000, "dataChange": True, "extendedFileMetadata": True, "partitionValues": {}, "size": add["size"]}},
        {"commitInfo": {"timestamp": 1700000000000, "operation": "DELETE"}},
    ]:
        f.write(json.dumps(action) + "\n")

print(json.dumps({
    "snapshot": str(tbl.current_snapshot().snapshot_id),
    "metadata": os.path.relpath(tbl.metadata_location.removeprefix("file://"), lake),
    "prices_snapshot": str(prices.current_snapshot().snapshot_id),
    "prices_metadata": os.path.relpath(prices.metadata_location.removeprefix("file://"), lake),
}))
