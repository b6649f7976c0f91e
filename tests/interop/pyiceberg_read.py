"""Read a table with PyIceberg 0.12 through its SQLite `SqlCatalog` and print it as JSON.

usage: pyiceberg_read.py DB WAREHOUSE NAMESPACE.TABLE [SNAPSHOT_ID] [--catalog NAME]
       [--filter EXPR]...

Prints {"metadata_location", "format_version", "current_snapshot_id", "schema" (the Iceberg
JSON schema read: field ids, names, types), "rows" (canonical, see canon.py), "count",
"files" (file_path, record_count, partition of the live data files) and "snapshots"
(snapshot_id, parent_id, operation, sequence_number), "file_specs" (file_path -> spec_id of
the planned files), "default_spec_id", "specs" and "sort_order" (Iceberg JSON, as PyIceberg
parses them), "filtered" (per --filter, a row filter in PyIceberg's string syntax, the sorted
`id`s of the rows its scan returns: its partition and metrics pruning, then the filter)}.
"""

import argparse
import json

from pyiceberg.catalog.sql import SqlCatalog

import canon


def main():
    p = argparse.ArgumentParser()
    p.add_argument("db")
    p.add_argument("warehouse")
    p.add_argument("ident")
    p.add_argument("snapshot_id", nargs="?", type=int)
    p.add_argument("--catalog", default="default")
    p.add_argument("--filter", action="append", default=[])
    a = p.parse_args()
    catalog = SqlCatalog(a.catalog, uri=f"sqlite:///{a.db}", warehouse=f"file://{a.warehouse}")
    table = catalog.load_table(a.ident)
    scan = table.scan(snapshot_id=a.snapshot_id) if a.snapshot_id is not None else table.scan()
    schema = scan.projection()
    schema_json = json.loads(schema.model_dump_json(by_alias=True))
    arrow = scan.to_arrow()
    rows = canon.canon_rows(arrow.to_pylist(), schema_json)
    # the files the scan plans (live data files, with their delete files); not
    # table.inspect.files(), which fails on uuid column bounds in PyIceberg 0.12
    specs = table.specs()
    files = []
    file_specs = {}
    for task in scan.plan_files():
        file_specs[task.file.file_path] = task.file.spec_id
        for f in [task.file, *task.delete_files]:
            names = [pf.name for pf in specs[f.spec_id].fields]
            files.append(
                {
                    "file_path": f.file_path,
                    "content": int(f.content),
                    "record_count": f.record_count,
                    "partition": {n: canon.jsonable(f.partition[i]) for i, n in enumerate(names)},
                }
            )
    files = sorted({f["file_path"]: f for f in files}.values(), key=lambda f: f["file_path"])
    snapshots = [
        {
            "snapshot_id": s.snapshot_id,
            "parent_id": s.parent_snapshot_id,
            "operation": s.summary.operation.value if s.summary else None,
            "sequence_number": s.sequence_number,
        }
        for s in table.metadata.snapshots
    ]
    canon.dump(
        {
            "metadata_location": table.metadata_location,
            "format_version": table.metadata.format_version,
            "current_snapshot_id": table.metadata.current_snapshot_id,
            "schema": schema_json,
            "rows": rows,
            "count": len(rows),
            "files": files,
            "snapshots": snapshots,
            "file_specs": file_specs,
            "default_spec_id": table.metadata.default_spec_id,
            "specs": [json.loads(s.model_dump_json(by_alias=True)) for s in table.metadata.partition_specs],
            "sort_order": json.loads(table.sort_order().model_dump_json(by_alias=True)),
            "filtered": [
                sorted(
                    table.scan(row_filter=f, snapshot_id=a.snapshot_id, selected_fields=("id",))
                    .to_arrow()
                    .column("id")
                    .to_pylist()
                )
                for f in a.filter
            ],
        }
    )


if __name__ == "__main__":
    main()
