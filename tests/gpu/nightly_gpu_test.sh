#!/usr/bin/env bash
# The GPU nightly's stage judging, on a CPU box: ci/nightly-gpu and ci/gpu-repeat.sh run unchanged
# against fakes of nvidia-smi (two GPUs, NVLink), mpirun (runs the program once) and the programs
# (a build directory of scripts, --prebuilt; peerconf is nightly_fake_peerconf.sh). The all-good
# run must PASS; each way of skipping work (a program not built, a suite that ran nothing, a
# scenario without its device-memory check, a drop, a data plane that skipped, a benchmark
# without rows) and each divergence the runtime table does not explain (a GPU verdict unlike the
# mock's, a failure on both runtimes) must make it exit non-zero and say why; a GPU failure that
# the table explains passes and says which row. Usage: nightly_gpu_test.sh SOURCE_DIR
set -uo pipefail
src=${1:?source dir}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failures=0

mkdir -p "$work/bin"
cat > "$work/bin/nvidia-smi" <<'EOF'
#!/usr/bin/env bash
case "$1" in
  -L) printf 'GPU 0: fake (UUID: GPU-0)\nGPU 1: fake (UUID: GPU-1)\n' ;;
  *) printf '\tGPU0\tGPU1\nGPU0\t X \tNV18\nGPU1\tNV18\t X \n' ;;
esac
EOF
# mpirun: records its arguments, drops its options, runs the program once.
cat > "$work/bin/mpirun" <<'EOF'
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
EOF
# python: no torch here, whatever this box has (the torch half of the benchmark is skipped).
cat > "$work/bin/python-no-torch" <<'EOF'
#!/usr/bin/env bash
[[ "$1" == -c && "$2" == *torch* ]] && exit 1
exec python3 "$@"
EOF
chmod +x "$work/bin/"*

# The fake build: each program's behaviour comes from FAKE_* variables.
make_build() {
  local b=$1
  mkdir -p "$b/harness" "$b/tests/gpu" "$b/example"
  cp "$src/tests/gpu/nightly_fake_peerconf.sh" "$b/harness/peerconf"
  cat > "$b/tests/gpu/peerconf_gpu_dataplane_test" <<'EOF'
#!/usr/bin/env bash
if [[ "${FAKE_DATAPLANE:-ok}" == skip ]]; then echo "SKIP: needs 2..8 ranks"; exit 77; fi
echo "13 cases, 13 passed, 0 failed"
EOF
  cat > "$b/tests/gpu/peerconf_gpu_bench" <<'EOF'
#!/usr/bin/env bash
[[ "${FAKE_BENCH:-ok}" == norows ]] && { echo "nothing measured"; exit 0; }
printf 'ROW\tconstruct\tpeerconf\t64MiB\t10.0\tfake\n'
EOF
  cat > "$b/tests/gpu/peerconf_runtime_table_cuda" <<'EOF'
#!/usr/bin/env bash
if [[ "${FAKE_TABLE:-ok}" == differs ]]; then
  echo "DIFFERS stale-large: the table says refused, cuda did opens"; echo "1 row(s) differ"; exit 1
fi
echo "0 row(s) differ from the table's cuda column"
EOF
  # The protocol example's executable is peerconf's command line too: the same fake.
  cp "$b/harness/peerconf" "$b/example/myteam-peerconf"
  chmod +x "$b/harness/peerconf" "$b/tests/gpu/"* "$b/example/myteam-peerconf"
}

# The interrupt stage's program (the real one needs a real peerconf): FAKE_INTERRUPT=fail fails it.
cat > "$work/interrupt_fake.py" <<'FAKE'
import os, sys
with open(os.environ["FAKE_CALLS"], "a") as calls:
    calls.write("interrupt_test " + " ".join(sys.argv[1:]) + "\n")
if os.environ.get("FAKE_INTERRUPT") == "fail":
    print("FAIL point 2: a segment was left"); sys.exit(1)
print("10 points, every one left nothing")
FAKE
export NIGHTLY_INTERRUPT_TEST=$work/interrupt_fake.py

