"""Compare icefloe's metadata tables with PyIceberg 0.12's `table.inspect.<name>()`.

usage: pyiceberg_inspect.py DB WAREHOUSE NAMESPACE.TABLE DIR [--snapshot-id ID]

DIR holds icefloe's metadata tables as Parquet files, `<name>.parquet` (`snapshots`,
`files`, ...; the snapshot-scoped ones read at --snapshot-id when given: `files`,
`data_files`, `delete_files`, `entries`, `partitions`; PyIceberg's `manifests` takes no
snapshot). For each such file
the script reads PyIceberg's table of that name and compares: the column names in order,
each column's Arrow type (timestamps by unit and zone only, list/map/struct field names
ignored) and the rows as multisets of canonical values (bytes as hex, timestamps as
microseconds, maps as sorted [key, value] pairs, floats with NaN as "NaN"), on the columns
and struct fields both tables have (the others are listed as `only_icefloe` /
`only_pyiceberg`). A table PyIceberg fails to build is reported as {"error": text}.

Prints {"tables": {name: {"rows": n, "differences": [text, ...], "only_icefloe": [column,
...], "only_pyiceberg": [...]}}}: empty differences mean the tables are equal up to the
known deviations listed below (types normalized, missing columns and fields listed, not
compared); the caller checks the listed columns (tests/integration/interop.rs).
"""

import argparse
import datetime as _dt
import decimal
import json
import math
import os

import pyarrow as pa
import pyarrow.parquet as pq
from pyiceberg.catalog.sql import SqlCatalog

# the tables PyIceberg reads at a snapshot (its `manifests` takes no snapshot id)
SNAPSHOT_SCOPED = {"files", "data_files", "delete_files", "entries", "partitions"}


def type_text(t):
    """An Arrow type as text, without nested field names and with strings unified."""
    if pa.types.is_timestamp(t):
        return f"timestamp[{t.unit},{t.tz}]"
    if pa.types.is_large_string(t) or pa.types.is_string(t) or pa.types.is_string_view(t):
        return "string"
    if pa.types.is_large_binary(t) or pa.types.is_binary(t) or pa.types.is_binary_view(t):
        return "binary"
    if pa.types.is_list(t) or pa.types.is_large_list(t):
        return f"list<{type_text(t.value_type)}>"
    if pa.types.is_map(t):
        return f"map<{type_text(t.key_type)},{type_text(t.item_type)}>"
    if pa.types.is_struct(t):
        return "struct<" + ",".join(f"{f.name}:{type_text(f.type)}" for f in t) + ">"
    return str(t)


def common(a, b):
    """The struct fields two Arrow types share, nested: {name: common(...)}; None for a
    non-struct. Lists and maps are looked through."""
    if pa.types.is_struct(a) and pa.types.is_struct(b):
        names = {f.name for f in b}
        return {f.name: common(f.type, b.field(f.name).type) for f in a if f.name in names}
    if (pa.types.is_list(a) or pa.types.is_large_list(a)) and (
        pa.types.is_list(b) or pa.types.is_large_list(b)
    ):
        return common(a.value_type, b.value_type)
    return None


def canon(v, keep=None, empty_null=False):
    """`v` in a comparable form; of a struct only the fields in `keep` (see `common`);
    with `empty_null`, empty maps and lists as null (PyIceberg's `entries`, see below)."""
    if v is None:
        return None
    if isinstance(v, bool):
        return v
    if isinstance(v, float):
        if math.isnan(v):
            return "NaN"
        if math.isinf(v):
            return "Infinity" if v > 0 else "-Infinity"
        return v
    if isinstance(v, (bytes, bytearray)):
        return bytes(v).hex()
    if isinstance(v, decimal.Decimal):
        return str(v)
    if isinstance(v, _dt.datetime):
        if v.tzinfo is not None:
            v = v.astimezone(_dt.timezone.utc).replace(tzinfo=None)
        return "ts:" + v.isoformat()
    if isinstance(v, (_dt.date, _dt.time)):
        return v.isoformat()
    if isinstance(v, dict):
        return {
            k: canon(x, (keep or {}).get(k), empty_null)
            for k, x in v.items()
            if keep is None or k in keep
        }
    if isinstance(v, list):
        if not v and empty_null:
            return None
        if v and all(isinstance(e, tuple) and len(e) == 2 for e in v):  # a map
            return sorted(([canon(k), canon(x)] for k, x in v), key=json.dumps)
        return [canon(e, keep, empty_null) for e in v]
    return v


def rows(column, keep, empty_null):
    return sorted(
        json.dumps(canon(v, keep, empty_null), sort_keys=True) for v in column.to_pylist()
    )


