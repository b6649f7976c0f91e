"""PyIceberg 0.12 and DuckDB 1.5.5 writing and reading Iceberg tables through a REST catalog
with data on S3 (tests/integration/rest_s3.rs runs it against SeaweedFS `weed mini`).

The catalog properties come as a JSON object in the environment variable ICEFLOE_REST_PROPS
(Iceberg's names: uri, credential, warehouse, s3.endpoint, s3.access-key-id,
s3.secret-access-key, s3.region, s3.path-style-access), so no secret is on a command line.

usage: rest_engines.py COMMAND ARGS…
  pyiceberg-write NS        tables appended, overwritten, deleted, evolved in NS (created)
  pyiceberg-read NS.T       PyIceberg's read of a table
  pyiceberg-append NS.T START COUNT
                            COUNT commits of one row each (id = START…), each retried after
                            a commit conflict from a refreshed table
  duckdb-write NS           table duck in NS: CREATE, INSERT, DELETE, UPDATE (DuckDB's
                            merge-on-read deletes)
  duckdb-read NS.T          DuckDB's read of a table

Every command prints JSON: rows in canonical form (canon.py) with the Iceberg schema.
"""

import json
import os
import sys
import time
from urllib.parse import urlparse

import pyarrow as pa
from pyiceberg.catalog.rest import RestCatalog
from pyiceberg.exceptions import CommitFailedException
from pyiceberg.types import IntegerType

import canon
import duckdb_env


def props():
    return json.loads(os.environ["ICEFLOE_REST_PROPS"])


def catalog():
    p = dict(props())
    p.pop("type", None)
    return RestCatalog("rest", **p)


def read(table):
    scan = table.scan()
    schema_json = json.loads(scan.projection().model_dump_json(by_alias=True))
    arrow = scan.to_arrow()
    return {
        "rows": canon.canon_rows(arrow.to_pylist(), schema_json),
        "schema": schema_json,
        "metadata_location": table.metadata_location,
        "snapshots": len(table.metadata.snapshots),
    }


def pyiceberg_write(ns):
    cat = catalog()
    cat.create_namespace(ns)
    schema = pa.schema([("id", pa.int64()), ("name", pa.string()), ("amount", pa.float64())])

    def batch(ids):
        return pa.table(
            {"id": ids, "name": [f"n{i % 3}" for i in ids], "amount": [i * 1.5 for i in ids]},
            schema=schema,
        )

    out = {}
    t = cat.create_table(f"{ns}.appended", schema=schema)
    t.append(batch([1, 2, 3]))
    t.append(batch([4, 5]))
    out["appended"] = read(cat.load_table(f"{ns}.appended"))

    t = cat.create_table(f"{ns}.overwritten", schema=schema)
    t.append(batch([1, 2, 3]))
    t.overwrite(batch([10, 11]))
    out["overwritten"] = read(cat.load_table(f"{ns}.overwritten"))

    t = cat.create_table(f"{ns}.deleted", schema=schema)
    t.append(batch([1, 2, 3, 4, 5, 6]))
    t.delete("id >= 4")
    out["deleted"] = read(cat.load_table(f"{ns}.deleted"))

    t = cat.create_table(f"{ns}.evolved", schema=schema)
    t.append(batch([1, 2]))
    with t.update_schema() as u:
        u.add_column("extra", IntegerType())
        u.rename_column("amount", "total")
    with t.update_spec() as s:
        s.add_identity("name")
    t = cat.load_table(f"{ns}.evolved")
    t.append(
        pa.table(
            {"id": [3, 4], "name": ["n0", "n1"], "total": [4.5, 6.0], "extra": [7, None]},
            schema=t.schema().as_arrow(),
        )
    )
    out["evolved"] = read(cat.load_table(f"{ns}.evolved"))
    return out


def pyiceberg_append(ident, start, count):
    cat = catalog()
    conflicts = 0
    for i in range(start, start + count):
        while True:
            t = cat.load_table(ident)
            arrow_schema = t.schema().as_arrow()
            try:
                t.append(pa.table({"id": [i]}, schema=arrow_schema))
                break
            except CommitFailedException:
                conflicts += 1
                time.sleep(0.01)
    return {"appended": count, "conflicts": conflicts}


def duckdb_connect():
    p = props()
    con = duckdb_env.connect(httpfs=True)
    endpoint = urlparse(p["s3.endpoint"])
    con.execute(
        "CREATE SECRET s3_secret (TYPE S3, KEY_ID ?, SECRET ?, ENDPOINT ?, URL_STYLE 'path', "
        "USE_SSL false, REGION ?)".replace("?", "'{}'").format(
            p["s3.access-key-id"], p["s3.secret-access-key"], endpoint.netloc, p["s3.region"]
        )
    )
    client_id, client_secret = p["credential"].split(":", 1)
    con.execute(
        "CREATE SECRET rest_secret (TYPE ICEBERG, CLIENT_ID '{}', CLIENT_SECRET '{}', "
        "OAUTH2_SERVER_URI '{}/v1/oauth/tokens')".format(client_id, client_secret, p["uri"])
    )
    con.execute(
        "ATTACH '{}' AS lake (TYPE ICEBERG, SECRET rest_secret, ENDPOINT '{}', "
        "ACCESS_DELEGATION_MODE 'none', READ_ONLY false)".format(p["warehouse"], p["uri"])
    )
    return con


def duckdb_rows(con, ident):
    ns, name = ident.rsplit(".", 1)
    cur = con.execute(f'SELECT * FROM lake."{ns}"."{name}"')
    cols = [d[0] for d in cur.description]
    rows = cur.fetchall()
    schema = json.loads(json.dumps(catalog().load_table(ident).schema().model_dump(by_alias=True)))
    by_name = {f["name"]: f for f in schema["fields"]}
    # DuckDB returns the columns in schema order; keep that order for the canonical rows
    fields = [by_name[c] for c in cols]
    schema_json = {"type": "struct", "fields": fields}
    return {
        "rows": canon.canon_rows([dict(zip(cols, r)) for r in rows], schema_json),
        "schema": schema_json,
    }


def duckdb_write(ns):
    con = duckdb_connect()
    con.execute(f'CREATE SCHEMA lake."{ns}"')
    con.execute(f'CREATE TABLE lake."{ns}".duck (id BIGINT, name VARCHAR)')
    con.execute(f"INSERT INTO lake.\"{ns}\".duck VALUES (1, 'a'), (2, 'b'), (3, 'c'), (4, 'd')")
    con.execute(f'DELETE FROM lake."{ns}".duck WHERE id = 2')
    updated = True
    try:
        con.execute(f"UPDATE lake.\"{ns}\".duck SET name = 'z' WHERE id = 3")
    except Exception as e:  # noqa: BLE001 - reported to the test, which decides
        updated = str(e)
    out = duckdb_rows(con, f"{ns}.duck")
    out["updated"] = updated
    return out


def main():
    cmd, args = sys.argv[1], sys.argv[2:]
    if cmd == "pyiceberg-write":
        out = pyiceberg_write(args[0])
    elif cmd == "pyiceberg-read":
        out = read(catalog().load_table(args[0]))
    elif cmd == "pyiceberg-append":
        out = pyiceberg_append(args[0], int(args[1]), int(args[2]))
    elif cmd == "duckdb-write":
        out = duckdb_write(args[0])
    elif cmd == "duckdb-read":
        out = duckdb_rows(duckdb_connect(), args[0])
    else:
        raise SystemExit(f"unknown command {cmd}")
    canon.dump(out)


if __name__ == "__main__":
    main()
