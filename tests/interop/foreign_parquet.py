"""Write Parquet files the way other writers make them (pyarrow, DuckDB), for add_files.

usage: foreign_parquet.py DIR SHAPE

Writes the files of SHAPE under DIR (created) and prints {"files": [paths]}. Shapes:
- int96_utc: `f.parquet` of `id` (int32) and `ts`, `tz`: INT96 (Spark's and Impala's legacy
  timestamps, `use_deprecated_int96_timestamps`) of the nanoseconds -1500, 1500, -1000,
  -2000000001, null; `tz` carries Arrow's zone `UTC` in the file's Arrow schema.
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


SHAPES = {"int96_utc": int96_utc}


def main():
    out, shape = sys.argv[1], sys.argv[2]
    os.makedirs(out, exist_ok=True)
    print(json.dumps({"files": SHAPES[shape](out)}))


if __name__ == "__main__":
    main()
