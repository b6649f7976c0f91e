"""Read a table with DuckDB 1.5.5's iceberg extension (`iceberg_scan`) and print it as JSON.

usage: duckdb_read.py METADATA_JSON [SNAPSHOT_ID] [--where CONDITION]...

Prints {"rows" (canonical, see canon.py; typed by the current schema in the metadata file, or
the snapshot's schema), "count" (SELECT count(*)), "snapshots" (iceberg_snapshots: snapshot_id,
sequence_number), "filtered" (per --where, a DuckDB SQL condition, the sorted `id`s of the
rows `SELECT id FROM iceberg_scan(…) WHERE CONDITION` returns: its pruning, then the filter)}.
"""

import gzip
import json
import sys

import canon
import duckdb_env


def schema_of(metadata_path, snapshot_id):
    path = metadata_path.removeprefix("file://")
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt") as f:
        meta = json.load(f)
    schemas = meta.get("schemas") or [meta["schema"]]
    sid = meta.get("current-schema-id", schemas[0].get("schema-id"))
    if snapshot_id is not None:
        snap = next(s for s in meta.get("snapshots", []) if s["snapshot-id"] == snapshot_id)
        sid = snap.get("schema-id", sid)
    return next((s for s in schemas if s.get("schema-id") == sid), schemas[-1])


def main():
    positional, wheres = [], []
    argv = iter(sys.argv[1:])
    for arg in argv:
        if arg == "--where":
            wheres.append(next(argv))
        else:
            positional.append(arg)
    location = positional[0]
    snapshot_id = int(positional[1]) if len(positional) > 1 else None
    con = duckdb_env.connect()
    lit = "'" + location.replace("'", "''") + "'"
    args = lit + (f", snapshot_from_id = {snapshot_id}" if snapshot_id is not None else "")
    rows = con.execute(f"SELECT * FROM iceberg_scan({args})").fetchall()
    count = con.execute(f"SELECT count(*) FROM iceberg_scan({args})").fetchone()[0]
    snaps = con.execute(f"SELECT snapshot_id, sequence_number FROM iceberg_snapshots({lit}) ORDER BY sequence_number, timestamp_ms, snapshot_id").fetchall()
    canon.dump(
        {
            "rows": canon.canon_rows(rows, schema_of(location, snapshot_id)),
            "count": count,
            "snapshots": [{"snapshot_id": s, "sequence_number": n} for s, n in snaps],
            "filtered": [
                [r[0] for r in con.execute(f"SELECT id FROM iceberg_scan({args}) WHERE {w} ORDER BY id").fetchall()]
                for w in wheres
            ],
        }
    )


if __name__ == "__main__":
    main()
