"""PyIceberg's side of benches/insert.rs: `table.append(pa_table)` of TPC-H lineitem.

    python benches/pyiceberg_append.py --parquet DIR [--partitioned] [--iterations 1]

Reads the Parquet files of DIR with pyarrow (not timed; `string_view` columns are cast
to `string` first, also not timed), then, per iteration, creates a PyIceberg
`SqlCatalog` (SQLite) in a fresh temp dir, a table of the same schema (unpartitioned or
`month(l_shipdate)`) and times only `table.append(pa_table)`. PyIceberg's defaults:
zstd, `write.target-file-size-bytes` 512 MiB. Prints one JSON object per iteration:
`{"seconds": …, "rows": …, "files": …, "bytes": …}`. benches/insert.rs runs it once per
iteration, interleaved with the Rust sides.
"""

import argparse
import glob
import json
import os
import sys
import tempfile
import time

import pyarrow as pa
import pyarrow.parquet as pq
from pyiceberg.catalog.sql import SqlCatalog
from pyiceberg.partitioning import PartitionField, PartitionSpec
from pyiceberg.transforms import MonthTransform


def read_lineitem(directory):
    files = sorted(glob.glob(os.path.join(directory, "*.parquet")))
    if not files:
        sys.exit(f"no Parquet files in {directory}")
    table = pa.concat_tables(pq.read_table(f) for f in files)
    fields = []
    for f in table.schema:
        t = f.type
        if t == pa.string_view():
            t = pa.string()
        fields.append(pa.field(f.name, t, f.nullable, f.metadata))
    return table.cast(pa.schema(fields))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--parquet", required=True)
    ap.add_argument("--partitioned", action="store_true")
    ap.add_argument("--iterations", type=int, default=1)
    args = ap.parse_args()
    data = read_lineitem(args.parquet)
    for _ in range(args.iterations):
        with tempfile.TemporaryDirectory(prefix="pyiceberg-append-") as tmp:
            catalog = SqlCatalog(
                "bench",
                uri=f"sqlite:///{tmp}/catalog.db",
                warehouse=f"file://{tmp}",
            )
            catalog.create_namespace("ns")
            table = catalog.create_table("ns.lineitem", schema=data.schema)
            if args.partitioned:
                with table.update_spec() as update:
                    update.add_field("l_shipdate", MonthTransform(), "l_shipdate_month")
            start = time.perf_counter()
            table.append(data)
            seconds = time.perf_counter() - start
            table = catalog.load_table("ns.lineitem")
            files = table.inspect.files()
            print(
                json.dumps(
                    {
                        "seconds": seconds,
                        "rows": sum(files["record_count"].to_pylist()),
                        "files": files.num_rows,
                        "bytes": sum(files["file_size_in_bytes"].to_pylist()),
                    }
                ),
                flush=True,
            )


if __name__ == "__main__":
    main()
