#!/usr/bin/env bash
# The shared-memory all-reduce's unit tests under ThreadSanitizer: the one place where
# lazytrain's own code synchronizes through memory (counters with acquire/release) instead of
# locks or MPI. Compiles runtime/comm/shm_all_reduce.cpp (with store_choice.cpp, which picks its
# stores) and its test (threads as ranks) with
# -fsanitize=thread against the normal build's lt_ir library, then runs the tests LT_TSAN_REPEAT
# times (default 20): a race ThreadSanitizer sees fails the run. docs/RELIABILITY.md has the run.
#   scripts/run_tsan.sh [build-dir (build)]
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
[ -f "$build/ir/liblt_ir.a" ] || { echo "run_tsan: build $build first (ninja -C $build)"; exit 2; }
out=$build/tsan
mkdir -p "$out"
flags=(-std=c++20 -O1 -g -fsanitize=thread -I. -DGTEST_HAS_PTHREAD=1)
g++ "${flags[@]}" -c runtime/comm/shm_all_reduce.cpp -o "$out/shm_all_reduce.o"
g++ "${flags[@]}" -c runtime/comm/store_choice.cpp -o "$out/store_choice.o"
g++ "${flags[@]}" -c tests/unit/runtime/shm_all_reduce_test.cpp -o "$out/shm_all_reduce_test.o"
g++ -fsanitize=thread "$out/shm_all_reduce_test.o" "$out/shm_all_reduce.o" "$out/store_choice.o" \
  "$build/ir/liblt_ir.a" \
  -lgtest -lgtest_main -lfmt -lpthread -o "$out/lt_tsan_shm_all_reduce"
TSAN_OPTIONS=${TSAN_OPTIONS:-halt_on_error=1:exitcode=66} \
  "$out/lt_tsan_shm_all_reduce" --gtest_repeat="${LT_TSAN_REPEAT:-20}" --gtest_brief=1
echo "run_tsan: ok"
