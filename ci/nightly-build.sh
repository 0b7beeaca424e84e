#!/usr/bin/env bash
# The GPU nightly's configure and build, in one place (the line itself is in ci/nightly-lib.sh).
# ci/nightly-gpu runs it on the GPU runner (or a CPU box runs it and the runner takes
# --prebuilt); CI runs it with --gpu-only on a CPU box, where CUDA needs nothing but nvcc, so the
# runner's exact configure line is compiled on every change.
#
#   ci/nightly-build.sh [--runtime cuda|rocm] [--build-dir DIR] [--gpu-only] [--configure-only]
#     --runtime    the GPU variant (default cuda)
#     --build-dir  default build/nightly-gpu
#     --gpu-only   build only the GPU programs, not the harness (CI: the `ci` preset already
#                  compiles the harness's sources; this adds what only the nightly's line builds)
#                  nor the protocol example (CUDA: installed into DIR/stage, built in DIR/example)
#     --configure-only configure and generate with the nightly's line, build nothing
# Exit 0 when every target built and every program the nightly runs is there.
set -euo pipefail
cd "$(dirname "$0")/.."
source ci/nightly-lib.sh

runtime=cuda
build=build/nightly-gpu
gpu_only=0
configure_only=0
while [[ $# -gt 0 ]]; do
  case "$1" in
    --runtime) runtime=$2; shift 2 ;;
    --build-dir) build=$2; shift 2 ;;
    --gpu-only) gpu_only=1; shift ;;
    --configure-only) configure_only=1; shift ;;
    *) echo "usage: ci/nightly-build.sh [--runtime cuda|rocm] [--build-dir DIR] [--gpu-only] [--configure-only]" >&2
       exit 2 ;;
  esac
done
[[ $runtime == cuda || $runtime == rocm ]] || { echo "ci/nightly-build.sh: --runtime cuda|rocm" >&2; exit 2; }

mapfile -t configure < <(nightly_configure_args "$runtime")
mapfile -t targets < <(nightly_targets "$runtime" "$gpu_only")
echo "ci/nightly-build.sh: cmake -S . -B $build ${configure[*]}"
cmake -S . -B "$build" "${configure[@]}"
if [[ $configure_only == 1 ]]; then
  echo "ci/nightly-build.sh: configured and generated (--configure-only: nothing built)"
  exit 0
fi
echo "ci/nightly-build.sh: building ${targets[*]}"
cmake --build "$build" -j "$(nproc)" --target "${targets[@]}"

# The worked example of a team's own layout (ci/examples/protocol-layout), built as a team builds
# it: against this build installed (BUILD/stage), its layouts (counter_flags.cu, lamport.cu: each
# through registerLayoutKernels) compiled into the GPU kernels too.
if [[ $runtime == cuda && $gpu_only == 0 ]]; then
  echo "ci/nightly-build.sh: installing into $build/stage and building the protocol example"
  stage=$(cd "$build" && pwd)/stage
  cmake --install "$build" --prefix "$stage" > /dev/null
  cmake -S ci/examples/protocol-layout -B "$build/example" -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_PREFIX_PATH="$stage"
  cmake --build "$build/example" -j "$(nproc)"
fi

missing=0
while read -r program; do
  [[ $gpu_only == 1 && ($program == harness/peerconf || $program == example/*) ]] && continue
  if [[ ! -x "$build/$program" ]]; then
    echo "ci/nightly-build.sh: FAIL $build/$program was not built" >&2
    missing=1
  fi
done < <(nightly_programs "$runtime")
exit $missing