# PyIceberg 0.12's known deviations from Iceberg Java (which icefloe follows), by kind:
# - its timestamps are timestamp[ms] without a zone (Java: timestamptz, micros);
# - `content` / `status` are int8 and `file_format` / refs' `type` dictionary strings
#   (Java: int, string);
# - the files tables and `entries.data_file` lack the v3 fields (`first_row_id`,
#   `referenced_data_file`, `content_offset`, `content_size_in_bytes`) and
#   `entries.data_file` lacks `spec_id` (Java's `DataFile.getType` has them);
# - `all_manifests` has a `key_metadata` column Java's `AllManifestsTable` does not;
# - `readable_metrics` has a field per top-level column, a struct column too (Java:
#   per primitive leaf, `st.a`);
# - `entries.data_file`'s metrics maps are `{}` where the manifest holds none (null, as
#   Java and PyIceberg's own `files` show it): in `entries` empty maps and lists compare
#   as null, elsewhere `{}` and null differ;
# - `partitions.partition` has only the fields of the specs of the snapshot's manifests
#   (Java: every spec's, `Partitioning.partitionType`).
# Not normalized here (the caller knows where they apply):
# - the files tables of an unpartitioned table have an empty `partition` struct (Java
#   drops the column);
# - `partitions` groups by the file spec's field names, so files of specs `(k)` and
#   `(ts_day)` whose values are all null are two rows (Java: one, it compares the number of
#   fields a spec has, then the values), and takes `spec_id` from the first file it reads
#   (Java: from the file of the last committed snapshot, 0 when every file's snapshot has
#   expired);
# - `entries` and `partitions` fail on a table with no snapshot (Java: empty), `entries`
#   on a table with deletion vectors (their metrics maps are absent), and `manifests`
#   takes no snapshot id (Java's can be time-travelled).
# Types are compared with the first two normalized, values on the columns and struct
# fields both have; every other difference is reported.
def type_deviation(ours, theirs):
    """Whether icefloe's type `ours` and PyIceberg's `theirs` differ only as above."""
    if pa.types.is_timestamp(ours) and pa.types.is_timestamp(theirs):
        return ours.tz == "UTC" and theirs.tz is None and theirs.unit == "ms"
    if pa.types.is_int32(ours) and pa.types.is_int8(theirs):
        return True
    if pa.types.is_dictionary(theirs):
        return type_text(ours) == type_text(theirs.value_type)
    return pa.types.is_struct(ours) and pa.types.is_struct(theirs)


def compare(ours, theirs, empty_null):
    diffs = []
    shared = [c for c in ours.column_names if c in theirs.column_names]
    extra = [c for c in ours.column_names if c not in shared]
    missing = [c for c in theirs.column_names if c not in shared]
    if [c for c in theirs.column_names if c in shared] != shared:
        diffs.append(f"column order: icefloe {ours.column_names} / pyiceberg {theirs.column_names}")
    for field in ours.schema:
        if field.name in shared:
            a, b = field.type, theirs.schema.field(field.name).type
            if type_text(a) != type_text(b) and not type_deviation(a, b):
                diffs.append(f"type of {field.name}: icefloe {type_text(a)} / pyiceberg {type_text(b)}")
    if ours.num_rows != theirs.num_rows:
        diffs.append(f"rows: icefloe {ours.num_rows} / pyiceberg {theirs.num_rows}")
    for c in shared:
        keep = common(ours.schema.field(c).type, theirs.schema.field(c).type)
        a = rows(ours.column(c), keep, empty_null)
        b = rows(theirs.column(c), keep, empty_null)
        if a != b:
            only_a = sorted(set(a) - set(b))[:2]
            only_b = sorted(set(b) - set(a))[:2]
            diffs.append(f"values of {c}: only icefloe {only_a} / only pyiceberg {only_b}")
    return diffs, extra, missing


def main():
    p = argparse.ArgumentParser()
    p.add_argument("db")
    p.add_argument("warehouse")
    p.add_argument("ident")
    p.add_argument("dir")
    p.add_argument("--snapshot-id", type=int)
    a = p.parse_args()
    catalog = SqlCatalog("default", uri=f"sqlite:///{a.db}", warehouse=f"file://{a.warehouse}")
    table = catalog.load_table(a.ident)
    out = {}
    for f in sorted(os.listdir(a.dir)):
        if not f.endswith(".parquet"):
            continue
        name = f[: -len(".parquet")]
        ours = pq.read_table(os.path.join(a.dir, f))
        method = getattr(table.inspect, name)
        try:
            if name in SNAPSHOT_SCOPED and a.snapshot_id is not None:
                theirs = method(snapshot_id=a.snapshot_id)
            else:
                theirs = method()
        except Exception as e:  # PyIceberg fails on some tables: report, do not compare
            out[name] = {"error": f"{type(e).__name__}: {e}"}
            continue
        diffs, extra, missing = compare(ours, theirs, name == "entries")
        out[name] = {
            "rows": theirs.num_rows,
            "differences": diffs,
            "only_icefloe": extra,
            "only_pyiceberg": missing,
        }
    print(json.dumps({"tables": out}, indent=1))


if __name__ == "__main__":
    main()
