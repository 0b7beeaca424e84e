#!/usr/bin/env bash
# What ci/nightly-gpu decides on each topology (issues 26, 39), on a CPU box: a fake nvidia-smi on
# PATH answers `-L` and `topo -m` for 0, 1, 2 and 8 GPUs (NVLink or not), MPS is detected from a
# fake control pipe; first --plan (builds and runs nothing), then whole runs against a fake mpirun
# and fake programs (--prebuilt; peerconf is nightly_fake_peerconf.sh) that record how each stage
# was started. Checked: exit 77 at 0 GPUs only; at 1 GPU the whole suite runs in one mpirun of 16
# processes sharing the GPU, the data-plane files included, capped as time-sliced (the rate, the
# GPUs and the target handed to peerconf), on the GPU and on the mock alike; under MPS nothing is
# capped; the data-plane program and the benchmark say why they were skipped; at 2 GPUs the caps
# count 2 GPUs and the benchmark runs only with NVLink; at 8 GPUs a suite of 2-rank files shares
# nothing and is not capped.
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
mkdir -p "$build/harness" "$build/tests/gpu" "$build/example"
cp "$src/tests/gpu/nightly_fake_peerconf.sh" "$build/harness/peerconf"
cp "$src/tests/gpu/nightly_fake_peerconf.sh" "$build/example/myteam-peerconf"
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
cat > "$build/tests/gpu/peerconf_runtime_table_cuda" <<'FAKE'
#!/usr/bin/env bash
echo "peerconf_runtime_table_cuda $*" >> "$FAKE_CALLS"
echo "0 row(s) differ from the table's cuda column"
FAKE
chmod +x "$build/harness/peerconf" "$build/tests/gpu/"* "$build/example/myteam-peerconf"
# The interrupt stage's program: what it is asked to run is recorded (nightly_gpu_test.sh judges it).
cat > "$work/interrupt_fake.py" <<'FAKE'
import os, sys
with open(os.environ["FAKE_CALLS"], "a") as calls:
    calls.write("interrupt_test " + " ".join(sys.argv[1:]) + "\n")
print("3 points, every one left nothing")
FAKE
export NIGHTLY_INTERRUPT_TEST=$work/interrupt_fake.py

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

# 1 GPU: the whole suite shares it, time-sliced; the program and the bench are skipped.
run plan-1 FAKE_GPUS=1 -- --plan
want_rc plan-1 0
s=$work/plan-1/summary.txt
has plan-1 "$s" 'topology: 1 GPU\(s\), NVLink no, MPS no'
has plan-1 "$s" 'plan: suite: [0-9]+ file\(s\) under scenarios .*validate --runtime gpu.*np 16 on 1 GPU\(s\), 16 rank\(s\) a GPU'
has plan-1 "$s" 'plan: suite: data planes time-sliced .*about 445 steps a second for 2 ranks on one GPU \(s ranks a GPU: 445 x \(2/s\)\^2\), aiming at 2 s a file, never below a step the file names'
has plan-1 "$s" 'plan: suite on the mock: the same files, seeds, np 16 .*--runtime mock and the same caps'
example_files=$(find "$src/ci/examples/protocol-layout/scenarios" -name '*.yaml' | wc -l)
has plan-1 "$s" "plan: protocol example: $example_files file\\(s\\) .*np 4 on 1 GPU\\(s\\), 4 rank\\(s\\) a GPU"
has plan-1 "$s" 'plan: data-plane program: SKIP: needs 2 GPUs'
has plan-1 "$s" 'plan: benchmark: SKIP: needs 2 GPUs'
lacks plan-1 "$s" 'SKIP: .*file\(s\) not run'
[[ -s "$work/calls-plan-1" ]] && fail "plan-1: --plan ran something"
# With a prebuilt build --plan also names what validate refuses (validate runs nothing).
run plan-refused-1 FAKE_GPUS=1 FAKE_REFUSE=low-latency -- --plan --prebuilt --build-dir "$build"
want_rc plan-refused-1 0
has plan-refused-1 "$work/plan-refused-1/summary.txt" 'suite: SKIP scenarios/dataplane/low-latency-2-ranks\.yaml: refused by `validate --runtime gpu`'
has plan-refused-1 "$work/plan-refused-1/summary.txt" 'plan: suite: [0-9]+ file\(s\) under scenarios that `harness/peerconf validate --runtime gpu` accepts \([1-9][0-9]* refused'
lacks plan-refused-1 "$work/calls-plan-refused-1" ' run '

