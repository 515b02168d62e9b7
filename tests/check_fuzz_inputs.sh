#!/usr/bin/env bash
# The IR fuzzers' inputs are current (tests/fuzz/make_corpus.sh makes both): their dictionary
# tests/fuzz/ir.dict holds every op mnemonic of the table (ir/ops/*.def) as "name(" and every
# attribute name of ir/attrs.h (the kNames) as "name=", and their seed corpora hold every graph of
# the golden IR tests.
set -u
root=${1:-.}
cd "$root" || exit 2
dict=tests/fuzz/ir.dict
ops=$(grep -hoE '^LT_OP\([A-Za-z0-9]+, *"[a-z0-9_]+"' ir/ops/*.def | grep -oE '"[a-z0-9_]+"' |
  tr -d '"' | sort -u)
attrs=$(tr '\n' ' ' <ir/attrs.h | grep -oE 'kNames\{[^}]*\}' | grep -oE '"[a-z0-9_]+"' |
  tr -d '"' | sort -u)
[ -n "$ops" ] || { echo "fuzz inputs: no ops found in ir/ops/*.def"; exit 1; }
[ -n "$attrs" ] || { echo "fuzz inputs: no attribute names found in ir/attrs.h"; exit 1; }
fail=0
for o in $ops; do
  grep -qxF "\"$o(\"" "$dict" || { echo "fuzz inputs: $dict has no \"$o(\" (an op)"; fail=1; }
done
for a in $attrs; do
  grep -qxF "\"$a=\"" "$dict" || { echo "fuzz inputs: $dict has no \"$a=\" (an attribute)"; fail=1; }
done
while IFS= read -r f; do
  name=$(realpath --relative-to=tests "$f" | tr '/' '_')
  for target in fuzz_ir_lower fuzz_ir_compile; do
    [ -f "tests/fuzz/corpus/$target/$name" ] ||
      { echo "fuzz inputs: tests/fuzz/corpus/$target has no seed of $f"; fail=1; }
  done
done < <(find tests/ir tests/diff -name '*.ir' -o -name '*.ir.bad' | sort)
[ "$fail" = 0 ] && echo "fuzz inputs: ok (run tests/fuzz/make_corpus.sh when they are not)"
exit "$fail"
