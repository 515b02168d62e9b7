#!/usr/bin/env bash
# README.md's first C++ block is examples/minimal/train_mlp.cpp, byte for byte, so the program a
# reader meets first is one the build compiles and the tests run.
set -u
root=${1:-.}
cd "$root" || exit 2
block=$(awk '/^```cpp$/ {on = 1; next} on && /^```$/ {exit} on' README.md)
[ -n "$block" ] || { echo "readme example: README.md has no \`\`\`cpp block"; exit 1; }
if ! diff <(printf '%s\n' "$block") examples/minimal/train_mlp.cpp; then
  echo "readme example: README.md's first C++ block differs from examples/minimal/train_mlp.cpp"
  exit 1
fi
echo "readme example: ok"
