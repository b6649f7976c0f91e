"""Write a few Iceberg tables with PyIceberg 0.12 into a SQLite `SqlCatalog` and print, as JSON,
what a reader must find in them.

usage: pyiceberg_write.py DB WAREHOUSE [--catalog NAME] [--namespace NS]

Creates the catalog database DB (PyIceberg's SqlCatalog tables) with namespace NS (default
`interop`) and tables, data under WAREHOUSE:
  types_v2   v2, unpartitioned; every primitive type (NaN/inf/-0.0, nulls, unicode); 2 appends
  part_v1    v1, identity(cat) + day(ts) + bucket(4, id) partitions, a null partition value; 2 appends
  evolve_v2  v2, identity(cat); 2 appends, a copy-on-write delete, schema evolution (add column,
             rename, int -> long), a third append
Prints {"catalog", "namespace", "tables": {NAME: {"ident", "format_version", "metadata_location",
"schema" (Iceberg JSON), "rows" (canonical, see canon.py), "snapshots": [{"snapshot_id",
"operation", "rows" (canonical, in the schema of that snapshot)}]}}}.
"""

import argparse
import datetime as dt
import decimal
import json
import uuid

import pyarrow as pa
from pyiceberg.catalog.sql import SqlCatalog
from pyiceberg.partitioning import PartitionField, PartitionSpec
from pyiceberg.schema import Schema
from pyiceberg.transforms import BucketTransform, DayTransform, IdentityTransform
from pyiceberg.types import (
    BinaryType,
    BooleanType,
    DateType,
    DecimalType,
    DoubleType,
    FixedType,
    FloatType,
    IntegerType,
    LongType,
    NestedField,
    StringType,
    TimestampType,
    TimestamptzType,
    TimeType,
    UUIDType,
)

import canon

UTC = dt.timezone.utc
D = decimal.Decimal


def schema_json(schema):
    return json.loads(schema.model_dump_json(by_alias=True))


def append(table, rows):
    table.append(pa.Table.from_pylist(rows, schema=table.schema().as_arrow()))


class Recorder:
    """Tracks the expected rows of one table snapshot by snapshot."""

    def __init__(self, table):
        self.table = table
        self.snapshots = []

    def snap(self, rows):
        self.table = self.table.refresh()
        s = self.table.current_snapshot()
        self.snapshots.append(
            {
                "snapshot_id": s.snapshot_id,
                "operation": s.summary.operation.value,
                "rows": canon.canon_rows(rows, schema_json(self.table.schema())),
            }
        )

    def result(self, rows):
        t = self.table.refresh()
        return {
            "ident": ".".join(t.name()),
            "format_version": t.metadata.format_version,
            "metadata_location": t.metadata_location,
            "schema": schema_json(t.schema()),
            "rows": canon.canon_rows(rows, schema_json(t.schema())),
            "snapshots": self.snapshots,
        }


def types_v2(catalog, ns):
    schema = Schema(
        NestedField(1, "id", LongType(), required=True),
        NestedField(2, "i", IntegerType()),
        NestedField(3, "f", FloatType()),
        NestedField(4, "d", DoubleType()),
        NestedField(5, "dec", DecimalType(12, 3)),
        NestedField(6, "s", StringType()),
        NestedField(7, "b", BinaryType()),
        NestedField(8, "fx", FixedType(4)),
        NestedField(9, "dt", DateType()),
        NestedField(10, "t", TimeType()),
        NestedField(11, "ts", TimestampType()),
        NestedField(12, "tstz", TimestamptzType()),
        NestedField(13, "flag", BooleanType()),
        NestedField(14, "u", UUIDType()),
    )
    table = catalog.create_table(f"{ns}.types_v2", schema=schema, properties={"format-version": "2"})
    rec = Recorder(table)
    batch1 = [
        dict(id=1, i=-7, f=1.5, d=2.25, dec=D("12.300"), s="a", b=b"\x00\x01", fx=b"abcd", dt=dt.date(2024, 1, 2),
             t=dt.time(1, 2, 3, 456789), ts=dt.datetime(2024, 1, 2, 3, 4, 5, 6), tstz=dt.datetime(2024, 1, 2, 3, 4, 5, 6, tzinfo=UTC),
             flag=True, u=uuid.UUID("12345678-1234-5678-1234-567812345678")),
        dict(id=2, i=2147483647, f=float("nan"), d=float("inf"), dec=D("-0.001"), s="", b=b"", fx=b"\xff\x00\xff\x00",
             dt=dt.date(1969, 12, 31), t=dt.time(0, 0), ts=dt.datetime(1969, 12, 31, 23, 59, 59, 999999),
             tstz=dt.datetime(1900, 1, 1, tzinfo=UTC), flag=False, u=uuid.UUID("00000000-0000-0000-0000-000000000000")),
        dict(id=3, i=None, f=None, d=None, dec=None, s=None, b=None, fx=None, dt=None, t=None, ts=None, tstz=None, flag=None, u=None),
    ]
    append(table, batch1)
    rec.snap(batch1)
    batch2 = [
        dict(id=4, i=-2147483648, f=-0.0, d=float("-inf"), dec=D("999999999.999"), s="héllo ✓ 𝄞", b=b"\xde\xad\xbe\xef",
             fx=b"\x00\x00\x00\x00", dt=dt.date(2262, 4, 11), t=dt.time(23, 59, 59, 999999), ts=dt.datetime(2000, 2, 29, 12, 0),
             tstz=dt.datetime(2030, 6, 15, 8, 30, tzinfo=dt.timezone(dt.timedelta(hours=2))), flag=True,
             u=uuid.UUID("ffffffff-ffff-ffff-ffff-ffffffffffff")),
        dict(id=5, i=0, f=3.4028234663852886e38, d=-0.0, dec=D("0.000"), s="x" * 100, b=None, fx=None,
             dt=dt.date(1, 1, 1), t=None, ts=None, tstz=None, flag=None, u=None),
    ]
    append(table, batch2)
    rec.snap(batch1 + batch2)
    return rec.result(batch1 + batch2)


