#!/usr/bin/env bash
# Installs every Debian package lazytrain needs. Idempotent: a second run installs nothing.
set -euo pipefail
PKGS=(
  cmake ninja-build g++ ccache pkg-config
  llvm-19-dev llvm-19-tools libzstd-dev zlib1g-dev libedit-dev libxml2-dev libffi-dev
  libeigen3-dev libopenblas-pthread-dev libdnnl-dev libfmt-dev libcli11-dev nlohmann-json3-dev
  libopenmpi-dev openmpi-bin
  libjpeg62-turbo-dev  # lt::vision's JPEG decoding (frontend/vision/)
  libgtest-dev libgmock-dev libbenchmark-dev
  pybind11-dev python3-dev python3-numpy  # the Python package (python/)
  python3-pytest python3-torch python3-torchvision  # tests/python/ compare against PyTorch
  dataset-fashion-mnist graphviz gnuplot-nox  # gnuplot: scripts/plot_log.sh
  fortunes  # char_gpt trains on /usr/share/games/fortunes
  clang-19 libclang-rt-19-dev libomp-19-dev  # scripts/fuzz.sh: clang, libFuzzer, clang's omp.h
)
missing=()
for p in "${PKGS[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO=sudo
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
