#!/usr/bin/env bash
# The main job: install the Debian packages, build (Release, Ninja) into build/ and train the
# Fashion-MNIST MLP for two epochs in eager mode, then the same run in lazy mode
# (--compiler-opt), printing loss, test accuracy and ms/step of each.
# Extra arguments go to the trainer (see `build/examples/fmnist_mlp --help`).
# LT_BUILD_DIR picks another build directory, LT_JOBS caps the build's parallelism.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${LT_BUILD_DIR:-build}

bash scripts/setup.sh
# CMakeLists.txt compiles through ccache when it is installed; a base dir makes hits path-free.
if command -v ccache >/dev/null; then export CCACHE_BASEDIR="$PWD"; fi
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release
cmake --build "$build" --target fmnist_mlp ${LT_JOBS:+--parallel "$LT_JOBS"}
"$build/examples/fmnist_mlp" --epochs 2 "$@"
"$build/examples/fmnist_mlp" --epochs 2 --compiler-opt "$@"
