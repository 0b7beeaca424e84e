#!/usr/bin/env bash
# The GPU benchmark in one run: peerconf_gpu_bench (MPI, one GPU a rank) and torch_bench.py
# (torchrun), merged into one markdown table with the goals checked (bench.md), and the
# all-reduce sweep as a table against size (allreduce.md) and a plot (allreduce.png, when
# matplotlib is installed) by plot_allreduce.py, and where the reference one-shot's time goes
# (decompose.md) by decompose.py.
# Usage: ci/bench/run_gpu_bench.sh BUILD_DIR OUT_DIR [NP]   (NP defaults to every GPU, at most 8)
#   BENCH_ARGS  extra arguments to peerconf_gpu_bench (e.g. "--sweep-only --two-shot-from 1048576")
#   TORCH_BENCH_ARGS  extra arguments to torch_bench.py (e.g. "--sizes 8192,1048576")
#   SKIP_TORCH=1  run no torch_bench.py (e.g. with BENCH_ARGS=--decompose-only)
set -uo pipefail
cd "$(dirname "$0")/../.."
build=${1:?build dir}
out=${2:?output dir}
np=${3:-}
mkdir -p "$out"
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
if [[ -z "$np" ]]; then
  np=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU' || true)
  [[ "$np" -gt 8 ]] && np=8
fi
[[ "$np" -ge 2 ]] || { echo "run_gpu_bench: needs 2 GPUs or more (found $np)" >&2; exit 77; }
python=${PYTHON:-python3}
rc=0
mpirun -np "$np" --bind-to none -x NCCL_NVLS_ENABLE -x TORCH_SYMM_MEM_DISABLE_MULTICAST \
  -x NVSHMEM_DISABLE_NVLS -x LD_LIBRARY_PATH "$build/tests/gpu/peerconf_gpu_bench" ${BENCH_ARGS:-} 2>&1 |
  tee "$out/bench_cpp.log" || rc=1
if [[ ${SKIP_TORCH:-0} == 1 ]]; then
  echo "run_gpu_bench: SKIP_TORCH=1: the torch rows are missing" | tee "$out/bench_torch.log"
elif "$python" -c 'import torch' 2>/dev/null; then
  "$python" -m torch.distributed.run --standalone --nproc-per-node "$np" ci/bench/torch_bench.py \
    ${TORCH_BENCH_ARGS:-} 2>&1 | tee "$out/bench_torch.log" || rc=1
else
  echo "run_gpu_bench: no torch in $python: the torch rows are missing" | tee "$out/bench_torch.log"
fi
"$python" ci/bench/merge_bench.py "$out/bench_cpp.log" "$out/bench_torch.log" | tee "$out/bench.md"
# The sweep's table and plot: informative, never the exit status (a log without sweep rows
# says so on stderr).
"$python" ci/bench/plot_allreduce.py "$out/bench_cpp.log" "$out/bench_torch.log" \
  --md "$out/allreduce.md" --png "$out/allreduce.png" || true
"$python" ci/bench/decompose.py "$out/bench_cpp.log" >"$out/decompose.md" || true
exit $rc
