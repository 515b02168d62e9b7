#!/usr/bin/env bash
# Installs the build into a fresh prefix, then configures, builds and runs against that prefix
# only: tests/install (a user's project, and a trainer on the installed trainer library) and
# examples/minimal (docs/GETTING_STARTED.md), eagerly and compiled. Also checks that lt-launch
# is installed. Usage: check_install.sh <build dir> <cmake> <generator> <C++ compiler>
#   [compiler launcher]
set -eu
build=$(cd "$1" && pwd)
cmake=$2 generator=$3 cxx=$4 launcher=${5:-}
here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/../.." && pwd)
work=$build/install_test
rm -rf "$work"
mkdir -p "$work"
log=$work/log.txt
step() { "$@" > "$log" 2>&1 || { cat "$log"; echo "failed: $*"; exit 1; }; }

step "$cmake" --install "$build" --prefix "$work/prefix"
for tool in lt-opt lt-ir lt-launch; do
  [ -x "$work/prefix/bin/$tool" ] || { echo "not installed: bin/$tool"; exit 1; }
done
configure() {  # <source> <build>
  step "$cmake" -S "$1" -B "$2" -G "$generator" -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_PREFIX_PATH="$work/prefix" -DCMAKE_CXX_COMPILER="$cxx" \
    -DTRAINER_SOURCE="$src/examples/fmnist_cnn.cpp" \
    ${launcher:+-DCMAKE_CXX_COMPILER_LAUNCHER="$launcher"}
  step "$cmake" --build "$2"
}
configure "$here" "$work/consumer"
configure "$src/examples/minimal" "$work/minimal"

"$work/consumer/consumer"
"$work/consumer/trainer" --train-limit 256 --test-limit 128 --batch-size 64 --compiler-opt \
  --quiet > "$log" 2>&1 || { cat "$log"; echo "failed: the installed trainer"; exit 1; }
grep -q "test accuracy" "$log" || { cat "$log"; echo "the installed trainer did not evaluate"; exit 1; }
for mode in "" --compiler-opt; do
  "$work/minimal/train_mlp" $mode > "$log" 2>&1 || { cat "$log"; exit 1; }
  # One epoch of Fashion-MNIST: a model that learned reaches well past chance (10%).
  grep -Eq "^test accuracy 0\.(8[2-9]|9)" "$log" ||
    { cat "$log"; echo "examples/minimal ${mode:-eager}: accuracy below 0.82"; exit 1; }
  echo "examples/minimal ${mode:-eager}: $(tail -n 1 "$log")"
done
