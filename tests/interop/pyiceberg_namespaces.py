"""What PyIceberg 0.12's SQLite `SqlCatalog` sees of a namespace, as JSON.

usage: pyiceberg_namespaces.py DB WAREHOUSE NAMESPACE [--create-table NAME]

Prints {"namespaces" (list_namespaces(), each dotted), "properties"
(load_namespace_properties(NAMESPACE)), "table_location" (with --create-table: the location
of table NAMESPACE.NAME that PyIceberg creates (one int column `a`, one row appended), else
null)}. PyIceberg builds a new table's location from the namespace's `location` property.
"""

import argparse
import json

import pyarrow as pa
from pyiceberg.catalog.sql import SqlCatalog


def main():
    p = argparse.ArgumentParser()
    p.add_argument("db")
    p.add_argument("warehouse")
    p.add_argument("namespace")
    p.add_argument("--create-table")
    a = p.parse_args()
    catalog = SqlCatalog("default", uri=f"sqlite:///{a.db}", warehouse=f"file://{a.warehouse}")
    location = None
    if a.create_table:
        table = catalog.create_table(
            f"{a.namespace}.{a.create_table}", pa.schema([("a", pa.int32())])
        )
        table.append(pa.table({"a": pa.array([1], pa.int32())}))
        location = table.location()
    print(
        json.dumps(
            {
                "namespaces": [".".join(n) for n in catalog.list_namespaces()],
                "properties": catalog.load_namespace_properties(a.namespace),
                "table_location": location,
            }
        )
    )


if __name__ == "__main__":
    main()
