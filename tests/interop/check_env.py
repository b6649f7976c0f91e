"""Smoke check of the interop venv: PyIceberg (with its SQL catalog and pyiceberg-core) imports,
DuckDB loads the iceberg and httpfs extensions from site-packages, offline, and SeaweedFS's
`weed` (the S3 + REST test server) runs. Run by .ci/interop-venv."""

import os
import subprocess
import sys

import duckdb_env

import pyiceberg
import pyiceberg.catalog.sql  # noqa: F401  (sqlalchemy)
import pyiceberg_core  # noqa: F401  (bucket/truncate writes)
import pyarrow

con = duckdb_env.connect(httpfs=True)
weed = os.path.join(os.path.dirname(sys.executable), "weed")
weed_version = subprocess.run([weed, "version"], capture_output=True, text=True, check=True).stdout.split("\n")[0]
version = con.execute("SELECT extension_version FROM duckdb_extensions() WHERE extension_name = 'iceberg'").fetchone()
print(f"pyiceberg {pyiceberg.__version__}, pyarrow {pyarrow.__version__}, duckdb {duckdb_env.duckdb.__version__}, iceberg extension {version[0]}, {weed_version}")
