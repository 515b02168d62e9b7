#!/usr/bin/env bash
# Runs the eager benchmarks one at a time, each only once the machine is idle (on a 2-core box a
# second busy process halves every 2-thread figure), then the PyTorch comparison.
#   bench/run_benchmarks.sh [build-dir (build-bench)] [out-dir (<build-dir>/bench-results)]
# Writes <out-dir>/eager.txt (one line per benchmark: median of 5 repetitions, and the idle
# fraction of the CPUs measured just before it) and <out-dir>/torch.txt.
set -euo pipefail
build=${1:-build-bench}
out=${2:-$build/bench-results}
bin=$build/bench/lt_bench_eager
mkdir -p "$out"

# Fraction of CPU time idle over the next $1 seconds, from /proc/stat.
idle_fraction() {
  local a b
  a=($(head -1 /proc/stat))
  sleep "$1"
  b=($(head -1 /proc/stat))
  local total=0 i
  for i in 1 2 3 4 5 6 7 8; do total=$((total + b[i] - a[i])); done
  echo "scale=3; ($((b[4] - a[4])) + $((b[5] - a[5]))) / $total" | bc
}

# Waits (up to ~10 minutes) until the CPUs are at least 97% idle over 3 seconds.
wait_idle() {
  local f
  for _ in $(seq 1 200); do
    f=$(idle_fraction 3)
    if [ "$(echo "$f >= 0.97" | bc)" = 1 ]; then echo "$f"; return; fi
  done
  echo "$f (gave up waiting)"
}

: >"$out/eager.txt"
for name in $("$bin" --benchmark_list_tests); do
  idle=$(wait_idle)
  line=$("$bin" --benchmark_filter="^${name}\$" --benchmark_repetitions=5 \
           --benchmark_report_aggregates_only=true 2>/dev/null | grep '_median' || true)
  echo "$line   [idle before: $idle, loadavg: $(cut -d' ' -f1-3 /proc/loadavg)]" | tee -a "$out/eager.txt"
done

idle=$(wait_idle)
echo "[idle before: $idle]" >"$out/torch.txt"
/usr/bin/python3 bench/torch_compare.py | tee -a "$out/torch.txt"
