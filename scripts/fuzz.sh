#!/usr/bin/env bash
# Fuzzing: builds the libFuzzer targets of tests/fuzz with clang-19, ASan and UBSan into their own
# build directory (the normal build stays GCC), then runs each target for the given seconds
# (default 60) from its seed corpus and prints executions, time and crashes found.
#   scripts/fuzz.sh [seconds]
# LT_FUZZ_BUILD_DIR: build directory (default build-fuzz); LT_FUZZ_TARGETS: the targets to run
# (default "fuzz_ir_lower fuzz_ir_compile fuzz_idx fuzz_safetensors"); LT_FUZZ_RUNS: also stop
# each target after that many executions; LT_JOBS caps the build's parallelism.
# New inputs libFuzzer finds go to <build>/fuzz-corpus/<target>/ (the committed seeds under
# tests/fuzz/corpus/ stay as they are); a crashing input is saved under
# <build>/fuzz-crashes/<target>/, and the script then exits 1. docs/RELIABILITY.md has the runs.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-60}
build=${LT_FUZZ_BUILD_DIR:-build-fuzz}
targets=${LT_FUZZ_TARGETS:-fuzz_ir_lower fuzz_ir_compile fuzz_idx fuzz_safetensors}

bash scripts/setup.sh
if command -v ccache >/dev/null; then export CCACHE_BASEDIR="$PWD"; fi
CC=clang-19 CXX=clang++-19 cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DLT_FUZZ=ON -DLT_BUILD_TESTS=OFF -DLT_BUILD_BENCH=OFF >/dev/null
# shellcheck disable=SC2086  # $targets is a list
cmake --build "$build" --parallel "${LT_JOBS:-2}" --target $targets

# Per target: extra libFuzzer flags. A compile input runs LLVM for every loop kernel (about 15 ms
# each, more under ASan), so its per-input time limit is generous.
flags_for() {
  case $1 in
    fuzz_ir_lower) echo "-dict=tests/fuzz/ir.dict -max_len=4096 -timeout=10" ;;
    fuzz_ir_compile) echo "-dict=tests/fuzz/ir.dict -max_len=4096 -timeout=60" ;;
    fuzz_idx) echo "-max_len=1024 -timeout=10" ;;
    fuzz_safetensors) echo "-dict=tests/fuzz/safetensors.dict -max_len=4096 -timeout=10" ;;
  esac
}

status=0
summary=()
for t in $targets; do
  work="$build/fuzz-corpus/$t"
  crashes="$build/fuzz-crashes/$t"
  mkdir -p "$work" "$crashes"
  log="$build/fuzz-$t.log"
  echo "== $t for ${seconds}s (log: $log)"
  start=$(date +%s)
  TIMEFORMAT="%R %U %S"
  # shellcheck disable=SC2046  # the flags are words
  times=$( { time "$build/tests/fuzz/$t" $(flags_for "$t") -max_total_time="$seconds" \
      ${LT_FUZZ_RUNS:+-runs="$LT_FUZZ_RUNS"} -print_final_stats=1 -artifact_prefix="$crashes/" \
      "$work" "tests/fuzz/corpus/$t" \
      >"$log" 2>&1 || true; } 2>&1 )
  read -r wall user sys <<<"$times"
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  found=$(find "$crashes" -type f -newermt "@$start" | wc -l)
  line="$t: ${execs:-?} executions, ${wall}s wall, ${user}s user + ${sys}s sys CPU,"
  line+=" $found new crash files in $crashes/"
  echo "$line"
  summary+=("$line")
  if [ "$found" -gt 0 ] || grep -q '^SUMMARY: ' "$log"; then
    status=1
    grep -m5 -E 'runtime error|==ERROR|^SUMMARY: |^fuzz_[a-z_]+: |Test unit written' "$log" || true
  fi
done
echo "== summary"
printf '%s\n' "${summary[@]}"
exit $status
