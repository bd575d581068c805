import datetime, json, os, sys
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
from deltalake import write_deltalake
from pyiceberg.catalog.sql import SqlCatalog
from pyiceberg.partitioning import PartitionField, PartitionSpec
from pyiceberg.schema import Schema
from pyiceberg.transforms import IdentityTransform
from pyiceberg.types import DateType, LongType, NestedField, StringType

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
print(json.dumps({
    "snapshot": str(tbl.current_snapshot().snapshot_id),
    "metadata": os.path.relpath(tbl.metadata_location.removeprefix("file://"), lake),
}))
