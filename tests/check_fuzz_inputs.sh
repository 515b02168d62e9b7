#!/usr/bin/env bash
# The IR fuzzers' inputs are current: the committed seed corpora (tests/fuzz/corpus/, among them
# every golden IR test) and the dictionary (tests/fuzz/ir.dict: every op mnemonic of ir/ops/*.def
# and attribute name of ir/attrs.h) are what tests/fuzz/make_corpus.sh makes today.
set -u
root=${1:-.}
cd "$root" || exit 2
tmp=$(mktemp -d) || exit 2
trap 'rm -rf "$tmp"' EXIT
if ! bash tests/fuzz/make_corpus.sh "$tmp" >/dev/null; then
  echo "fuzz inputs: tests/fuzz/make_corpus.sh failed"
  exit 1
fi
fail=0
diff -r "$tmp/corpus" tests/fuzz/corpus >"$tmp/corpus.diff" || fail=1
diff "$tmp/ir.dict" tests/fuzz/ir.dict >"$tmp/dict.diff" || fail=1
if [ "$fail" = 1 ]; then
  echo "fuzz inputs: tests/fuzz/ differs from what tests/fuzz/make_corpus.sh makes (run it):"
  sed "s|$tmp|<made>|g" "$tmp/corpus.diff" "$tmp/dict.diff" | head -20
  exit 1
fi
echo "fuzz inputs: ok"