# expect NAME WANT_RC(0|nonzero) GREP [env...] -- command...: runs, checks the exit and the summary.
expect() {
  local name=$1 want=$2 pattern=$3
  shift 3
  local envs=()
  while [[ $1 != -- ]]; do envs+=("$1"); shift; done
  shift
  local out="$work/out-$name"
  export FAKE_CALLS="$work/calls-$name"
  : > "$FAKE_CALLS"
  (cd "$src" && env PATH="$work/bin:$PATH" PYTHON="$work/bin/python-no-torch" "${envs[@]}" \
    "$@" --out "$out") > "$work/log-$name" 2>&1
  local rc=$?
  local ok=1
  if [[ $want == 0 && $rc != 0 ]] || [[ $want != 0 && ($rc == 0 || $rc == 77) ]]; then ok=0; fi
  if ! grep -qE -- "$pattern" "$out/summary.txt" 2>/dev/null; then ok=0; fi
  if ((ok)); then
    echo "ok   $name (exit $rc)"
  else
    echo "FAIL $name: exit $rc (want $want), summary must match /$pattern/:"
    sed 's/^/    /' "$out/summary.txt" 2>/dev/null || tail -n 20 "$work/log-$name"
    failures=$((failures + 1))
  fi
}

good=$work/build-good
make_build "$good"
nightly=(ci/nightly-gpu --prebuilt --build-dir "$good")

# has NAME FILE REGEX: the file (a summary or the recorded calls) has a line matching REGEX.
has() {
  grep -qE -- "$3" "$2" || { echo "FAIL $1: no line matching /$3/ in ${2##*/}"; failures=$((failures + 1)); }
}

expect all-good 0 'done: PASS' -- "${nightly[@]}"
# The whole suite in one mpirun at the most ranks a file asks for (16), 8 a GPU on the 2 GPUs,
# time-sliced (capped); the same on the mock; the verdicts side by side.
has all-good "$work/calls-all-good" '^peerconf validate --runtime gpu scenarios/'
has all-good "$work/calls-all-good" '^peerconf run scenarios/.*scenarios/gpu/dataplane/.*\.yaml .*--launcher mpi --runtime gpu --ranks-per-gpu 8 --repeat 1 .*--verdicts .*verdicts-suite-gpu\.json \[sliced 445/2/2\]'
has all-good "$work/calls-all-good" '^peerconf run scenarios/.* --launcher mpi --runtime mock --ranks-per-gpu 8 --repeat 1 .*--verdicts .*verdicts-suite-mock\.json \[sliced 445/2/2\]'
has all-good "$work/out-all-good/summary.txt" 'suite: np 16 on 2 GPU\(s\), 8 rank\(s\) a GPU .*on the GPU: 2 passed, 0 failed'
has all-good "$work/out-all-good/summary.txt" 'suite on the mock: np 16 .*2 passed, 0 failed'
has all-good "$work/out-all-good/summary.txt" 'divergence: [0-9]+ row\(s\): [1-9][0-9]* the same, 0 explained by the table, 0 unexplained'
has all-good "$work/out-all-good/summary.txt" 'suite: CAP scenarios/gpu/dataplane/.*data-plane steps'
has all-good "$work/out-all-good/summary.txt" '^nightly-gpu: capped: [1-9][0-9]* data plane'
has all-good "$work/out-all-good/summary.txt" '^nightly-gpu: wall: [0-9]+ s'
[[ -s $work/out-all-good/divergence.json ]] || { echo "FAIL all-good: no divergence.json"; failures=$((failures + 1)); }