def part_v1(catalog, ns):
    schema = Schema(
        NestedField(1, "id", LongType(), required=True),
        NestedField(2, "cat", StringType()),
        NestedField(3, "ts", TimestamptzType()),
        NestedField(4, "v", DoubleType()),
    )
    spec = PartitionSpec(
        PartitionField(source_id=2, field_id=1000, transform=IdentityTransform(), name="cat"),
        PartitionField(source_id=3, field_id=1001, transform=DayTransform(), name="ts_day"),
        PartitionField(source_id=1, field_id=1002, transform=BucketTransform(4), name="id_bucket"),
    )
    table = catalog.create_table(f"{ns}.part_v1", schema=schema, partition_spec=spec, properties={"format-version": "1"})
    rec = Recorder(table)
    t0 = dt.datetime(2024, 3, 1, 10, 0, tzinfo=UTC)
    batch1 = [dict(id=i, cat=["a", "b", None][i % 3], ts=t0 + dt.timedelta(hours=7 * i), v=i * 0.5) for i in range(12)]
    append(table, batch1)
    rec.snap(batch1)
    batch2 = [dict(id=100 + i, cat="c" if i % 2 else "a", ts=None if i == 3 else t0 - dt.timedelta(days=i), v=None) for i in range(6)]
    append(table, batch2)
    rec.snap(batch1 + batch2)
    return rec.result(batch1 + batch2)


def evolve_v2(catalog, ns):
    schema = Schema(
        NestedField(1, "id", LongType(), required=True),
        NestedField(2, "cat", StringType()),
        NestedField(3, "v", IntegerType()),
        NestedField(4, "amount", DecimalType(8, 2)),
    )
    spec = PartitionSpec(PartitionField(source_id=2, field_id=1000, transform=IdentityTransform(), name="cat"))
    table = catalog.create_table(f"{ns}.evolve_v2", schema=schema, partition_spec=spec, properties={"format-version": "2"})
    rec = Recorder(table)
    batch1 = [dict(id=i, cat="x" if i % 2 else "y", v=i * 10, amount=D(f"{i}.25")) for i in range(6)]
    append(table, batch1)
    rec.snap(batch1)
    batch2 = [dict(id=10 + i, cat="x", v=-i, amount=None) for i in range(3)]
    append(table, batch2)
    rows = batch1 + batch2
    rec.snap(rows)
    # copy-on-write delete (PyIceberg rewrites the files; no delete files)
    table = table.refresh()
    table.delete("id < 3 or id = 11")
    rows = [r for r in rows if not (r["id"] < 3 or r["id"] == 11)]
    rec.snap(rows)
    # schema evolution: int -> long, rename, add a column
    table = table.refresh()
    with table.update_schema() as u:
        u.update_column("v", field_type=LongType())
        u.rename_column("v", "val")
        u.add_column("note", StringType())
    rows = [dict(id=r["id"], cat=r["cat"], val=r["v"], amount=r["amount"], note=None) for r in rows]
    table = table.refresh()
    rec.table = table
    batch3 = [dict(id=20, cat="z", val=2**40, amount=D("-1.50"), note="new"), dict(id=21, cat="x", val=None, amount=None, note=None)]
    append(table, batch3)
    rows = rows + batch3
    rec.snap(rows)
    return rec.result(rows)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("db")
    p.add_argument("warehouse")
    p.add_argument("--catalog", default="default")
    p.add_argument("--namespace", default="interop")
    a = p.parse_args()
    catalog = SqlCatalog(a.catalog, uri=f"sqlite:///{a.db}", warehouse=f"file://{a.warehouse}")
    catalog.create_namespace(a.namespace)
    tables = {}
    for make in (types_v2, part_v1, evolve_v2):
        tables[make.__name__] = make(catalog, a.namespace)
    canon.dump({"catalog": a.catalog, "namespace": a.namespace, "tables": tables})


if __name__ == "__main__":
    main()
