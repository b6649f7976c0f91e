"""Read the row lineage of a v3 table with DuckDB 1.5.5's iceberg extension: `id`,
`_row_id` and `_last_updated_sequence_number` of every row (spec: "Row Lineage").

usage: duckdb_lineage.py METADATA_JSON

Prints {"rows": [[id, _row_id, _last_updated_sequence_number], ...]} ordered by id (nulls
as null).
"""

import sys

import canon
import duckdb_env


def main():
    lit = "'" + sys.argv[1].replace("'", "''") + "'"
    con = duckdb_env.connect()
    rows = con.execute(
        f"SELECT id, _row_id, _last_updated_sequence_number FROM iceberg_scan({lit}) ORDER BY id"
    ).fetchall()
    canon.dump({"rows": [list(r) for r in rows]})


if __name__ == "__main__":
    main()