for missing in tests/gpu/peerconf_gpu_dataplane_test tests/gpu/peerconf_gpu_bench \
  tests/gpu/peerconf_runtime_table_cuda harness/peerconf; do
  b=$work/build-without-${missing//\//-}
  make_build "$b"
  rm "$b/$missing"
  expect "missing-${missing##*/}" nonzero "FAIL .*${missing##*/} is not built" -- \
    ci/nightly-gpu --prebuilt --build-dir "$b"
done

# Interrupted runs on the GPU: both paths run with --runtime gpu; a leftover fails the nightly.
has all-good "$work/calls-all-good" '^interrupt_test .*peerconf --path mpi --runtime gpu --scenarios scenarios/gpu'
has all-good "$work/calls-all-good" '^interrupt_test .*peerconf --path signal --runtime gpu'
has all-good "$work/out-all-good/summary.txt" 'interrupted runs \(mpi, --runtime gpu\): exit 0'
expect interrupt-leftover nonzero 'interrupted runs \(signal, --runtime gpu\): exit 1' FAKE_INTERRUPT=fail -- "${nightly[@]}"

# The runtime table: a row the device answers otherwise than the table fails the nightly.
has all-good "$work/out-all-good/summary.txt" 'runtime table: every row of the cuda column as the device does'
expect table-differs nonzero 'runtime table: FAIL exit 1' FAKE_TABLE=differs -- "${nightly[@]}"
has table-differs "$work/out-table-differs/summary.txt" 'DIFFERS stale-large'

expect suite-ran-nothing nonzero 'suite: np 16 .*ran nothing' FAKE_SUITE=empty -- "${nightly[@]}"
# The same failure on both runtimes is no divergence, and no pass either.
expect suite-failed nonzero 'divergence: FAIL' FAKE_SUITE=failed -- "${nightly[@]}"
has suite-failed "$work/out-suite-failed/summary.txt" 'suite: np 16 .*exit 1: 1 passed, 1 failed'
has suite-failed "$work/out-suite-failed/summary.txt" 'failed: failed on both runtimes'
expect memory-check-missing nonzero 'NOT CHECKED: b' FAKE_SUITE=nomem -- "${nightly[@]}"
expect memory-drop nonzero 'largest drop 10 bytes.*DROPPED: b' FAKE_SUITE=drop -- "${nightly[@]}"
# ... unless b passed as a C3 control (its planted core leaks: the drop is its finding).
expect control-drop 0 'largest drop 0 bytes; dropped as their C3 control expects: b' FAKE_SUITE=controldrop -- "${nightly[@]}"
expect dataplane-skipped nonzero 'data-plane kernels: SKIPPED' FAKE_DATAPLANE=skip -- "${nightly[@]}"
expect bench-no-rows nonzero 'benchmark: FAIL .*no rows' FAKE_BENCH=norows -- "${nightly[@]}"
# A GPU verdict unlike the mock's that no row explains: named by file and property.
expect diverged nonzero 'divergence: FAIL' FAKE_DIVERGE='scenarios/gpu/success-2-ranks' -- "${nightly[@]}"
has diverged "$work/out-diverged/summary.txt" 'scenarios/gpu/success-2-ranks\.yaml .*UNEXPLAINED: C1, result'
# ... and one that a row explains (the fixture table's C8 of the GPU data planes on cuda): the
# GPU run failed, the nightly passes and names the row.
expect explained 0 'done: PASS' FAKE_DIVERGE='scenarios/gpu/dataplane/stop-mid-run' FAKE_DIVERGE_PROP=C8 \
  NIGHTLY_RUNTIME_TABLE=tests/ci/divergence/table.yaml -- "${nightly[@]}"
has explained "$work/out-explained/summary.txt" 'C8: cuda fail, mock pass: explained by time-sliced-kernels'
has explained "$work/out-explained/summary.txt" 'every failure on the GPU \(suite\) is a difference the runtime table explains'
# The same difference against the project's table (no such row): it fails.
expect unexplained-c8 nonzero 'divergence: FAIL' FAKE_DIVERGE='scenarios/gpu/dataplane/stop-mid-run' \
  FAKE_DIVERGE_PROP=C8 -- "${nightly[@]}"
# A file validate refuses is a SKIP with its message, counted, and not run.
expect refused 0 'suite: SKIP scenarios/gpu/dataplane/low-latency-allreduce-100k\.yaml: refused by `validate --runtime gpu`: under --runtime gpu: fake refusal' \
  FAKE_REFUSE='low-latency-allreduce-100k' -- "${nightly[@]}"
has refused "$work/out-refused/summary.txt" '^nightly-gpu: skipped: [1-9][0-9]* scenario file'
grep -E '^peerconf run ' "$work/calls-refused" | grep -q 'low-latency-allreduce-100k' &&
  { echo "FAIL refused: the refused file was run"; failures=$((failures + 1)); }

# ci/gpu-repeat.sh: the suite stages alone, 20 times, over scenarios/gpu, gpu-4 and gpu-8 in one
# mpirun at 8 processes (4 a GPU on the 2 GPUs), judged the same way.
expect repeat-good 0 'done: PASS' -- ci/gpu-repeat.sh --prebuilt --build-dir "$good"
has repeat-good "$work/calls-repeat-good" '^peerconf run scenarios/gpu-4/.*scenarios/gpu-8/.*scenarios/gpu/[a-z0-9-]*\.yaml --launcher mpi --runtime gpu --ranks-per-gpu 4 --repeat 20'
has repeat-good "$work/calls-repeat-good" '^mpirun -np 8 '
has repeat-good "$work/calls-repeat-good" '^peerconf run .*--runtime mock --ranks-per-gpu 4 --repeat 20'
grep -qE -- '^peerconf run .*scenarios/(lifecycle|gpu/dataplane)/' "$work/calls-repeat-good" &&
  { echo "FAIL repeat-good: ran more than its --suite paths"; failures=$((failures + 1)); }
grep -q peerconf_gpu_dataplane_test "$work/calls-repeat-good" &&
  { echo "FAIL repeat-good: ran more than the suite"; failures=$((failures + 1)); }
expect repeat-drop nonzero 'DROPPED: b' FAKE_SUITE=drop -- ci/gpu-repeat.sh --prebuilt --build-dir "$good"

echo "nightly_gpu_test: $failures failure(s)"
((failures == 0))
