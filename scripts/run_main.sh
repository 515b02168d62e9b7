#!/usr/bin/env bash
# The main job: install the Debian packages, build (Release, Ninja) into build/, train the small
# CNN (examples/fmnist_cnn) on Fashion-MNIST for two epochs in eager mode, then the same run in
# lazy mode (--compiler-opt), and print the two runs side by side, with every number taken from
# the runs' own summary lines.
# Extra arguments go to both runs (see `build/examples/fmnist_cnn --help`; the last --epochs or
# --max-steps given wins). LT_BUILD_DIR picks another build directory, LT_JOBS caps the build's
# parallelism.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${LT_BUILD_DIR:-build}

bash scripts/setup.sh
# CMakeLists.txt compiles through ccache when it is installed; a base dir makes hits path-free.
if command -v ccache >/dev/null; then export CCACHE_BASEDIR="$PWD"; fi
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release
cmake --build "$build" --target fmnist_cnn ${LT_JOBS:+--parallel "$LT_JOBS"}

logs=$(mktemp -d)
trap 'rm -rf "$logs"' EXIT
defaults=(--epochs 2 --train-limit -1 --test-limit -1)
"$build/examples/fmnist_cnn" "${defaults[@]}" "$@" | tee "$logs/eager.txt"
echo
"$build/examples/fmnist_cnn" "${defaults[@]}" --compiler-opt "$@" | tee "$logs/lazy.txt"

# "done: 1874 steps in 31.2 s (compile 0.0 s), median 14.6 ms/step = 4384 samples/s, peak memory
# 41.3 MB, test accuracy 89.91%"
field() { sed -n "s/^done: .*$1.*/\\1/p" "$2"; }
row() {
  printf '%-6s %12s %12s %12s %10s %10s\n' "$1" "$(field 'median \([0-9.]*\) ms' "$2")" \
    "$(field '= \([0-9]*\) samples' "$2")" "$(field 'compile \([0-9.]*\) s' "$2")" \
    "$(field 'peak memory \([0-9.]*\) MB' "$2")" "$(field 'accuracy \([0-9.]*%\)' "$2")"
}
echo
echo "fmnist_cnn, eager vs lazy ($(nproc) cores)"
printf '%-6s %12s %12s %12s %10s %10s\n' mode "ms/step" "samples/s" "compile s" "peak MB" accuracy
row eager "$logs/eager.txt"
row lazy "$logs/lazy.txt"
eager_ms=$(field 'median \([0-9.]*\) ms' "$logs/eager.txt")
lazy_ms=$(field 'median \([0-9.]*\) ms' "$logs/lazy.txt")
if [ -n "$eager_ms" ] && [ -n "$lazy_ms" ]; then
  awk -v e="$eager_ms" -v l="$lazy_ms" 'BEGIN { printf "lazy speedup: %.2fx (median step)\n", e / l }'
fi
