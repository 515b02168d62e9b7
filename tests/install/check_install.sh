#!/usr/bin/env bash
# Installs the build into a fresh prefix, then configures, builds and runs tests/install (a user's
# project) against that prefix only. Usage: check_install.sh <build dir> <cmake> <generator>
#   <C++ compiler> [compiler launcher]
set -eu
build=$(cd "$1" && pwd)
cmake=$2 generator=$3 cxx=$4 launcher=${5:-}
here=$(cd "$(dirname "$0")" && pwd)
work=$build/install_test
rm -rf "$work"
"$cmake" --install "$build" --prefix "$work/prefix" > "$work.log" 2>&1 ||
  { cat "$work.log"; exit 1; }
"$cmake" -S "$here" -B "$work/consumer" -G "$generator" -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_PREFIX_PATH="$work/prefix" -DCMAKE_CXX_COMPILER="$cxx" \
  ${launcher:+-DCMAKE_CXX_COMPILER_LAUNCHER="$launcher"} > "$work.log" 2>&1 ||
  { cat "$work.log"; exit 1; }
"$cmake" --build "$work/consumer" > "$work.log" 2>&1 || { cat "$work.log"; exit 1; }
"$work/consumer/consumer"
