"""Read a table's statistics files with PyIceberg 0.12 and Apache DataSketches (the Python
bindings of its C++ library, whose sketches Java's read): check that each theta sketch blob
deserializes, and that it is the very sketch DataSketches builds from the same values.

usage: theta_sketches.py DB WAREHOUSE NAMESPACE.TABLE VALUES_JSON

VALUES_JSON maps a field id to the column's non-null values, for columns whose values
DataSketches' Python `update` hashes as Iceberg's single-value form does (longs: 8 bytes
little-endian; strings: UTF-8 bytes; doubles: 8 bytes little-endian). Prints a list, one
entry per statistics file in table metadata: {"snapshot_id", "blobs": [{"type", "fields",
"ndv" (the property), "estimate" (of the deserialized sketch), "same_as_built" (null for a
field not in VALUES_JSON)}]}.
"""

import json
import struct
import sys
from urllib.parse import urlparse

import datasketches as ds
from pyiceberg.catalog.sql import SqlCatalog


def footer(data):
    """The Puffin footer's JSON (Puffin spec: magic, payload, length, flags, magic)."""
    assert data[:4] == b"PFA1" and data[-4:] == b"PFA1", "not a Puffin file"
    (length,) = struct.unpack("<I", data[-12:-8])
    flags = data[-8:-4]
    assert flags == b"\0\0\0\0", "compressed footer"
    payload = data[-12 - length : -12]
    assert data[-12 - length - 4 : -12 - length] == b"PFA1", "footer magic"
    return json.loads(payload)


def main():
    db, warehouse, ident, values_json = sys.argv[1:5]
    values = {int(k): v for k, v in json.loads(values_json).items()}
    catalog = SqlCatalog("default", uri=f"sqlite:///{db}", warehouse=f"file://{warehouse}")
    table = catalog.load_table(ident)
    out = []
    for stats in table.metadata.statistics:
        with open(urlparse(stats.statistics_path).path, "rb") as f:
            data = f.read()
        assert len(data) == stats.file_size_in_bytes, "file-size-in-bytes"
        meta = footer(data)
        assert stats.file_footer_size_in_bytes == len(data) - meta_start(data), "footer size"
        blobs = []
        for blob in meta["blobs"]:
            raw = data[blob["offset"] : blob["offset"] + blob["length"]]
            sketch = ds.compact_theta_sketch.deserialize(raw)
            same = None
            (field,) = blob["fields"]
            if field in values:
                built = ds.update_theta_sketch()
                for v in values[field]:
                    built.update(v)
                same = built.compact(True).serialize() == raw
            blobs.append(
                {
                    "type": blob["type"],
                    "fields": blob["fields"],
                    "ndv": blob["properties"]["ndv"],
                    "estimate": sketch.get_estimate(),
                    "same_as_built": same,
                }
            )
        # what table metadata says of the blobs is what the file says
        listed = [(b.type, b.fields, b.properties.get("ndv")) for b in stats.blob_metadata]
        assert listed == [(b["type"], b["fields"], b["ndv"]) for b in blobs], listed
        out.append({"snapshot_id": stats.snapshot_id, "blobs": blobs})
    print(json.dumps(out))


def meta_start(data):
    """Where the footer starts: its leading magic."""
    (length,) = struct.unpack("<I", data[-12:-8])
    return len(data) - 12 - length - 4


if __name__ == "__main__":
    main()
