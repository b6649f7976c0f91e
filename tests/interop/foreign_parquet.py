"""Write Parquet files the way other writers make them (pyarrow, DuckDB), for add_files.

usage: foreign_parquet.py DIR SHAPE

Writes the files of SHAPE under DIR (created) and prints {"files": [paths]}. Shapes:
- int96_utc: `f.parquet` of `id` (int32) and `ts`, `tz`: INT96 (Spark's and Impala's legacy
  timestamps, `use_deprecated_int96_timestamps`) of the nanoseconds -1500, 1500, -1000,
  -2000000001, null; `tz` carries Arrow's zone `UTC` in the file's Arrow schema.
- int96_nanos: `f.parquet` of `id` (int32 1..5) and INT96 `ts`, `tz` (zone `UTC`), `s`
  (struct of `t`), `l` (list of one), `m` (map of `id` to it) of the nanoseconds -1500,
  1500, 1700000000123456789, -2000000001, null, and `far` (INT96 of year 3000-01-01 plus
  `id` microseconds; null in row 5).
- int96_out_of_range: `late/f.parquet` (`id`, INT96 `ts`: 2000-01-01, 2300-01-01) and
  `early/f.parquet` (`id`, struct `s` of INT96 `t`: 2000-01-01, 1600-01-01).
- required_nested: directories of one `f.parquet` each (pyarrow, every field optional) of
  `id` (int64), `s` (struct of int64 `a`), `l` (list of int64), `m` (map string → int64),
  `ls` (list of struct of int64 `b`): `fine` (null structs, lists and maps, empty lists,
  no null under a present parent), `struct_field` (a null `s.a` in a present `s`),
  `element` (a null element of `l`), `value` (a null value of `m`), `deep` (a null `b` in
  a present struct element of `ls`).
- unstated: required_nested's directories, and `bare_fine` (its `fine`), `bare_null_id`
  (`fine` with a null `id` in row 3), `bare_deep` (its `deep`), written without statistics
  (no null counts), one row a row group.
- paged: `f.parquet` of 10000 rows (row groups of 4000, pages of about 512 bytes, a page
  index) of `record_id` (int64 0..9999), `ts` (TIMESTAMP(NANOS) (record_id - 5000) * 1000
  - 500) and `s` (`v00000`..`v09999`).
"""

import json
import os
import sys

import pyarrow as pa
import pyarrow.parquet as pq

NANOS = [-1500, 1500, -1000, -2000000001, None]


def int96_utc(out):
    table = pa.table(
        {
            "id": pa.array([1, 2, 3, 4, 5], pa.int32()),
            "ts": pa.array(NANOS, pa.timestamp("ns")),
            "tz": pa.array(NANOS, pa.timestamp("ns", "UTC")),
        }
    )
    path = os.path.join(out, "f.parquet")
    pq.write_table(table, path, use_deprecated_int96_timestamps=True)
    return [path]


NS_NANOS = [-1500, 1500, 1700000000123456789, -2000000001, None]


def int96_nanos(out):
    ts = pa.array(NS_NANOS, pa.timestamp("ns"))
    far = 32503680000000000
    table = pa.table(
        {
            "id": pa.array([1, 2, 3, 4, 5], pa.int32()),
            "ts": ts,
            "tz": pa.array(NS_NANOS, pa.timestamp("ns", "UTC")),
            "s": pa.array([{"t": v} for v in NS_NANOS], pa.struct([("t", pa.timestamp("ns"))])),
            "l": pa.array([[v] for v in NS_NANOS], pa.list_(pa.timestamp("ns"))),
            "m": pa.array(
                [[(i, v)] for i, v in enumerate(NS_NANOS, 1)],
                pa.map_(pa.int32(), pa.timestamp("ns")),
            ),
            "far": pa.array([far + 1, far + 2, far + 3, far + 4, None], pa.timestamp("us")),
        }
    )
    path = os.path.join(out, "f.parquet")
    pq.write_table(table, path, use_deprecated_int96_timestamps=True)
    return [path]


