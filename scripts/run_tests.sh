#!/usr/bin/env bash
# The test job: install the Debian packages, build everything (Release, Ninja) into build/ and run
# every CTest test (unit, grad, e2e, layering, ...), excluding none.
# LT_BUILD_DIR picks another build directory, LT_JOBS caps the build's parallelism.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${LT_BUILD_DIR:-build}

bash scripts/setup.sh
# CMakeLists.txt compiles through ccache when it is installed; a base dir makes hits path-free.
if command -v ccache >/dev/null; then export CCACHE_BASEDIR="$PWD"; fi
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release
cmake --build "$build" ${LT_JOBS:+--parallel "$LT_JOBS"}
ctest --test-dir "$build" --output-on-failure -j2
