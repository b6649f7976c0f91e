"""Check a partition statistics file against PyIceberg 0.12's reading of the manifests.

usage: partition_stats.py DB WAREHOUSE NAMESPACE.TABLE
       partition_stats.py --metadata FILE [--remap FROM TO]...

Loads the table from the SQLite catalog `default` (or, with --metadata, the metadata JSON
file FILE, whose stored locations under directory FROM are read under TO: the copies of
the shared corpus) — PyIceberg parses the metadata JSON, `partition-statistics` included —
and for every file in its `partition-statistics` list:

- reads the file with pyarrow: its schema (name, type, field id, nullability of each
  column and of each `partition` struct field) and its rows (partition values as
  {field id: value}, dates as days since the epoch);
- computes the expected rows independently from PyIceberg's own manifest reading
  (`Snapshot.manifests`, `ManifestFile.fetch_manifest_entry(discard_deleted=False)`),
  following the spec's "Partition Statistics File" and Java's `PartitionStatsHandler`:
  one row per (manifest spec id, partition tuple); live entries count their files by
  content (a position delete in Puffin is a deletion vector); every entry moves
  last_updated_* to its snapshot when that snapshot is later (timestamp, then for one
  millisecond sequence number, then place in the snapshot list) and still in the table;
- sorts the expected rows by partition (nulls first, field by field) then spec id.

Prints {"files": [{"snapshot_id", "file_size_in_bytes", "actual_size", "schema",
"rows", "expected"}]}.
"""

import argparse
import datetime as _dt
import json
import os
import sys

import pyarrow.parquet as pq
from pyiceberg.catalog.sql import SqlCatalog
from pyiceberg.table import StaticTable

EPOCH = _dt.date(1970, 1, 1)


def commit_order(meta, s):
    """A snapshot's (or a row's last update's) place in time: timestamp-ms, then for
    commits of one millisecond the sequence number, then the place in `snapshots`."""
    if isinstance(s, dict):
        s = meta.snapshot_by_id(s["last_updated_snapshot_id"])
    ids = [x.snapshot_id for x in meta.snapshots]
    place = ids.index(s.snapshot_id) if s.snapshot_id in ids else 0
    return (s.timestamp_ms, s.sequence_number or 0, place)


def plain(v):
    """A JSON-comparable value: dates as days, datetimes as µs, bytes as hex."""
    if isinstance(v, _dt.datetime):
        if v.tzinfo is None:
            v = v.replace(tzinfo=_dt.timezone.utc)
        return int(v.timestamp() * 1_000_000)
    if isinstance(v, _dt.date):
        return (v - EPOCH).days
    if isinstance(v, (bytes, bytearray)):
        return v.hex()
    return v


def local(path):
    """A `file:` location (`file:///x`, `file:/x`) as a path."""
    if path.startswith("file://"):
        return path[len("file://"):]
    if path.startswith("file:"):
        return path[len("file:"):]
    return path


class RemapIO:
    """The table's FileIO reading locations under FROM directories under TO ones."""

    def __init__(self, io, remaps):
        self.io = io
        self.remaps = remaps

    def map(self, location):
        p = local(location)
        for src, dst in self.remaps:
            if p == src or p.startswith(src + "/"):
                return dst + p[len(src):]
        return location

    def new_input(self, location):
        return self.io.new_input(self.map(location))


def field_id(field):
    md = field.metadata or {}
    v = md.get(b"PARQUET:field_id")
    return int(v) if v is not None else None


def file_schema(schema):
    out = []
    for f in schema:
        col = {"id": field_id(f), "name": f.name, "type": str(f.type), "nullable": f.nullable}
        if f.name == "partition":
            col["fields"] = [
                {"id": field_id(c), "name": c.name, "type": str(c.type), "nullable": c.nullable}
                for c in f.type
            ]
        out.append(col)
    return out