def int96_out_of_range(out):
    us = pa.timestamp("us")
    y2000, y2300, y1600 = 946684800000000, 10413792000000000, -11676096000000000
    late = pa.table(
        {"id": pa.array([1, 2], pa.int32()), "ts": pa.array([y2000, y2300], us)}
    )
    early = pa.table(
        {
            "id": pa.array([1, 2], pa.int32()),
            "s": pa.array([{"t": y2000}, {"t": y1600}], pa.struct([("t", us)])),
        }
    )
    paths = []
    for name, table in [("late", late), ("early", early)]:
        os.makedirs(os.path.join(out, name), exist_ok=True)
        path = os.path.join(out, name, "f.parquet")
        pq.write_table(table, path, use_deprecated_int96_timestamps=True)
        paths.append(path)
    return paths


def required_nested(out):
    s_type = pa.struct([("a", pa.int64())])
    ls_type = pa.list_(pa.struct([("b", pa.int64())]))
    fine = {
        "id": [1, 2, 3],
        "s": [{"a": 1}, None, {"a": 3}],
        "l": [[1, 2], [], None],
        "m": [[("k", 1)], None, []],
        "ls": [[{"b": 1}, None], None, []],
    }
    broken = {
        "struct_field": ("s", [{"a": 1}, None, {"a": None}]),
        "element": ("l", [[1], None, [3, None]]),
        "value": ("m", [[("k", 1)], [("j", None)], None]),
        "deep": ("ls", [[{"b": 1}], [None, {"b": None}], None]),
    }
    types = {
        "id": pa.int64(),
        "s": s_type,
        "l": pa.list_(pa.int64()),
        "m": pa.map_(pa.string(), pa.int64()),
        "ls": ls_type,
    }
    paths = []
    for name in ["fine", *broken]:
        cols = dict(fine)
        if name in broken:
            column, values = broken[name]
            cols[column] = values
        table = pa.table({c: pa.array(v, types[c]) for c, v in cols.items()})
        os.makedirs(os.path.join(out, name), exist_ok=True)
        path = os.path.join(out, name, "f.parquet")
        pq.write_table(table, path)
        paths.append(path)
    return paths


def unstated(out):
    """required_nested's `fine` and two broken forms without statistics, a row a group."""
    required_nested(out)
    fine = pq.read_table(os.path.join(out, "fine", "f.parquet"))
    null_id = fine.set_column(0, "id", pa.array([1, 2, None], pa.int64()))
    deep = pq.read_table(os.path.join(out, "deep", "f.parquet"))
    paths = []
    for name, table in [("bare_fine", fine), ("bare_null_id", null_id), ("bare_deep", deep)]:
        os.makedirs(os.path.join(out, name), exist_ok=True)
        path = os.path.join(out, name, "f.parquet")
        pq.write_table(table, path, write_statistics=False, row_group_size=1)
        paths.append(path)
    return paths


def paged(out):
    ids = list(range(10000))
    table = pa.table(
        {
            "record_id": pa.array(ids, pa.int64()),
            "ts": pa.array([(i - 5000) * 1000 - 500 for i in ids], pa.timestamp("ns")),
            "s": pa.array([f"v{i:05d}" for i in ids]),
        }
    )
    path = os.path.join(out, "f.parquet")
    pq.write_table(
        table,
        path,
        write_page_index=True,
        data_page_size=512,
        row_group_size=4000,
        version="2.6",
    )
    return [path]


SHAPES = {
    "int96_utc": int96_utc,
    "int96_nanos": int96_nanos,
    "int96_out_of_range": int96_out_of_range,
    "paged": paged,
    "required_nested": required_nested,
    "unstated": unstated,
}


def main():
    out, shape = sys.argv[1], sys.argv[2]
    os.makedirs(out, exist_ok=True)
    print(json.dumps({"files": SHAPES[shape](out)}))


if __name__ == "__main__":
    main()
