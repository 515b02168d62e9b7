#!/usr/bin/env bash
# Rebuilds the seed corpora under tests/fuzz/corpus/ (committed; run again when tests/ir/ grows):
# every graph of the golden IR tests, comment lines dropped, for the two IR targets; and small
# IDX files, plain and gzipped, well formed and not, for fuzz_idx. Also the IR targets'
# dictionary, tests/fuzz/ir.dict.
#   tests/fuzz/make_corpus.sh [dest]   writes dest/corpus/ and dest/ir.dict (default tests/fuzz;
#                                      the fuzz_inputs test makes them in a scratch folder and
#                                      compares)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
dest=${1:-$here}
for target in fuzz_ir_lower fuzz_ir_compile; do
  out="$dest/corpus/$target"
  rm -rf "$out" && mkdir -p "$out"
  while IFS= read -r f; do
    name=$(realpath --relative-to="$root/tests" "$f" | tr '/' '_')
    grep -v '^[[:space:]]*//' "$f" > "$out/$name"
  done < <(find "$root/tests/ir" "$root/tests/diff" -name '*.ir' -o -name '*.ir.bad' | sort)
done
out="$dest/corpus/fuzz_idx"
rm -rf "$out" && mkdir -p "$out"
python3 - "$out" <<'PY'
import gzip, struct, sys
out = sys.argv[1]
def idx(dims, data=None, magic=(0, 0, 8)):
    n = 1
    for d in dims:
        n *= d
    body = bytes((i * 7 + 3) % 256 for i in range(n)) if data is None else data
    return bytes(magic) + bytes([len(dims)]) + b"".join(struct.pack(">I", d) for d in dims) + body
files = {
    "labels_5": idx([5]),
    "images_3x4x4": idx([3, 4, 4]),
    "empty_0x28x28": idx([0, 28, 28]),
    "truncated": idx([4, 3, 3])[:-5],
    "trailing": idx([2, 2]) + b"\x01",
    "bad_type_0x0b": idx([2], magic=(0, 0, 0x0b)),
    "rank_8": idx([1, 1, 1, 1, 1, 1, 2, 1]),
    "header_only": idx([3, 2])[:12],
}
for name, data in files.items():
    open(f"{out}/{name}.idx", "wb").write(data)
# mtime=0: the same bytes on every run.
for name in ("labels_5", "images_3x4x4", "truncated"):
    open(f"{out}/{name}.idx.gz", "wb").write(gzip.compress(files[name], mtime=0))
open(f"{out}/cut_gzip.idx.gz", "wb").write(gzip.compress(files["images_3x4x4"], mtime=0)[:-9])
PY
# Small safetensors files for fuzz_safetensors: well formed (every dtype, metadata, an empty
# tensor, no tensors) and not (truncated, bad JSON, overlapping or out-of-range offsets, a size
# that does not match the shape, a bad BOOL byte).
st="$dest/corpus/fuzz_safetensors"
rm -rf "$st" && mkdir -p "$st"
python3 - "$st" <<'PY'
import json, struct, sys
out = sys.argv[1]
def st(tensors, metadata=None, header=None, tail=b""):
    h, data = {}, b""
    for name, (dtype, shape, raw) in tensors.items():
        h[name] = {"dtype": dtype, "shape": shape, "data_offsets": [len(data), len(data) + len(raw)]}
        data += raw
    if metadata is not None:
        h["__metadata__"] = metadata
    text = json.dumps(h, separators=(",", ":")).encode() if header is None else header
    text += b" " * (-len(text) % 8)
    return struct.pack("<Q", len(text)) + text + data + tail
f32 = struct.pack("<4f", 1.0, -2.5, 0.0, 3.0)
files = {
    "one_f32": st({"w": ("F32", [2, 2], f32)}),
    "dtypes": st({"a": ("BOOL", [3], b"\x00\x01\x01"), "b": ("I64", [2], struct.pack("<2q", -1, 7)),
                  "c": ("BF16", [2], b"\x80\x3f\x00\xc0"), "d": ("F16", [1], b"\x00\x3c"),
                  "e": ("F64", [1], struct.pack("<d", 0.1)), "f": ("I32", [1], struct.pack("<i", 5))},
                 {"step": "20", "optim.type": "SGD"}),
    "empty_tensor": st({"z": ("F32", [0, 3], b"")}),
    "no_tensors": st({}, {"note": "metadata only"}),
    "truncated": st({"w": ("F32", [2, 2], f32)})[:-3],
    "bad_json": st({}, header=b'{"w": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]'),
    "overlap": st({}, header=json.dumps({"a": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]},
                                         "b": {"dtype": "F32", "shape": [1], "data_offsets": [2, 6]}}).encode(),
                  tail=b"\x00" * 8),
    "past_end": st({}, header=json.dumps({"a": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]}}).encode(),
                   tail=b"\x00" * 4),
    "size_mismatch": st({"w": ("F32", [3], f32)}),
    "bad_bool": st({"a": ("BOOL", [2], b"\x00\x02")}),
    "unknown_dtype": st({"a": ("U7", [1], b"\x00")}),
}
for name, data in files.items():
    open(f"{out}/{name}.safetensors", "wb").write(data)
PY
# The dictionary of IR tokens for both IR targets, from the op tables and the attribute names.
{
  echo '# IR tokens for fuzz_ir_lower and fuzz_ir_compile (made by tests/fuzz/make_corpus.sh).'
  for w in graph return donate true false f16 bf16 f32 f64 i32 i64 bool inf -inf nan 0 1 -1 2 \
           1e30 -0 0.5 '@main' '%0' '%1' '%x' '#1' ' : ' ' = ' '{' '}' '[' ']' '(' ')' ', ' '[]' \
           '[1]' '[0,1]' '[2,3]' 65536 2147483647 2147483648 4294967296 9223372036854775807 \
           -9223372036854775808 1e308 1e-320; do
    printf '"%s"\n' "$w"
  done
  grep -h '^LT_OP(' "$root"/ir/ops/*.def | grep -o '^LT_OP([A-Za-z0-9]*, *"[a-z_0-9]*"' | sed 's/.*"\(.*\)"/"\1("/'
  # A kNames list may span lines: the header as one line first.
  tr '\n' ' ' <"$root/ir/attrs.h" | grep -o 'kNames{[^}]*}' | grep -o '"[a-z_0-9]*"' | sort -u |
    sed 's/"\(.*\)"/"\1="/'
} > "$dest/ir.dict"
echo "corpus: $(ls "$dest/corpus/fuzz_ir_lower" | wc -l) IR seeds, $(ls "$out" | wc -l) IDX seeds," \
  "$(ls "$st" | wc -l) safetensors seeds"
