#!/usr/bin/env bash
# The README's test command: installs what is missing, builds every variant the `ci` preset
# names, and runs every test (unit, mpi, scenario, property, ...) through ctest; then the
# hardening stages (issue 8): clang-format and clang-tidy checks, the short fuzz runs, the
# crash/hang sweep, and the tests under ASan+UBSan and TSan. Each test runs once: the ones the
# sanitizer stages run are not built or run in the plain build. Arguments go to the plain ctest.
# PEERCONF_CI_HARDENING=0 skips the hardening stages and runs every test in the plain build
# (e.g. `PEERCONF_CI_HARDENING=0 ci/test.sh -L unit`). Each stage's time is printed at the end
# (ci/bench/CI-TIMES.md: the figures).
#
# Schedule (2 cores): the stages that only compile (the asan build with the fuzzers, the tsan
# build, clang-tidy) run in the background at nice 19, one after the other, in the order the test
# stages need them;
# the stages that run tests (ctest, sweep, fuzzing, the sanitizer tests) run one at a time in the
# foreground at normal priority, each as soon as its build is done. Nice 19 gets the CPU only
# when the tests leave it idle (they mostly wait on deadlines, mpirun and process start-up), so
# the builds fill that time without slowing the tests. A stage's output goes to
# build/ci-logs/STAGE.log and is printed when it ends. PEERCONF_CI_SERIAL=1 runs every stage
# alone, one after the other (each stage's own time, as ci/bench/CI-TIMES.md measures them).
# A failed stage stops the run: nothing new starts, the background builds are stopped.
set -euo pipefail
cd "$(dirname "$0")/.."
hardening=${PEERCONF_CI_HARDENING:-1}
serial=${PEERCONF_CI_SERIAL:-0}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# The CI examples' checks (ctest ci_examples_*) fail, not skip, without their validator.
export PEERCONF_REQUIRE_CI_EXAMPLES=1
# ci/install-deps.sh installs chromium: the HTML report's browser test must run, not skip.
export PEERCONF_REQUIRE_BROWSER=1
logs=build/ci-logs
mkdir -p "$logs"
shm_before=$(ls /dev/shm 2>/dev/null | grep '^peerconf\.' | sort || true)  # the last check's baseline

# Stages: name, lane (fg: tests, one at a time; bg: builds, nice 19, one at a time), the stages
# it needs, command. A stage starts when what it needs has passed and its lane is free.
names=()
declare -A lane needs command state started ended status pid
add() {
  local name=$1
  names+=("$name")
  lane[$name]=$2
  needs[$name]=$3
  shift 3
  command[$name]=$(printf '%q ' "$@")
  state[$name]=waiting
}
add deps fg "" ci/install-deps.sh
if [[ $hardening != 0 ]]; then
  # Each test runs once: what the sanitizer stages run (the unit, property and scenario tests,
  # suite/threads) runs there, under ASan+UBSan and TSan, and is neither built nor run in the
  # plain build; its ctest runs the rest (MPI, the per-file scenarios, the planted cores, install,
  # explain, exhaustive, scripts). ci/unsanitized_tests.py reads the asan preset's filter.
  add build fg "deps" ci/build.sh ci -DPEERCONF_PLAIN_SANITIZED_TESTS=OFF
  add ctest fg "build" ci/unsanitized_tests.py --run -j "$(nproc)" "$@"
else
  add build fg "deps" ci/build.sh ci -DPEERCONF_PLAIN_SANITIZED_TESTS=ON
  add ctest fg "build" ctest --preset ci -j "$(nproc)" "$@"
fi
if [[ $hardening != 0 ]]; then
  # Background lane, in the order the foreground needs them; clang-tidy (needed by nothing) last.
  add format bg "deps" ci/format-check.sh
  # The GPU nightly's own configure line (ci/nightly-build.sh), configured and generated (seconds,
  # first in the lane so that nothing waits for it at the end): what a GPU runner builds. The `ci`
  # build above compiles the same sources with the CUDA variant (the GPU programs included);
  # compiling them a second time in Release cost 69 CPU-s.
  if [[ -x /usr/local/cuda/bin/nvcc ]]; then
    add nightly-cuda bg "format" ci/nightly-build.sh --configure-only --build-dir build/nightly-ci
  else
    echo "ci/test.sh: NOTE /usr/local/cuda not found: the nightly's CUDA line is NOT configured" >&2
  fi
  # The ASan build builds the fuzzers too (preset asan; ci/fuzz.sh FUZZ_PRESET=asan): a fuzz build
  # of its own compiled the harness a third time (117 CPU-s) for a 15 s smoke run.
  add asan-build bg "format" env SANITIZER_STAGE=build ci/sanitizers.sh asan
  add tsan-build bg "asan-build" env SANITIZER_STAGE=build ci/sanitizers.sh tsan
  add tidy bg "tsan-build" ci/tidy.sh
  # 100 generated scenarios in threads (both clocks), 10 of them under mpirun with real signals:
  # each of the 10 (kind, point) pairs once (ci/sweep.py's `stratified`); each is a new mpirun,
  # 1.5 CPU-s apiece (ci/sweep.sh).
  add sweep fg "ctest" ci/sweep.sh build/ci/harness/peerconf --mpi-count 10
  add fuzz fg "sweep asan-build" env FUZZ_STAGE=run FUZZ_PRESET=asan ci/fuzz.sh
  add asan fg "fuzz asan-build" env SANITIZER_STAGE=test ci/sanitizers.sh asan
  add tsan fg "asan tsan-build" env SANITIZER_STAGE=test ci/sanitizers.sh tsan
fi

