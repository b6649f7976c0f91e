"""The peers of benches/side_by_side.rs and benches/planning.rs: one long-lived process per
engine answering queries over the harness's Iceberg tables, so Python start-up and imports
are not timed.

    python benches/tpch_peers.py --engine duckdb|pyiceberg

Reads one JSON object per line on stdin and answers one JSON line on stdout:

* `{"cmd": "tables", "tables": {"lineitem": "/…/metadata/v2.metadata.json", …}}`: the
  tables a query may use, by name, each at its current metadata file (not timed).
  Answer `{"ok": true}`.
* `{"cmd": "query", "sql": "…", "out": "/…/result.arrow"}`: run the SQL once. The time is
  `time.perf_counter()` around the query only (to an Arrow table in memory); the result is
  then written as an Arrow IPC file to `out` when given (not timed). Answer
  `{"ok": true, "seconds": …, "rows": …}`, or `{"ok": false, "error": "…"}` when the
  engine fails (the process keeps serving).
* `{"cmd": "plan", "table": "t", "row_filter": "p = 17" | null, "limit": 10 | null,
  "count": false}` (pyiceberg only; benches/planning.rs): the time of
  `scan(row_filter=…, limit=…).plan_files()` (all of it: PyIceberg plans every file before
  a limit applies), or of `scan().count()` with `"count": true` (it plans the files and
  sums their record counts, reading no data file when there are no deletes). Answer
  `{"ok": true, "seconds": …, "result": <files planned, or the count>}`.

Engines:

* `duckdb`: DuckDB with its iceberg extension (loaded offline from the PyPI package, see
  tests/interop/duckdb_env.py); each table is a view over `iceberg_scan('<metadata file>')`,
  so every query reads the metadata file, manifest list and manifests again (DuckDB keeps no
  Iceberg metadata between queries), and the SQL runs as it is.
* `pyiceberg`: what a PyIceberg user does. Per query, each table the SQL names is scanned
  with `StaticTable.scan(selected_fields=…).to_arrow()` (no row filter), keeping only the
  columns the SQL mentions, and DuckDB runs the SQL over those Arrow tables. A column is
  "mentioned" when its name occurs as a word of the SQL (comments removed); TPC-H column
  names carry a per-table prefix (`l_`, `o_`, `ps_`, …), so a name identifies its table.
  The `StaticTable`s are loaded once by `tables` (not timed); the time covers the scans,
  the cast of `string_view` columns to `string` (see `plain_strings`), the registration of
  the Arrow tables and the SQL.
"""

import argparse
import json
import os
import re
import sys
import time
import traceback

import pyarrow as pa
import pyarrow.ipc

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "interop"))
import duckdb_env  # noqa: E402


def local_path(location):
    """A metadata location as a local path (DuckDB does not read `file:/` URIs)."""
    for prefix in ("file://", "file:"):
        if location.startswith(prefix):
            return location[len(prefix) :]
    return location


def plain_strings(table):
    """`table` with its `string_view` columns cast to `string`: DuckDB pushes filters into
    an Arrow scan through pyarrow compute, which has no `array_filter` kernel for
    `string_view` (pyarrow 26), and PyIceberg returns `string_view` for these files."""
    if not any(pa.types.is_string_view(f.type) for f in table.schema):
        return table
    return table.cast(pa.schema([f.with_type(pa.string()) if pa.types.is_string_view(f.type) else f for f in table.schema]))


def words(sql):
    """The lower-case identifiers of `sql`, `--` comments removed."""
    text = re.sub(r"--[^\n]*", " ", sql).lower()
    return set(re.findall(r"[a-z_][a-z0-9_]*", text))


