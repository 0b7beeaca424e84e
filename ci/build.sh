#!/usr/bin/env bash
# Configures and builds peerconf. Usage: ci/build.sh [PRESET [CMAKE ARGS...]]   (default: ci)
# The `ci` preset also compiles the GPU backend for ROCm (Debian's libamdhip64) and, where
# /usr/local/cuda exists, for NVIDIA; neither runs without a GPU. One job a core (nproc).
set -euo pipefail
cd "$(dirname "$0")/.."
preset=${1:-ci}
(($#)) && shift
extra=("$@")
if [[ "$preset" == ci && ! -x /usr/local/cuda/bin/nvcc ]]; then
  echo "ci/build.sh: NOTE /usr/local/cuda not found: the CUDA variant is NOT compiled" >&2
  extra+=(-DPEERCONF_WITH_CUDA=OFF)
fi
ci/configure.sh "$preset" "${extra[@]}"
cmake --build --preset "$preset" -j "$(nproc)"