now() { echo $((SECONDS - t0)); }
t0=$SECONDS
failed=
cpu_seconds() {  # user+system seconds of a stage's children, from `times` (its second line)
  local line
  line=$(sed -n 2p "$logs/$1.cpu" 2>/dev/null) || true
  [[ -n $line ]] || { echo "?"; return; }
  python3 - "$line" <<'PY'
import re, sys
def secs(t):
    m = re.fullmatch(r"(?:(\d+)m)?([\d.]+)s", t)
    return int(m.group(1) or 0) * 60 + float(m.group(2)) if m else 0.0
user, system = sys.argv[1].split()[:2]
print(f"{secs(user) + secs(system):.0f}")
PY
}
report() {
  if [[ $serial != 0 ]]; then
    echo "== ci/test.sh: stage times (serial run: one stage at a time, all at normal priority)"
  else
    echo "== ci/test.sh: stage times (start..end in s from the start; fg: tests at normal" \
      "priority, one at a time; bg: builds at nice 19, one at a time; cpu: user+system s)"
  fi
  local name
  for name in "${names[@]}"; do
    case ${state[$name]} in
      done | failed)
        printf '  %-11s %s %5d s  (%4d..%4d)  cpu %6s s%s\n' "$name" "${lane[$name]}" \
          $((ended[$name] - started[$name])) "${started[$name]}" "${ended[$name]}" \
          "$(cpu_seconds "$name")" \
          "$([[ ${state[$name]} == failed ]] && echo "  FAILED (exit ${status[$name]})")" ;;
      stopped) printf '  %-11s %s   stopped after %d s\n' "$name" "${lane[$name]}" \
        $((ended[$name] - started[$name])) ;;
      *) printf '  %-11s %s   not run\n' "$name" "${lane[$name]}" ;;
    esac
  done
  local cpu=0 one
  for name in "${names[@]}"; do
    one=$(cpu_seconds "$name")
    [[ $one == "?" ]] || cpu=$((cpu + one))
  done
  echo "  total          $(now) s   cpu $cpu s   (load average at the end:" \
    "$(cut -d' ' -f1-3 /proc/loadavg))"
}
stop_running() {
  local name
  for name in "${names[@]}"; do
    if [[ ${state[$name]} == running ]]; then
      kill -TERM -- "-${pid[$name]}" 2>/dev/null || true
    fi
  done
}
trap 'stop_running; report' EXIT

ready() {
  local name=$1 need
  [[ ${state[$name]} == waiting ]] || return 1
  for need in ${needs[$name]}; do
    [[ -z ${state[$need]:-} || ${state[$need]} == done ]] || return 1
  done
  return 0
}
busy() {  # busy LANE: a stage of LANE is running (serial: any stage is running)
  local name
  for name in "${names[@]}"; do
    [[ ${state[$name]} == running && ($serial != 0 || ${lane[$name]} == "$1") ]] && return 0
  done
  return 1
}
launch() {
  local name=$1 prio=0
  [[ ${lane[$name]} == bg && $serial == 0 ]] && prio=19
  state[$name]=running
  started[$name]=$(now)
  echo "== ci/test.sh: $name started at $(now) s (${lane[$name]}, nice $prio)"
  # Its own session, so that a failure elsewhere can stop it and everything it started. A new
  # session is a new scheduler autogroup where the kernel has them (sched_autogroup_enabled):
  # nice then orders only the tasks inside the group, and groups share the CPU equally, so the
  # background lane lowers its group's weight too, else its builds take half the CPU from the
  # tests and the build in the foreground. `times` ends the log with the stage's CPU seconds
  # (its children's user and system time), which the report prints.
  local body="${command[$name]}"
  ((prio > 0)) && body="echo $prio >/proc/self/autogroup 2>/dev/null || true; $body"
  body+=$'\n''rc=$?; times >'"$logs/$name.cpu"'; exit $rc'
  setsid nice -n "$prio" bash -c "$body" >"$logs/$name.log" 2>&1 &
  pid[$name]=$!
}

while :; do
  if [[ -z $failed ]]; then
    for name in "${names[@]}"; do
      if ready "$name" && ! busy "${lane[$name]}"; then
        launch "$name"
      fi
    done
  fi
  busy fg || busy bg || break
  finished=
  rc=0
  wait -n -p finished || rc=$?
  for name in "${names[@]}"; do
    [[ ${pid[$name]:-} == "$finished" && ${state[$name]} == running ]] || continue
    ended[$name]=$(now)
    status[$name]=$rc
    echo "== ci/test.sh: $name ended at $(now) s after $((ended[$name] - started[$name])) s," \
      "exit $rc; its output ($logs/$name.log):"
    cat "$logs/$name.log"
    if ((rc == 0)); then
      state[$name]=done
    elif [[ -n $failed ]]; then
      state[$name]=stopped  # stopped because $failed failed
    else
      state[$name]=failed
      failed=$name
      stop_running
    fi
  done
done
[[ -z $failed ]] || { echo "ci/test.sh: FAIL stage $failed" >&2; exit 1; }
for name in "${names[@]}"; do
  [[ ${state[$name]} == done ]] || { echo "ci/test.sh: FAIL stage $name did not run" >&2; exit 1; }
done

# Segments are memfds now (src/mock_hip/control.h): no run makes a /dev/shm file at all, so any new
# peerconf.* file is a regression. Files that were there before this run started (left by older
# builds, or by another run on the machine) are not this run's and are not judged.
leftover=$(comm -13 <(echo "$shm_before") <(ls /dev/shm 2>/dev/null | grep '^peerconf\.' | sort || true))
if [[ -n "$leftover" ]]; then
  echo "ci/test.sh: FAIL shared-memory segments left in /dev/shm by this run:" >&2
  echo "$leftover" >&2
  exit 1
fi
