#!/usr/bin/env python3
"""An independent reader and writer of the safetensors format, written from the format's
description with only `json` and `struct`, so lazytrain's files are checked against the format
rather than against lazytrain's own reader.

  read_safetensors.py read FILE   checks FILE is laid out as Python's `safetensors` writes it and
                                  prints its contents as JSON (below)
  read_safetensors.py write FILE  writes a file of known tensors, laid out differently from
                                  lazytrain's writer but legal, and prints its contents as JSON

The JSON: {"metadata": {key: value}, "tensors": {name: {"dtype", "shape", "values"}}}, values
flat in row-major order; floats as strings of Python's repr ("1.5", "-0.0", "inf", "nan"), so
every bit pattern but NaN's payload survives the trip.
"""
import json
import struct
import sys

# name: (struct code, bytes, alignment rank in the safetensors library's dtype order)
DTYPES = {
    "BOOL": ("?", 1, 0),
    "F16": ("e", 2, 1),
    "BF16": (None, 2, 2),
    "I32": ("i", 4, 3),
    "F32": ("f", 4, 4),
    "F64": ("d", 8, 5),
    "I64": ("q", 8, 6),
}


def fail(msg):
    sys.exit("read_safetensors.py: " + msg)


def decode(dtype, raw):
    code, size, _ = DTYPES[dtype]
    n = len(raw) // size
    if dtype == "BF16":  # the upper half of an f32
        halves = struct.unpack("<%dH" % n, raw)
        return [struct.unpack("<f", struct.pack("<I", h << 16))[0] for h in halves]
    return list(struct.unpack("<%d%s" % (n, code), raw))


def encode(dtype, values):
    code, _, _ = DTYPES[dtype]
    if dtype == "BF16":
        words = [struct.unpack("<I", struct.pack("<f", v))[0] for v in values]
        if any(w & 0xFFFF for w in words):
            fail("value not exact in bf16")
        return struct.pack("<%dH" % len(values), *[w >> 16 for w in words])
    return struct.pack("<%d%s" % (len(values), code), *values)


def as_json(dtype, values):
    floating = dtype in ("F16", "BF16", "F32", "F64")
    return [repr(float(v)) if floating else v for v in values]


def numel(shape):
    n = 1
    for d in shape:
        n *= d
    return n


def unique_keys(pairs):
    obj = dict(pairs)
    if len(obj) != len(pairs):
        fail("a key appears twice in one object")
    return obj


def read(path):
    with open(path, "rb") as f:
        data = f.read()
    (n,) = struct.unpack("<Q", data[:8])
    text = data[8:8 + n].decode("utf-8")
    compact = text.rstrip(" ")
    if (8 + n) % 8 or len(text) - len(compact) >= 8:
        fail("header not padded with spaces to the next multiple of 8")
    header = json.loads(compact, object_pairs_hook=unique_keys)
    if json.dumps(header, separators=(",", ":"), ensure_ascii=False) != compact:
        fail("header is not compact JSON")
    buf = data[8 + n:]
    out = {"metadata": header.pop("__metadata__", {}), "tensors": {}}
    if out["metadata"] and not compact.startswith('{"__metadata__":'):
        fail("__metadata__ is not first")
    if list(out["metadata"]) != sorted(out["metadata"]):
        fail("metadata keys not sorted")
    offset = 0
    order = []
    for name, info in header.items():
        if list(info) != ["dtype", "shape", "data_offsets"]:
            fail("entry keys of %s: %s" % (name, list(info)))
        dtype, shape, (begin, end) = info["dtype"], info["shape"], info["data_offsets"]
        if begin != offset or end - begin != numel(shape) * DTYPES[dtype][1]:
            fail("offsets of %s not contiguous or not its size" % name)
        offset = end
        order.append((-DTYPES[dtype][2], name.encode("utf-8")))
        raw = buf[begin:end]
        if dtype == "BOOL" and any(b > 1 for b in raw):
            fail("BOOL byte other than 0 or 1 in %s" % name)
        out["tensors"][name] = {"dtype": dtype, "shape": shape,
                                "values": as_json(dtype, decode(dtype, raw))}
    if offset != len(buf):
        fail("data buffer is %d bytes, tensors cover %d" % (len(buf), offset))
    if order != sorted(order):
        fail("tensors not ordered by dtype alignment, then name")
    return out


# Known tensors for the loader: every dtype, 0-d, empty, extremes, -0.0, inf.
KNOWN = [
    ("zeta.f32", "F32", [2, 3], [0.0, -1.5, 3.25, 1e-30, -0.0, float("inf")]),
    ("w.f64", "F64", [3], [0.1, -2.0, 1e300]),
    ("v.i32", "I32", [4], [-2147483648, -1, 0, 2147483647]),
    ("u.i64", "I64", [2], [-9223372036854775808, 9223372036854775807]),
    ("t.bool", "BOOL", [2, 2], [True, False, False, True]),
    ("s.f16", "F16", [3], [1.0, -0.5, 65504.0]),
    ("r.bf16", "BF16", [2], [1.5, -3.0]),
    ("q.scalar", "F32", [], [42.0]),
    ("p.empty", "F64", [0, 3], []),
]
META = {"step": "12", "note": "written by read_safetensors.py"}


def write(path):
    # Legal but not what lazytrain writes: JSON with spaces, metadata last, tensors in reverse
    # name order, data in header order (not by alignment), no padding of the header.
    header, blobs, offset = {}, [], 0
    for name, dtype, shape, values in KNOWN:
        raw = encode(dtype, values)
        header[name] = {"shape": shape, "data_offsets": [offset, offset + len(raw)],
                        "dtype": dtype}
        blobs.append(raw)
        offset += len(raw)
    header["__metadata__"] = META
    text = json.dumps(header).encode("utf-8")
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + b"".join(blobs))
    # The values as stored (1e-30 rounded to f32, ...), read back through this script's decoder.
    tensors = {name: {"dtype": dtype, "shape": shape,
                      "values": as_json(dtype, decode(dtype, encode(dtype, values)))}
               for name, dtype, shape, values in KNOWN}
    return {"metadata": META, "tensors": tensors}


if __name__ == "__main__":
    if len(sys.argv) != 3 or sys.argv[1] not in ("read", "write"):
        sys.exit(__doc__)
    result = read(sys.argv[2]) if sys.argv[1] == "read" else write(sys.argv[2])
    print(json.dumps(result))
