# Shared by ci/nightly-build.sh, ci/nightly-gpu and ci/gpu-repeat.sh (sourced, not run): the
# nightly's configure line, what it builds and runs, and how a stage's log is judged. One place,
# so that CI compiles exactly what the GPU runner builds and the CPU test of the judging logic
# (tests/gpu/nightly_gpu_test.sh) exercises the code the runner uses.

# The configure arguments of the nightly build for RUNTIME (cuda | rocm).
nightly_configure_args() {
  local runtime=$1
  local args=(-DCMAKE_BUILD_TYPE=Release -DBUILD_TESTING=OFF)
  if [[ $runtime == rocm ]]; then
    args+=(-DPEERCONF_WITH_CUDA=OFF -DPEERCONF_WITH_HIP=ON)
  else
    args+=(-DPEERCONF_WITH_CUDA=ON -DPEERCONF_WITH_HIP=OFF)
  fi
  printf '%s\n' "${args[@]}"
}

# The programs the nightly runs for RUNTIME, relative to the build directory. Every one must be
# built: a missing one fails the nightly (ROCm has no GPU kernels to run yet, only a compile check).
# example/myteam-peerconf is the protocol example, built by ci/nightly-build.sh against the install.
nightly_programs() {
  local runtime=$1
  echo harness/peerconf
  if [[ $runtime == cuda ]]; then
    echo tests/gpu/peerconf_runtime_table_cuda
    echo example/myteam-peerconf
    echo tests/gpu/peerconf_gpu_dataplane_test
    echo tests/gpu/peerconf_gpu_bench
  fi
}

# The CMake targets the nightly builds for RUNTIME; with GPU_ONLY=1, only those that differ from
# what the `ci` preset already compiles (the GPU programs, or ROCm's kernel compile check).
nightly_targets() {
  local runtime=$1 gpu_only=${2:-0}
  [[ $gpu_only == 1 ]] || echo peerconf
  if [[ $runtime == cuda ]]; then
    echo peerconf_runtime_table_cuda
    echo peerconf_gpu_dataplane_test
    echo peerconf_gpu_bench
  else
    echo peerconf_gpu_kernels_hip_check
  fi
}

# judge_suite LOG RC: 0 when the scenario suite ran and passed: exit 0 and a "N passed, 0 failed"
# summary with N > 0. Prints why not otherwise.
judge_suite() {
  local log=$1 rc=$2 summary passed
  summary=$(grep -E '^[0-9]+ passed, [0-9]+ failed' "$log" | tail -n 1)
  if [[ -z $summary ]]; then
    echo "no summary line: the suite ran nothing (exit $rc)"
    return 1
  fi
  passed=${summary%% *}
  if ((passed == 0)); then
    echo "ran nothing: $summary"
    return 1
  fi
  if ((rc != 0)); then
    echo "exit $rc: $summary"
    return 1
  fi
  echo "$summary"
}

# judge_meminfo LOG [CONTROLS...]: 0 when every scenario the suite reported has at least one
# device free-memory line (PEERCONF_GPU_MEMINFO) and no line shows a drop, except in CONTROLS:
# the scenarios that passed as C3 controls (a planted core that leaks: the drop is their named
# finding). Prints the count, the largest other drop, the scenarios without a check or with a
# drop, and the controls' drops.
judge_meminfo() {
  local log=$1
  shift
  awk -v controls="$*" '
    BEGIN { n = split(controls, c, " "); for (i = 1; i <= n; i++) control[c[i]] = 1 }
    /^peerconf: meminfo / {
      lines++; checked[$3] = 1
      drop = $NF; gsub(/[^0-9]/, "", drop); drop += 0
      if (drop > 0 && ($3 in control)) { expected[$3] = 1; next }
      if (drop > max) max = drop
      if (drop > 0) { dropped[$3] = 1 }
      next
    }
    /^\[[0-9]+\/[0-9]+\] (PASS|FAIL) / { ran[$3] = 1 }
    END {
      bad = 0
      for (s in ran) if (!(s in checked)) { missing = missing " " s; bad = 1 }
      for (s in dropped) { drops = drops " " s; bad = 1 }
      for (s in expected) { controlled = controlled " " s }
      if (lines == 0) bad = 1
      printf "%d device memory checks, largest drop %d bytes", lines, max
      if (missing != "") printf "; NOT CHECKED:%s", missing
      if (drops != "") printf "; DROPPED:%s", drops
      if (controlled != "") printf "; dropped as their C3 control expects:%s", controlled
      if (lines == 0) printf "; no check ran"
      printf "\n"
      exit bad
    }' "$log"
}

# nightly_nvlink TOPOLOGY_FILE: 0 when `nvidia-smi topo -m` shows an NVLink between two GPUs
# (an NV<n> entry in the matrix).
nightly_nvlink() {
  grep -E '^GPU[0-9]+' "$1" 2>/dev/null | grep -qE '(^|[[:space:]])NV[0-9]+([[:space:]]|$)'
}

# nightly_mps: 0 when an MPS control daemon serves this runner: NIGHTLY_MPS=1/0 says so outright;
# otherwise the daemon's control pipe ($CUDA_MPS_PIPE_DIRECTORY, default /tmp/nvidia-mps) or its
# process. With MPS, kernels of different processes on one GPU run concurrently; without it they
# are time-sliced.
nightly_mps() {
  case "${NIGHTLY_MPS:-}" in
    1) return 0 ;;
    0) return 1 ;;
  esac
  [[ -e "${CUDA_MPS_PIPE_DIRECTORY:-/tmp/nvidia-mps}/control" ]] && return 0
  pgrep -x nvidia-cuda-mps-control >/dev/null 2>&1
}

# nightly_stage_np NP NEED: the processes a stage of NEED-rank files starts when the nightly runs
# at NP: NP when it holds whole groups of NEED (they run as parallel groups), else NEED.
nightly_stage_np() {
  local np=$1 need=$2
  if ((np >= need && np % need == 0)); then echo "$np"; else echo "$need"; fi
}

# nightly_ranks_per_gpu NP GPUS: how many ranks share each GPU (round-robin), at least 1.
nightly_ranks_per_gpu() {
  local np=$1 gpus=$2
  echo $(((np + gpus - 1) / gpus))
}

# nightly_gpus_in_use NP RANKS_PER_GPU: the GPUs NP ranks use at that many a GPU (the launcher's
# device = local rank mod this). A group of more ranks than this shares a GPU: time-sliced
# without MPS.
nightly_gpus_in_use() {
  local np=$1 rpg=$2
  echo $(((np + rpg - 1) / rpg))
}

# nightly_max_ranks FILES...: the most ranks any scenario file asks for (its top-level `ranks:`;
# 1 without one), which the stage's mpirun must hold.
nightly_max_ranks() {
  awk '/^ranks:[[:space:]]*[0-9]+/ { v = $2 + 0; if (v > m) m = v } END { print (m > 1 ? m : 1) }' "$@"
}

# nightly_refused LOG: the files `peerconf validate` refused, one "FILE<TAB>message" line each,
# from its error lines (FILE:LINE:COL: message, or FILE: message for a file it cannot read);
# its warnings refuse nothing.
nightly_refused() {
  grep -v ': warning: ' "$1" |
    sed -nE 's/^(.+\.yaml):[0-9]+:[0-9]+: (.*)$/\1\t\2/p; t; s/^(.+\.yaml): (.*)$/\1\t\2/p'
}