run full-1 FAKE_GPUS=1 -- --prebuilt --build-dir "$build"
want_rc full-1 0
s=$work/full-1/summary.txt
c=$work/calls-full-1
has full-1 "$c" '^mpirun -np 16 .*-x PEERCONF_SLICED_STEP_RATE .*peerconf run scenarios/'
has full-1 "$c" '^peerconf run scenarios/.*scenarios/gpu/dataplane/reference-exchange-1m\.yaml .*--launcher mpi --runtime gpu --ranks-per-gpu 16 --repeat 1 .*\[sliced 445/1/2\]$'
has full-1 "$c" '^peerconf run scenarios/.*scenarios/lifecycle/.* --launcher mpi --runtime mock --ranks-per-gpu 16 --repeat 1 .*\[sliced 445/1/2\]$'
has full-1 "$c" '^myteam-peerconf run ci/examples/protocol-layout/scenarios/.*--launcher mpi --runtime gpu --ranks-per-gpu 4 .*\[sliced 445/1/2\]$'
has full-1 "$c" '^myteam-peerconf run ci/examples/protocol-layout/scenarios/.*--runtime mock --ranks-per-gpu 4 '
lacks full-1 "$c" 'peerconf_gpu_dataplane_test|peerconf_gpu_bench'
has full-1 "$s" 'suite: np 16 on 1 GPU\(s\), 16 rank\(s\) a GPU .*on the GPU: 2 passed, 0 failed'
has full-1 "$s" 'suite: CAP scenarios/gpu/dataplane/reference-exchange-1m\.yaml: data-plane steps'
has full-1 "$s" 'capped: [1-9][0-9]* data plane\(s\) time-sliced'
lacks full-1 "$s" 'scenarios/gpu/dataplane: SKIP'
has full-1 "$s" 'data-plane kernels: SKIP: needs 2 GPUs'
has full-1 "$s" 'benchmark: SKIP: needs 2 GPUs'
has full-1 "$s" 'protocol example: np 4 .*on the GPU: 2 passed, 0 failed'
has full-1 "$s" 'divergence: [0-9]+ row\(s\): [1-9][0-9]* the same, 0 explained by the table, 0 unexplained'
has full-1 "$s" 'done: PASS'
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
has empty-1 "$work/empty-1/summary.txt" 'suite: np 16 .*ran nothing'

# 1 GPU with MPS (detected from its control pipe): the data planes run whole, sharing the GPU.
mkdir -p "$work/mps" && touch "$work/mps/control"
run mps-1 FAKE_GPUS=1 CUDA_MPS_PIPE_DIRECTORY="$work/mps" -- --prebuilt --build-dir "$build"
want_rc mps-1 0
has mps-1 "$work/mps-1/summary.txt" 'MPS yes'
has mps-1 "$work/mps-1/summary.txt" 'plan: suite: data planes not capped: MPS'
has mps-1 "$work/calls-mps-1" '^peerconf run .*scenarios/gpu/dataplane/.*--runtime gpu --ranks-per-gpu 16 .*\[sliced //\]$'
lacks mps-1 "$work/mps-1/summary.txt" '^nightly-gpu: capped:'

# 2 GPUs with NVLink: 8 ranks a GPU, the caps count 2 GPUs (a 2-rank group has its own), the
# program and the bench run.
run full-2 FAKE_GPUS=2 -- --prebuilt --build-dir "$build"
want_rc full-2 0
c=$work/calls-full-2
has full-2 "$c" '^peerconf run scenarios/.* --launcher mpi --runtime gpu --ranks-per-gpu 8 --repeat 1 .*\[sliced 445/2/2\]$'
has full-2 "$c" '^mpirun -np 2 .*peerconf_gpu_dataplane_test'
has full-2 "$c" '^peerconf_gpu_bench'
has full-2 "$work/full-2/summary.txt" 'benchmark \(np 2, one rank a GPU\): exit 0, 1 rows'
# ... and without NVLink the benchmark says why it was skipped.
run pcie-2 FAKE_GPUS=2 FAKE_LINK=PHB -- --plan
has pcie-2 "$work/pcie-2/summary.txt" 'NVLink no'
has pcie-2 "$work/pcie-2/summary.txt" 'plan: benchmark: SKIP: needs NVLink'
# A suite of 2-rank files at --np 8 on 2 GPUs: 4 ranks a GPU, every group on GPUs of its own.
run np8-2 FAKE_GPUS=2 -- --plan --np 8 --suite scenarios/gpu/success-2-ranks.yaml
has np8-2 "$work/np8-2/summary.txt" 'plan: suite: 1 file\(s\) under scenarios/gpu/success-2-ranks\.yaml .*np 8 on 2 GPU\(s\), 4 rank\(s\) a GPU'
has np8-2 "$work/np8-2/summary.txt" 'plan: suite: data planes not capped: every group of up to 2 ranks has GPUs of its own'
has np8-2 "$work/np8-2/summary.txt" 'plan: benchmark: np 2, one rank a GPU'

# 8 GPUs: the 16-rank files share (2 a GPU); a suite of 2-rank files shares nothing.
run full-8 FAKE_GPUS=8 -- --prebuilt --build-dir "$build"
want_rc full-8 0
has full-8 "$work/calls-full-8" '^peerconf run scenarios/.* --runtime gpu --ranks-per-gpu 2 .*\[sliced 445/8/2\]$'
has full-8 "$work/full-8/summary.txt" 'benchmark \(np 8, one rank a GPU\)'
run pairs-8 FAKE_GPUS=8 -- --prebuilt --build-dir "$build" --suite scenarios/gpu
want_rc pairs-8 0
has pairs-8 "$work/calls-pairs-8" '^mpirun -np 8 .*peerconf run scenarios/gpu/'
grep -E '^peerconf run ' "$work/calls-pairs-8" | grep -qE -- '--ranks-per-gpu|sliced [0-9]' &&
  fail "pairs-8: 2-rank groups on 8 GPUs shared or were capped"
has pairs-8 "$work/pairs-8/summary.txt" 'plan: suite: data planes not capped: every group of up to 2 ranks'

echo "nightly_topology_test: $failures failure(s)"
((failures == 0))
