"""A DuckDB connection with the avro and iceberg extensions (and, for s3://, httpfs) loaded
from the PyPI packages `duckdb-extension-avro` / `duckdb-extension-iceberg` /
`duckdb-extension-httpfs` (no extension download, works offline)."""

import os

import duckdb
import duckdb_extension_avro
import duckdb_extension_iceberg


def _extension(module, name):
    base = os.path.dirname(module.__file__)
    path = os.path.join(base, "extensions", "v" + duckdb.__version__, name + ".duckdb_extension")
    if not os.path.isfile(path):
        raise SystemExit(f"{path} is missing: duckdb {duckdb.__version__} needs {module.__name__} of the same version")
    return path


def connect(httpfs=False):
    con = duckdb.connect(config={"autoinstall_known_extensions": "false", "autoload_known_extensions": "false"})
    if httpfs:
        import duckdb_extension_httpfs

        con.execute(f"LOAD '{_extension(duckdb_extension_httpfs, 'httpfs')}'")
    con.execute(f"LOAD '{_extension(duckdb_extension_avro, 'avro')}'")
    con.execute(f"LOAD '{_extension(duckdb_extension_iceberg, 'iceberg')}'")
    con.execute("SET TimeZone = 'UTC'")
    return con