def sort_key(row, field_ids):
    key = []
    for fid in field_ids:
        v = row["partition"].get(str(fid))
        key.append((0, 0) if v is None else (1, v))
    return (key, row["spec_id"])


def expected_rows(table, io, snapshot_id, field_ids):
    meta = table.metadata
    snapshot = meta.snapshot_by_id(snapshot_id)
    specs = meta.specs()
    v3 = meta.format_version >= 3
    rows = {}
    for manifest in snapshot.manifests(io):
        spec = specs[manifest.partition_spec_id]
        for entry in manifest.fetch_manifest_entry(io=io, discard_deleted=False):
            f = entry.data_file
            part = {}
            for pos, pf in enumerate(spec.fields):
                if pf.field_id in field_ids:
                    part[str(pf.field_id)] = plain(f.partition[pos])
            for fid in field_ids:
                part.setdefault(str(fid), None)
            key = (manifest.partition_spec_id, json.dumps(part, sort_keys=True))
            row = rows.setdefault(key, {
                "partition": part, "spec_id": manifest.partition_spec_id,
                "data_record_count": 0, "data_file_count": 0,
                "total_data_file_size_in_bytes": 0, "position_delete_record_count": 0,
                "position_delete_file_count": 0, "equality_delete_record_count": 0,
                "equality_delete_file_count": 0, "total_record_count": None,
                "last_updated_at": None, "last_updated_snapshot_id": None,
            })
            if v3:
                row.setdefault("dv_count", 0)
            if entry.status.value != 2:  # live: added (1) or existing (0)
                content = int(f.content.value if hasattr(f.content, "value") else f.content)
                if content == 0:
                    row["data_record_count"] += f.record_count
                    row["data_file_count"] += 1
                    row["total_data_file_size_in_bytes"] += f.file_size_in_bytes
                elif content == 1:
                    row["position_delete_record_count"] += f.record_count
                    if "PUFFIN" in str(f.file_format).upper():
                        row["dv_count"] = row.get("dv_count", 0) + 1
                    else:
                        row["position_delete_file_count"] += 1
                else:
                    row["equality_delete_record_count"] += f.record_count
                    row["equality_delete_file_count"] += 1
            s = meta.snapshot_by_id(entry.snapshot_id)
            if s is not None and (row["last_updated_at"] is None
                                  or commit_order(meta, row) < commit_order(meta, s)):
                row["last_updated_at"] = s.timestamp_ms
                row["last_updated_snapshot_id"] = s.snapshot_id
    return sorted(rows.values(), key=lambda r: sort_key(r, field_ids))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("catalog", nargs="*")
    ap.add_argument("--metadata")
    ap.add_argument("--remap", nargs=2, action="append", default=[])
    a = ap.parse_args()
    if a.metadata:
        table = StaticTable.from_metadata(a.metadata)
    else:
        db, warehouse, ident = a.catalog
        catalog = SqlCatalog("default", uri=f"sqlite:///{db}", warehouse=f"file://{warehouse}")
        table = catalog.load_table(ident)
    io = RemapIO(table.io, [tuple(r) for r in a.remap])
    out = []
    for stats in table.metadata.partition_statistics:
        path = local(io.map(stats.statistics_path))
        pf = pq.read_table(path)
        schema = file_schema(pf.schema)
        field_ids = [c["id"] for c in schema[0].get("fields", [])]
        rows = []
        for r in pf.to_pylist():
            r["partition"] = {
                str(fid): plain(v) for fid, v in zip(field_ids, r["partition"].values())
            }
            rows.append({k: plain(v) if k != "partition" else v for k, v in r.items()})
        out.append({
            "snapshot_id": stats.snapshot_id,
            "file_size_in_bytes": stats.file_size_in_bytes,
            "actual_size": os.path.getsize(path),
            "schema": schema,
            "rows": rows,
            "expected": expected_rows(table, io, stats.snapshot_id, field_ids),
        })
    print(json.dumps({"files": out}))


if __name__ == "__main__":
    main()
