"""Smoke check of the interop venv: PyIceberg (with its SQL catalog and pyiceberg-core) imports and
DuckDB loads the iceberg extension from site-packages, offline. Run by .ci/interop-venv."""

import duckdb_env

import pyiceberg
import pyiceberg.catalog.sql  # noqa: F401  (sqlalchemy)
import pyiceberg_core  # noqa: F401  (bucket/truncate writes)
import pyarrow

con = duckdb_env.connect()
version = con.execute("SELECT extension_version FROM duckdb_extensions() WHERE extension_name = 'iceberg'").fetchone()
print(f"pyiceberg {pyiceberg.__version__}, pyarrow {pyarrow.__version__}, duckdb {duckdb_env.duckdb.__version__}, iceberg extension {version[0]}")
