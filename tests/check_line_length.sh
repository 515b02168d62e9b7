#!/usr/bin/env bash
# Fails when a line of library code (C++ sources, headers and op tables, and the Python package
# with its tests and examples) is over 100 columns, printing file:line for each. Columns are
# characters, not bytes (UTF-8 in comments counts once).
set -u
root=${1:-.}
limit=100
cd "$root" || exit 2
mapfile -t files < <({ find frontend ir passes codegen backends runtime tools examples bench python \
  -type f \( -name '*.h' -o -name '*.cpp' -o -name '*.def' \)
  find python tests/python examples/python -type f -name '*.py'; } 2>/dev/null | sort)
[ ${#files[@]} -gt 0 ] || { echo "line_length: no sources under $root"; exit 2; }
hits=$(LC_ALL=C.UTF-8 grep -HnE "^.{$((limit + 1)),}" "${files[@]}" | cut -d: -f1,2)
if [ -n "$hits" ]; then
  echo "$hits"
  echo "line_length: $(echo "$hits" | wc -l) lines over $limit columns"
  exit 1
fi
echo "line_length: ok"
