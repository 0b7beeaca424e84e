#!/usr/bin/env bash
# What ci/nightly-gpu decides on each topology (issue 26), on a CPU box: a fake nvidia-smi on PATH
# answers `-L` and `topo -m` for 0, 1, 2 and 8 GPUs (NVLink or not), MPS is detected from a fake
# control pipe; first --plan (builds and runs nothing), then whole runs against a fake mpirun and
# fake programs (--prebuilt) that record how each stage was started. Checked: exit 77 at 0 GPUs
# only; at 1 GPU every scenario stage runs with ranks sharing the GPU at the rank counts its files
# ask for (2, 4, 8), the data-plane files are a SKIP that says why and is counted (they run under
# MPS), the data-plane program and the benchmark say why they were skipped; at 2 GPUs the 2-rank
# stages get a GPU a rank and the benchmark runs only with NVLink; at 8 GPUs nothing shares.
# Usage: nightly_topology_test.sh SOURCE_DIR
set -uo pipefail
src=${1:?source dir}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failures=0
fail() { echo "FAIL $*"; failures=$((failures + 1)); }

mkdir -p "$work/bin" "$work/no-mps"
# nvidia-smi: FAKE_GPUS GPUs, linked by FAKE_LINK (NV18: NVLink; PHB: PCIe only).
cat > "$work/bin/nvidia-smi" <<'FAKE'
#!/usr/bin/env bash
n=${FAKE_GPUS:-0}
case "$1" in
  -L) ((n == 0)) && { echo "No devices were found"; exit 6; }
      for ((i = 0; i < n; i++)); do echo "GPU $i: NVIDIA H200 (UUID: GPU-$i)"; done ;;
  topo) for ((i = 0; i < n; i++)); do
          line="GPU$i"
          for ((j = 0; j < n; j++)); do
            ((i == j)) && line+=$'\tX' || line+=$'\t'"${FAKE_LINK:-NV18}"
          done
          echo "$line"
        done ;;
esac
FAKE
# mpirun: records its arguments, drops its options, runs the program once.
cat > "$work/bin/mpirun" <<'FAKE'
#!/usr/bin/env bash
echo "mpirun $*" >> "$FAKE_CALLS"
while [[ $# -gt 0 ]]; do
  case "$1" in
    -np|--bind-to|-x) shift 2 ;;
    --oversubscribe) shift ;;
    *) break ;;
  esac
done
exec "$@"
FAKE
cat > "$work/bin/python-no-torch" <<'FAKE'
#!/usr/bin/env bash
[[ "$1" == -c && "$2" == *torch* ]] && exit 1
exec python3 "$@"
FAKE
chmod +x "$work/bin/"*

build=$work/build
mkdir -p "$build/harness" "$build/tests/gpu"
cat > "$build/harness/peerconf" <<'FAKE'
#!/usr/bin/env bash
echo "peerconf $*" >> "$FAKE_CALLS"
[[ "${FAKE_SUITE:-ok}" == empty ]] && { echo "0 passed, 0 failed"; exit 0; }
echo "peerconf: meminfo a rank 0 device 0: free 100 -> 100 bytes (drop 0)"
echo "[1/1] PASS a (2 ranks, 1 ms)"
echo "1 passed, 0 failed"
FAKE
cat > "$build/tests/gpu/peerconf_gpu_dataplane_test" <<'FAKE'
#!/usr/bin/env bash
echo "peerconf_gpu_dataplane_test $*" >> "$FAKE_CALLS"
echo "13 cases, 13 passed, 0 failed"
FAKE
cat > "$build/tests/gpu/peerconf_gpu_bench" <<'FAKE'
#!/usr/bin/env bash
echo "peerconf_gpu_bench $*" >> "$FAKE_CALLS"
printf 'ROW\tconstruct\tpeerconf\t64MiB\t10.0\tfake\n'
FAKE
mkdir -p "$build/example"
sed 's/^echo "peerconf \$\*"/echo "myteam-peerconf $*"/' "$build/harness/peerconf" > "$build/example/myteam-peerconf"
chmod +x "$build/harness/peerconf" "$build/tests/gpu/"* "$build/example/myteam-peerconf"

# run NAME [VAR=VALUE...] -- ARGS...: ci/nightly-gpu ARGS --out DIR, exit code in $rc; the summary
# in $work/NAME/summary.txt, the recorded calls in $work/calls-NAME.
run() {
  local name=$1
  shift
  local envs=()
  while [[ $1 != -- ]]; do envs+=("$1"); shift; done
  shift
  export FAKE_CALLS="$work/calls-$name"
  : > "$FAKE_CALLS"
  (cd "$src" && env PATH="$work/bin:$PATH" PYTHON="$work/bin/python-no-torch" \
    CUDA_MPS_PIPE_DIRECTORY="$work/no-mps" "${envs[@]}" \
    ci/nightly-gpu "$@" --out "$work/$name") > "$work/log-$name" 2>&1
  rc=$?
}
# want_rc NAME WANT; has NAME FILE REGEX; lacks NAME FILE REGEX
want_rc() { [[ $rc == "$2" ]] || { fail "$1: exit $rc, want $2"; sed 's/^/    /' "$work/log-$1"; }; }
has() { grep -qE -- "$3" "$2" || fail "$1: no line matching /$3/ in ${2##*/}"; }
lacks() { ! grep -qE -- "$3" "$2" || fail "$1: a line matches /$3/ in ${2##*/}"; }

