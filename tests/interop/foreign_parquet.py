"""Write Parquet files the way other writers make them (pyarrow, DuckDB), for add_files.

usage: foreign_parquet.py DIR SHAPE

Writes the files of SHAPE under DIR (created) and prints {"files": [paths]}. Shapes:
- int96_utc: `f.parquet` of `id` (int32) and `ts`, `tz`: INT96 (Spark's and Impala's legacy
  timestamps, `use_deprecated_int96_timestamps`) of the nanoseconds -1500, 1500, -1000,
  -2000000001, null; `tz` carries Arrow's zone `UTC` in the file's Arrow schema.
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


SHAPES = {"int96_utc": int96_utc, "paged": paged}


def main():
    out, shape = sys.argv[1], sys.argv[2]
    os.makedirs(out, exist_ok=True)
    print(json.dumps({"files": SHAPES[shape](out)}))


if __name__ == "__main__":
    main()
