"""The canonical, type-preserving JSON form of table rows shared by the interop scripts and
tests/integration/interop.rs (which renders DataFusion batches the same way).

Values are rendered by their Iceberg type (the JSON type of the table schema, as in
metadata.json): integers as JSON numbers; float/double as numbers except "NaN", "Infinity",
"-Infinity", "-0.0"; decimals as strings with the type's scale ("12.300"); date "YYYY-MM-DD";
time "HH:MM:SS.ffffff"; timestamp "YYYY-MM-DDTHH:MM:SS.ffffff" and timestamptz the same in UTC
with a "Z"; binary and fixed as lowercase hex; uuid as its canonical hyphenated string; structs
as objects; lists as arrays; maps as arrays of [key, value] sorted by key. A row is an array of
its column values in schema order; rows are sorted by their JSON text (compare as multisets).
"""

import datetime as _dt
import decimal
import json
import math
import re
import uuid

_UTC = _dt.timezone.utc


def canon_float(v):
    v = float(v)
    if math.isnan(v):
        return "NaN"
    if math.isinf(v):
        return "Infinity" if v > 0 else "-Infinity"
    if v == 0.0 and math.copysign(1.0, v) < 0:
        return "-0.0"
    return v


def _frac(micro):
    return ".%06d" % micro


def _timestamp(v, tz):
    if isinstance(v, int):  # microseconds since the epoch
        v = _dt.datetime(1970, 1, 1) + _dt.timedelta(microseconds=v)
    if v.tzinfo is not None:
        v = v.astimezone(_UTC).replace(tzinfo=None)
    # four-digit years, as date.isoformat() (glibc's strftime("%Y") writes year 1 as "1")
    return v.isoformat(timespec="seconds") + _frac(v.microsecond) + ("Z" if tz else "")


def canon_value(v, ty):
    """`v` (a Python value from pyarrow's to_pylist or DuckDB) rendered by Iceberg type `ty`."""
    if v is None:
        return None
    if isinstance(ty, dict):
        kind = ty.get("type")
        if kind == "struct":
            get = (lambda f: v.get(f["name"])) if isinstance(v, dict) else None
            return {f["name"]: canon_value(get(f), f["type"]) for f in ty["fields"]}
        if kind == "list":
            return [canon_value(e, ty["element"]) for e in v]
        if kind == "map":
            if isinstance(v, dict) and set(v) == {"key", "value"}:
                items = list(zip(v["key"], v["value"]))
            elif isinstance(v, dict):
                items = list(v.items())
            else:
                items = [tuple(kv.values()) if isinstance(kv, dict) else tuple(kv) for kv in v]
            pairs = [[canon_value(k, ty["key"]), canon_value(x, ty["value"])] for k, x in items]
            return sorted(pairs, key=lambda p: json.dumps(p[0], sort_keys=True))
        raise ValueError(f"unknown type {ty!r}")
    if ty == "boolean":
        return bool(v)
    if ty in ("int", "long"):
        return int(v)
    if ty in ("float", "double"):
        return canon_float(v)
    m = re.fullmatch(r"decimal\(\s*(\d+)\s*,\s*(\d+)\s*\)", ty)
    if m:
        return format(decimal.Decimal(v), "." + m.group(2) + "f")
    if ty == "date":
        if isinstance(v, int):
            v = _dt.date(1970, 1, 1) + _dt.timedelta(days=v)
        return v.isoformat()
    if ty == "time":
        if isinstance(v, int):
            return "%02d:%02d:%02d" % (v // 3_600_000_000, v // 60_000_000 % 60, v // 1_000_000 % 60) + _frac(v % 1_000_000)
        return "%02d:%02d:%02d" % (v.hour, v.minute, v.second) + _frac(v.microsecond)
    if ty in ("timestamp", "timestamp_ns"):
        return _timestamp(v, False)
    if ty in ("timestamptz", "timestamptz_ns"):
        return _timestamp(v, True)
    if ty == "string":
        return str(v)
    if ty == "uuid":
        if isinstance(v, (bytes, bytearray)):
            return str(uuid.UUID(bytes=bytes(v)))
        return str(uuid.UUID(str(v)))
    if ty == "binary" or ty.startswith("fixed"):
        return bytes(v).hex()
    raise ValueError(f"unknown type {ty!r}")


def canon_rows(pyrows, schema_json):
    """Rows (dicts by column name, or sequences in schema order) -> sorted canonical rows."""
    fields = schema_json["fields"]
    out = []
    for r in pyrows:
        if isinstance(r, dict):
            out.append([canon_value(r.get(f["name"]), f["type"]) for f in fields])
        else:
            out.append([canon_value(x, f["type"]) for x, f in zip(r, fields)])
    return sorted(out, key=lambda row: json.dumps(row, sort_keys=True))


def jsonable(v):
    """Metadata values (partition tuples, summaries) without a schema: best-effort plain JSON."""
    if isinstance(v, dict):
        return {str(k): jsonable(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [jsonable(x) for x in v]
    if isinstance(v, float):
        return canon_float(v)
    if isinstance(v, decimal.Decimal):
        return str(v)
    if isinstance(v, _dt.datetime):
        return _timestamp(v, v.tzinfo is not None)
    if isinstance(v, (_dt.date, _dt.time)):
        return v.isoformat()
    if isinstance(v, (bytes, bytearray)):
        return bytes(v).hex()
    if isinstance(v, uuid.UUID):
        return str(v)
    return v


def dump(obj):
    """Print `obj` as JSON on stdout (the Rust helpers parse stdout)."""
    print(json.dumps(obj, sort_keys=True, allow_nan=False))
