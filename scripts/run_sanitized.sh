#!/usr/bin/env bash
# The whole test suite under AddressSanitizer + UndefinedBehaviorSanitizer: builds with
# -DLT_SANITIZE=ON (the project's compiler, GCC) into its own build directory and runs every
# CTest test. Any sanitizer report fails the test it happens in. docs/RELIABILITY.md has the run.
# LT_SANITIZE_BUILD_DIR: build directory (default build-asan); LT_JOBS caps the build's
# parallelism.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${LT_SANITIZE_BUILD_DIR:-build-asan}

bash scripts/setup.sh
if command -v ccache >/dev/null; then export CCACHE_BASEDIR="$PWD"; fi
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DLT_SANITIZE=ON \
  -DLT_BUILD_BENCH=OFF
cmake --build "$build" ${LT_JOBS:+--parallel "$LT_JOBS"}
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1:strict_string_checks=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
ctest --test-dir "$build" --output-on-failure -j2