class DuckDB:
    def __init__(self):
        self.con = duckdb_env.connect()
        self.con.execute("SET enable_progress_bar = false")

    def tables(self, tables):
        for name, location in tables.items():
            lit = "'" + local_path(location).replace("'", "''") + "'"
            self.con.execute(f'CREATE OR REPLACE VIEW "{name}" AS SELECT * FROM iceberg_scan({lit})')

    def query(self, sql):
        start = time.perf_counter()
        result = self.con.execute(sql).to_arrow_table()
        return result, time.perf_counter() - start


class PyIceberg:
    def __init__(self):
        self.con = duckdb_env.connect()
        self.con.execute("SET enable_progress_bar = false")
        self.static = {}

    def tables(self, tables):
        from pyiceberg.table import StaticTable

        self.static = {name: StaticTable.from_metadata(local_path(loc)) for name, loc in tables.items()}

    def columns(self, sql):
        """{table: [columns]} of the tables `sql` names, each with the columns it mentions
        (the first column when it mentions none, e.g. `count(*)`)."""
        used = words(sql)
        out = {}
        for name, table in self.static.items():
            if name not in used:
                continue
            fields = [f.name for f in table.schema().fields]
            out[name] = [f for f in fields if f.lower() in used] or fields[:1]
        return out

    def query(self, sql):
        wanted = self.columns(sql)
        start = time.perf_counter()
        for name, cols in wanted.items():
            arrow = plain_strings(self.static[name].scan(selected_fields=tuple(cols)).to_arrow())
            self.con.register(name, arrow)
        try:
            result = self.con.execute(sql).to_arrow_table()
        finally:
            seconds = time.perf_counter() - start
            for name in wanted:
                self.con.unregister(name)
        return result, seconds


    def plan(self, table, row_filter, limit, count):
        """Plan a scan of `table` (PyIceberg only): `scan(row_filter, limit).plan_files()`,
        or `scan().count()` with `count` (the record counts of the planned files)."""
        scan = self.static[table].scan(row_filter=row_filter or "true", limit=limit)
        start = time.perf_counter()
        result = scan.count() if count else len(list(scan.plan_files()))
        return result, time.perf_counter() - start


def write_ipc(table, path):
    with pa.OSFile(path, "wb") as sink, pyarrow.ipc.new_file(sink, table.schema) as writer:
        writer.write_table(table)


def versions(engine):
    from importlib.metadata import version

    duck = f"DuckDB {version('duckdb')}"
    if engine == "duckdb":
        return f"{duck}, duckdb-extension-iceberg {version('duckdb-extension-iceberg')}"
    return f"PyIceberg {version('pyiceberg')}, pyarrow {version('pyarrow')}, {duck} for the SQL"


def answer(obj):
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--engine", choices=["duckdb", "pyiceberg"], required=True)
    args = ap.parse_args()
    engine = DuckDB() if args.engine == "duckdb" else PyIceberg()
    answer({"ok": True, "versions": versions(args.engine)})
    for line in sys.stdin:
        if not line.strip():
            continue
        try:
            cmd = json.loads(line)
            if cmd["cmd"] == "tables":
                engine.tables(cmd["tables"])
                answer({"ok": True})
            elif cmd["cmd"] == "query":
                result, seconds = engine.query(cmd["sql"])
                if cmd.get("out"):
                    write_ipc(result, cmd["out"])
                answer({"ok": True, "seconds": seconds, "rows": result.num_rows})
            elif cmd["cmd"] == "plan" and isinstance(engine, PyIceberg):
                result, seconds = engine.plan(cmd["table"], cmd.get("row_filter"), cmd.get("limit"), cmd.get("count", False))
                answer({"ok": True, "seconds": seconds, "result": result})
            else:
                answer({"ok": False, "error": f"unknown command {cmd['cmd']!r} for {args.engine}"})
        except Exception as e:  # the harness shows the error in the query's cell
            traceback.print_exc(file=sys.stderr)
            first = (str(e).strip().splitlines() or [type(e).__name__])[0]
            answer({"ok": False, "error": f"{type(e).__name__}: {first}"})


if __name__ == "__main__":
    main()