# 0 GPUs: 77, and nothing planned.
run plan-0 FAKE_GPUS=0 -- --plan
want_rc plan-0 77
has plan-0 "$work/plan-0/summary.txt" 'no GPU: nothing to run'
lacks plan-0 "$work/plan-0/summary.txt" 'plan:'
run full-0 FAKE_GPUS=0 -- --prebuilt --build-dir "$build"
want_rc full-0 77
[[ -s "$work/calls-full-0" ]] && fail "full-0: ran something with no GPU"

# 1 GPU: every stage shares it; the data-plane files, the program and the bench are skipped.
run plan-1 FAKE_GPUS=1 -- --plan
want_rc plan-1 0
s=$work/plan-1/summary.txt
has plan-1 "$s" 'topology: 1 GPU\(s\), NVLink no, MPS no; scenario stages at np 2'
has plan-1 "$s" 'plan: scenarios/gpu: np 2 on 1 GPU\(s\), 2 rank\(s\) a GPU'
has plan-1 "$s" 'plan: scenarios/gpu/dataplane: SKIP: [0-9]+ file\(s\) not run: the 2 ranks of a group share the one GPU and no MPS'
has plan-1 "$s" 'plan: scenarios/gpu-4: np 4 on 1 GPU\(s\), 4 rank\(s\) a GPU'
has plan-1 "$s" 'plan: scenarios/gpu-8: np 8 on 1 GPU\(s\), 8 rank\(s\) a GPU'
has plan-1 "$s" 'plan: incidents: np 8 on 1 GPU\(s\), 8 rank\(s\) a GPU'
has plan-1 "$s" 'plan: data-plane program: SKIP: needs 2 GPUs'
has plan-1 "$s" 'plan: benchmark: SKIP: needs 2 GPUs'
[[ -s "$work/calls-plan-1" ]] && fail "plan-1: --plan ran something"

run full-1 FAKE_GPUS=1 -- --prebuilt --build-dir "$build"
want_rc full-1 0
s=$work/full-1/summary.txt
c=$work/calls-full-1
has full-1 "$c" '^mpirun -np 2 .*peerconf run scenarios/gpu/[a-z0-9-]+\.yaml .*--launcher mpi --runtime gpu --ranks-per-gpu 2 --repeat 1'
has full-1 "$c" '^mpirun -np 4 .*peerconf run scenarios/gpu-4 --launcher mpi --runtime gpu --ranks-per-gpu 4 '
has full-1 "$c" '^mpirun -np 8 .*peerconf run scenarios/gpu-8 --launcher mpi --runtime gpu --ranks-per-gpu 8 '
has full-1 "$c" '^mpirun -np 8 .*peerconf run scenarios/lifecycle scenarios/buffers scenarios/upstream scenarios/dataplane/death-at-step.yaml .*--runtime gpu --ranks-per-gpu 8 '
lacks full-1 "$c" 'scenarios/gpu/dataplane|peerconf_gpu_dataplane_test|peerconf_gpu_bench'
has full-1 "$s" 'scenarios/gpu/dataplane: SKIP: .*time-sliced'
has full-1 "$s" 'skipped: [1-9][0-9]* scenario file\(s\)'
has full-1 "$s" 'data-plane kernels: SKIP: needs 2 GPUs'
has full-1 "$s" 'benchmark: SKIP: needs 2 GPUs'
has full-1 "$s" 'scenarios/gpu-8: np 8 on 1 GPU\(s\), 8 rank\(s\) a GPU.*: 1 passed, 0 failed'
has full-1 "$s" 'done: PASS'
# The protocol example's short files run on the one GPU too, at 4 processes.
has full-1 "$s" 'plan: protocol example: np 4 on 1 GPU\(s\), 4 rank\(s\) a GPU'
has full-1 "$c" '^mpirun -np 4 .*myteam-peerconf run ci/examples/protocol-layout/scenarios --launcher mpi --runtime gpu --ranks-per-gpu 4 '
has full-1 "$s" 'protocol example: np 4 .*: 1 passed, 0 failed'
# On one GPU the skipped programs need not be built; the harness must.
rm "$build/tests/gpu/peerconf_gpu_bench"
run unbuilt-1 FAKE_GPUS=1 -- --prebuilt --build-dir "$build"
want_rc unbuilt-1 0
# Neither the harness nor the protocol example: each is named.
mv "$build/harness/peerconf" "$work/peerconf-aside"
mv "$build/example/myteam-peerconf" "$work/example-aside"
run unbuilt-harness-1 FAKE_GPUS=1 -- --prebuilt --build-dir "$build"
[[ $rc != 0 && $rc != 77 ]] || fail "unbuilt-harness-1: passed without peerconf (exit $rc)"
has unbuilt-harness-1 "$work/unbuilt-harness-1/summary.txt" 'FAIL .*harness/peerconf is not built'
has unbuilt-harness-1 "$work/unbuilt-harness-1/summary.txt" 'FAIL .*example/myteam-peerconf is not built'
mv "$work/peerconf-aside" "$build/harness/peerconf"
mv "$work/example-aside" "$build/example/myteam-peerconf"
cat > "$build/tests/gpu/peerconf_gpu_bench" <<'FAKE'
#!/usr/bin/env bash
echo "peerconf_gpu_bench $*" >> "$FAKE_CALLS"
printf 'ROW\tconstruct\tpeerconf\t64MiB\t10.0\tfake\n'
FAKE
chmod +x "$build/tests/gpu/peerconf_gpu_bench"
# A stage that should run and ran nothing still fails on one GPU.
run empty-1 FAKE_GPUS=1 FAKE_SUITE=empty -- --prebuilt --build-dir "$build"
[[ $rc != 0 && $rc != 77 ]] || fail "empty-1: a suite that ran nothing passed (exit $rc)"
has empty-1 "$work/empty-1/summary.txt" 'scenarios/gpu-4: .*ran nothing'

