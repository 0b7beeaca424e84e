#!/usr/bin/env bash
# The GPU nightly's stage judging, on a CPU box: ci/nightly-gpu and ci/gpu-repeat.sh run unchanged
# against fakes of nvidia-smi (two GPUs, NVLink), mpirun (runs the program once) and the three programs
# (a build directory of scripts, --prebuilt). The all-good run must PASS; each way of skipping
# work (a program not built, a suite that ran nothing, a scenario without its device-memory
# check, a drop, a data plane that skipped, a benchmark without rows) must make it exit non-zero
# and say why. Usage: nightly_gpu_test.sh SOURCE_DIR
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
  mkdir -p "$b/harness" "$b/tests/gpu"
  cat > "$b/harness/peerconf" <<'EOF'
#!/usr/bin/env bash
echo "peerconf $*" >> "$FAKE_CALLS"
case "${FAKE_SUITE:-ok}" in
  empty) echo "0 passed, 0 failed"; exit 0 ;;
  failed) echo "[1/2] PASS a (2 ranks, 1 ms)"; echo "[2/2] FAIL b (2 ranks, 1 ms): C3"
          echo "peerconf: meminfo a rank 0 device 0: free 10 -> 10 bytes (drop 0)"
          echo "peerconf: meminfo b rank 0 device 0: free 10 -> 10 bytes (drop 0)"
          echo "1 passed, 1 failed"; exit 1 ;;
esac
echo "peerconf: meminfo a rank 0 device 0: free 100 -> 100 bytes (drop 0)"
echo "peerconf: meminfo a rank 1 device 1: free 100 -> 100 bytes (drop 0)"
echo "[1/2] PASS a (2 ranks, 1 ms)"
case "${FAKE_SUITE:-ok}" in
  nomem) ;;
  drop) echo "peerconf: meminfo b rank 1 device 1: free 100 -> 90 bytes (drop 10)" >&2 ;;
  *) echo "peerconf: meminfo b rank 1 device 1: free 100 -> 100 bytes (drop 0)" >&2 ;;
esac
echo "[2/2] PASS b (2 ranks, 1 ms)"
echo "2 passed, 0 failed"
EOF
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
  # The protocol example's executable is peerconf's command line too: the same fake.
  mkdir -p "$b/example"
  cp "$b/harness/peerconf" "$b/example/myteam-peerconf"
  chmod +x "$b/harness/peerconf" "$b/tests/gpu/"* "$b/example/myteam-peerconf"
}

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

expect all-good 0 'done: PASS' -- "${nightly[@]}"
grep -q -- 'run scenarios/gpu/[a-z0-9-]*\.yaml .*--launcher mpi --runtime gpu --repeat 1' "$work/calls-all-good" ||
  { echo "FAIL all-good: the suite was not run as expected"; failures=$((failures + 1)); }

for missing in tests/gpu/peerconf_gpu_dataplane_test tests/gpu/peerconf_gpu_bench harness/peerconf; do
  b=$work/build-without-${missing//\//-}
  make_build "$b"
  rm "$b/$missing"
  expect "missing-${missing##*/}" nonzero "FAIL .*${missing##*/} is not built" -- \
    ci/nightly-gpu --prebuilt --build-dir "$b"
done

expect suite-ran-nothing nonzero 'scenarios/gpu: np 2 .*ran nothing' FAKE_SUITE=empty -- "${nightly[@]}"
expect suite-failed nonzero 'scenarios/gpu: np 2 .*exit 1: 1 passed, 1 failed' FAKE_SUITE=failed -- "${nightly[@]}"
expect memory-check-missing nonzero 'NOT CHECKED: b' FAKE_SUITE=nomem -- "${nightly[@]}"
expect memory-drop nonzero 'largest drop 10 bytes.*DROPPED: b' FAKE_SUITE=drop -- "${nightly[@]}"
expect dataplane-skipped nonzero 'data-plane kernels: SKIPPED' FAKE_DATAPLANE=skip -- "${nightly[@]}"
expect bench-no-rows nonzero 'benchmark: FAIL .*no rows' FAKE_BENCH=norows -- "${nightly[@]}"

# ci/gpu-repeat.sh: the scenario stages alone, 20 times, at np 2 on 2 GPUs (gpu-4 and gpu-8
# sharing them), judged the same way.
expect repeat-good 0 'done: PASS' -- ci/gpu-repeat.sh --prebuilt --build-dir "$good"
grep -q -- '^mpirun -np 2 .*peerconf run scenarios/gpu/[a-z0-9-]*\.yaml .*--launcher mpi --runtime gpu --repeat 20' \
  "$work/calls-repeat-good" ||
  { echo "FAIL repeat-good: not run as mpirun -np 2 ... --repeat 20"; failures=$((failures + 1)); }
grep -q -- '^mpirun -np 8 .*peerconf run scenarios/gpu-8 .*--ranks-per-gpu 4 --repeat 20' \
  "$work/calls-repeat-good" ||
  { echo "FAIL repeat-good: gpu-8 not run at np 8, 4 ranks a GPU"; failures=$((failures + 1)); }
grep -q peerconf_gpu_dataplane_test "$work/calls-repeat-good" &&
  { echo "FAIL repeat-good: ran more than the suite"; failures=$((failures + 1)); }
expect repeat-drop nonzero 'DROPPED: b' FAKE_SUITE=drop -- ci/gpu-repeat.sh --prebuilt --build-dir "$good"

echo "nightly_gpu_test: $failures failure(s)"
((failures == 0))
