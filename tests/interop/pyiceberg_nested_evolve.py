"""Write a table with nested columns with PyIceberg 0.12, evolve the fields nested in them with
PyIceberg's own `update_schema()`, write again, and print, as JSON, what a reader must find.

usage: pyiceberg_nested_evolve.py DB WAREHOUSE [--catalog NAME] [--namespace NS]

Creates the catalog database DB (PyIceberg's SqlCatalog tables) with namespace NS (default
`interop`) and the v2 table `nested`:
  m   map<string, struct<c int, d string>>      d dropped, f string added, c int -> long
  l   list<struct<x int, y string>>             x dropped and added back as a string, y renamed
                                                to yy and moved first
  s   struct<a int, t struct<p float, q string>, mm map<int, struct<u int, v string>>>
                                                a dropped and added back, t.p float -> double,
                                                mm.value.u renamed to uu, mm.value.w date added
  lm  list<map<string, struct<a int, b string>>> b dropped, c added first, a int -> long
  ml  map<string, list<struct<p int, q string>>> q dropped, r string added, p int -> long
A struct under two lists/maps (`lm.element.value`, `ml.value.element`) gets no renamed field
and no field added back under a dropped one's name: PyIceberg 0.12 matches the fields there by
name, and reads a renamed field as null and a re-added one as the dropped one's values.
Prints {"ident", "metadata_location", "schema" (Iceberg JSON), "rows" (canonical, see canon.py:
the rows written, as the evolved schema reads them)}.
"""

import argparse
import datetime as dt
import json

import pyarrow as pa
from pyiceberg.catalog.sql import SqlCatalog
from pyiceberg.schema import Schema
from pyiceberg.types import (
    DateType,
    DoubleType,
    FloatType,
    IntegerType,
    ListType,
    LongType,
    MapType,
    NestedField,
    StringType,
    StructType,
)

import canon


def struct(*fields):
    return StructType(*fields)


def opt(field_id, name, field_type):
    return NestedField(field_id, name, field_type, required=False)


def schema():
    # ids are reassigned by create_table; only their uniqueness matters here
    return Schema(
        NestedField(1, "id", LongType(), required=True),
        opt(2, "m", MapType(3, StringType(), 4, struct(opt(5, "c", IntegerType()), opt(6, "d", StringType())), value_required=False)),
        opt(7, "l", ListType(8, struct(opt(9, "x", IntegerType()), opt(10, "y", StringType())), element_required=False)),
        opt(
            11,
            "s",
            struct(
                opt(12, "a", IntegerType()),
                opt(13, "t", struct(opt(14, "p", FloatType()), opt(15, "q", StringType()))),
                opt(16, "mm", MapType(17, IntegerType(), 18, struct(opt(19, "u", IntegerType()), opt(20, "v", StringType())), value_required=False)),
            ),
        ),
        opt(
            21,
            "lm",
            ListType(22, MapType(23, StringType(), 24, struct(opt(25, "a", IntegerType()), opt(26, "b", StringType())), value_required=False), element_required=False),
        ),
        opt(
            27,
            "ml",
            MapType(28, StringType(), 29, ListType(30, struct(opt(31, "p", IntegerType()), opt(32, "q", StringType())), element_required=False), value_required=False),
        ),
    )


BEFORE = [
    dict(
        id=1,
        m={"k1": {"c": 100, "d": "d100"}, "k2": None},
        l=[{"x": 1, "y": "y1"}, None],
        s={"a": 7, "t": {"p": 1.5, "q": "q1"}, "mm": {1: {"u": 10, "v": "v10"}}},
        lm=[{"x": {"a": 1, "b": "b1"}}, None],
        ml={"k": [{"p": 5, "q": "q5"}], "n": None},
    ),
    # (PyIceberg writes a null top-level map or list, or a null map in a struct, as an empty one)
    dict(id=2, m={}, l=[], s={"a": None, "t": None, "mm": {}}, lm=None, ml={}),
    dict(id=3, m={}, l=[], s=None, lm=[{}], ml=None),
]

# BEFORE as the evolved schema reads it (dropped fields gone, added ones null)
BEFORE_EVOLVED = [
    dict(
        id=1,
        m={"k1": {"c": 100, "f": None}, "k2": None},
        l=[{"yy": "y1", "x": None}, None],
        s={"t": {"p": 1.5, "q": "q1"}, "mm": {1: {"uu": 10, "v": "v10", "w": None}}, "a": None},
        lm=[{"x": {"c": None, "a": 1}}, None],
        ml={"k": [{"p": 5, "r": None}], "n": None},
    ),
    dict(id=2, m={}, l=[], s={"t": None, "mm": {}, "a": None}, lm=None, ml={}),
    dict(id=3, m={}, l=[], s=None, lm=[{}], ml=None),
]

AFTER = [
    dict(
        id=4,
        m={"k4": {"c": 2**40, "f": "f4"}},
        l=[{"yy": "y4", "x": "x4"}],
        s={"t": {"p": 0.25, "q": None}, "mm": {4: {"uu": 40, "v": None, "w": dt.date(2024, 2, 29)}}, "a": "a4"},
        lm=[{"z": {"c": 3, "a": -(2**40)}}],
        ml={"k": [{"p": 2**33, "r": "r4"}, None]},
    ),
]


def main():
    p = argparse.ArgumentParser()
    p.add_argument("db")
    p.add_argument("warehouse")
    p.add_argument("--catalog", default="default")
    p.add_argument("--namespace", default="interop")
    a = p.parse_args()
    catalog = SqlCatalog(a.catalog, uri=f"sqlite:///{a.db}", warehouse=f"file://{a.warehouse}")
    catalog.create_namespace(a.namespace)
    ident = f"{a.namespace}.nested"
    table = catalog.create_table(ident, schema=schema(), properties={"format-version": "2"})
    table.append(pa.Table.from_pylist(BEFORE, schema=table.schema().as_arrow()))
    with table.update_schema() as u:
        u.delete_column(("m", "value", "d"))
        u.add_column(("m", "value", "f"), StringType())
        u.update_column(("m", "value", "c"), LongType())
        u.delete_column(("l", "element", "x"))
        u.rename_column(("l", "element", "y"), "yy")
        u.delete_column(("s", "a"))
        u.update_column(("s", "t", "p"), DoubleType())
        u.rename_column(("s", "mm", "value", "u"), "uu")
        u.add_column(("s", "mm", "value", "w"), DateType())
        u.delete_column(("lm", "element", "value", "b"))
        u.update_column(("lm", "element", "value", "a"), LongType())
        u.delete_column(("ml", "value", "element", "q"))
        u.update_column(("ml", "value", "element", "p"), LongType())
    table = table.refresh()
    # added back under the names just dropped (new field ids), and moved
    with table.update_schema() as u:
        u.add_column(("l", "element", "x"), StringType())
        u.move_first(("l", "element", "yy"))
        u.add_column(("s", "a"), StringType())
        u.add_column(("lm", "element", "value", "c"), IntegerType())
        u.move_first(("lm", "element", "value", "c"))
        u.add_column(("ml", "value", "element", "r"), StringType())
    table = table.refresh()
    table.append(pa.Table.from_pylist(AFTER, schema=table.schema().as_arrow()))
    table = table.refresh()
    schema_json = json.loads(table.schema().model_dump_json(by_alias=True))
    canon.dump(
        {
            "ident": ident,
            "metadata_location": table.metadata_location,
            "schema": schema_json,
            "rows": canon.canon_rows(BEFORE_EVOLVED + AFTER, schema_json),
        }
    )


if __name__ == "__main__":
    main()