# 1 GPU with MPS (detected from its control pipe): the data-plane files run, sharing the GPU.
mkdir -p "$work/mps" && touch "$work/mps/control"
run mps-1 FAKE_GPUS=1 CUDA_MPS_PIPE_DIRECTORY="$work/mps" -- --prebuilt --build-dir "$build"
want_rc mps-1 0
has mps-1 "$work/mps-1/summary.txt" 'MPS yes'
has mps-1 "$work/calls-mps-1" '^mpirun -np 2 .*peerconf run scenarios/gpu/dataplane .*--ranks-per-gpu 2'
lacks mps-1 "$work/mps-1/summary.txt" '^nightly-gpu: skipped:'

# 2 GPUs with NVLink: the 2-rank stages get a GPU a rank, gpu-4 and gpu-8 share, the bench runs.
run full-2 FAKE_GPUS=2 -- --prebuilt --build-dir "$build"
want_rc full-2 0
c=$work/calls-full-2
has full-2 "$c" '^mpirun -np 2 .*peerconf run scenarios/gpu/dataplane --launcher mpi --runtime gpu --repeat 1'
lacks full-2 "$c" 'scenarios/gpu/[a-z0-9-]+\.yaml.*--ranks-per-gpu'
has full-2 "$c" '^mpirun -np 4 .*scenarios/gpu-4 .*--ranks-per-gpu 2 '
has full-2 "$c" '^mpirun -np 8 .*scenarios/gpu-8 .*--ranks-per-gpu 4 '
has full-2 "$c" '^mpirun -np 2 .*peerconf_gpu_dataplane_test'
has full-2 "$c" '^peerconf_gpu_bench'
has full-2 "$work/full-2/summary.txt" 'benchmark \(np 2, one rank a GPU\): exit 0, 1 rows'
# ... and without NVLink the benchmark says why it was skipped.
run pcie-2 FAKE_GPUS=2 FAKE_LINK=PHB -- --plan
has pcie-2 "$work/pcie-2/summary.txt" 'NVLink no'
has pcie-2 "$work/pcie-2/summary.txt" 'plan: benchmark: SKIP: needs NVLink'
# --np 8 on 2 GPUs: every stage at 8 processes, 4 ranks a GPU; the program and bench at 2.
run np8-2 FAKE_GPUS=2 -- --plan --np 8
has np8-2 "$work/np8-2/summary.txt" 'plan: scenarios/gpu: np 8 on 2 GPU\(s\), 4 rank\(s\) a GPU'
has np8-2 "$work/np8-2/summary.txt" 'plan: scenarios/gpu/dataplane: np 8 on 2 GPU\(s\), 4 rank\(s\) a GPU'
has np8-2 "$work/np8-2/summary.txt" 'plan: benchmark: np 2, one rank a GPU'

# 8 GPUs: nothing shares.
run full-8 FAKE_GPUS=8 -- --prebuilt --build-dir "$build"
want_rc full-8 0
c=$work/calls-full-8
lacks full-8 "$c" '--ranks-per-gpu'
has full-8 "$c" '^mpirun -np 8 .*scenarios/gpu/[a-z0-9-]+\.yaml'
has full-8 "$c" '^mpirun -np 8 .*scenarios/gpu/dataplane '
has full-8 "$c" '^mpirun -np 8 .*scenarios/gpu-4 '
has full-8 "$c" '^mpirun -np 8 .*scenarios/gpu-8 '
has full-8 "$c" '^mpirun -np 8 .*scenarios/lifecycle scenarios/buffers scenarios/upstream '
has full-8 "$work/full-8/summary.txt" 'plan: scenarios/gpu-8: np 8 on 8 GPU\(s\), 1 rank\(s\) a GPU'
has full-8 "$work/full-8/summary.txt" 'benchmark \(np 8, one rank a GPU\)'

echo "nightly_topology_test: $failures failure(s)"
((failures == 0))
