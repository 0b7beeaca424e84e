#!/usr/bin/env bash
# libFuzzer targets (preset fuzz: clang, -fsanitize=fuzzer,address,undefined):
#   fuzz_scenario    parseScenario(text, "fuzz.yaml") may only return or throw ScenarioError
#   fuzz_ipc_handle  decodeHandle / hipIpcOpenMemHandle on arbitrary 64 bytes: refuse, never map
# Each runs FUZZ_SECONDS (default 15: the CI's short run, a smoke test: the long runs find
# things, ci/fuzz/RESULTS.md) from its seed corpus in
# tests/fuzz/corpus/<target>/ (read only); what it learns goes to build/PRESET/corpus/<target>/ and
# any crash, leak or hang (> 10 s an input) to build/PRESET/artifacts/, and fails this script.
# The targets fuzz at the same time, each on its own core where there are two (the CI box): the
# same FUZZ_SECONDS of one core each as one after the other, in half the wall time.
# FUZZ_PARALLEL=0 runs them one after the other. FUZZ_STAGE=build only builds, FUZZ_STAGE=run
# only fuzzes. FUZZ_PRESET=asan fuzzes with the targets of the ASan build (preset asan, build/asan:
# the same clang, ASan and UBSan; coverage instrumentation only on the libraries the fuzzers name,
# tests/fuzz/CMakeLists.txt). That is what ci/test.sh does: its ASan build, in the background lane,
# builds the fuzzers too, so the harness is not compiled a third time for a 15 s smoke run (the
# fuzz build cost 117 CPU-s, ci/bench/CI-TIMES.md). The default (preset fuzz, build/fuzz, the whole
# tree instrumented) is for the long runs.
#
# Long run (documented, not in CI), e.g. an hour each on every core:
#   FUZZ_SECONDS=3600 FUZZ_JOBS=$(nproc) ci/fuzz.sh
# then minimize what it found into the seed corpus if it adds coverage:
#   build/fuzz/tests/fuzz/fuzz_scenario -merge=1 tests/fuzz/corpus/scenario build/fuzz/corpus/scenario
# and record executions and findings in ci/fuzz/RESULTS.md.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${FUZZ_SECONDS:-15}
jobs=${FUZZ_JOBS:-1}
stage=${FUZZ_STAGE:-all}  # build | run | all (ci/test.sh builds in the background first)
preset=${FUZZ_PRESET:-fuzz}
case $preset in
  fuzz | asan) ;;
  *) echo "ci/fuzz.sh: FUZZ_PRESET=$preset: fuzz or asan" >&2; exit 2 ;;
esac
out=build/$preset
if [[ $stage != run ]]; then
  ci/configure.sh "$preset"
  cmake --build --preset "$preset" -j "$(nproc)"
  echo "ci/fuzz.sh: built $(ls "$out"/tests/fuzz/fuzz_* | xargs -n1 basename | paste -sd' ')"
fi
[[ $stage == build ]] && exit 0
mkdir -p "$out/artifacts"
targets=(scenario ipc_handle)
parallel=${FUZZ_PARALLEL:-1}
if ((jobs > 1 || $(nproc) < 2)); then
  parallel=0  # fork mode already takes every core; one core: nothing to share
fi

fuzz_one() {
  local target=$1 binary=$out/tests/fuzz/fuzz_$1 corpus=$out/corpus/$1 max_len
  mkdir -p "$corpus"
  case $target in
    scenario) max_len=4096 ;;
    ipc_handle) max_len=65 ;;  # 64 handle bytes and the mode byte
  esac
  local args=(-max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -max_len="$max_len"
              -print_final_stats=1 -artifact_prefix="$out/artifacts/${target}-")
  if ((jobs > 1)); then
    # Fork mode: jobs workers share the corpus; the run ends at max_total_time.
    args+=(-fork="$jobs" -ignore_crashes=0)
  fi
  # A job of its own for the mocked runtime (its handles are refused in any other run).
  # fuzz_ipc_handle keeps one live allocation for its whole life and ends by exit(): the segment
  # is a memfd and goes with the process (src/mock_hip/control.h); nothing is left to remove.
  local job rc=0
  job=$(od -An -N8 -tx8 /dev/urandom | tr -d ' \n')
  PEERCONF_MOCK_JOB=$job "$binary" "${args[@]}" "$corpus" "tests/fuzz/corpus/$target" \
    >"$out/fuzz_$target.log" 2>&1 || rc=$?
  return $rc
}

declare -A rc
if ((parallel)); then
  declare -A pid
  for target in "${targets[@]}"; do
    echo "ci/fuzz.sh: fuzz_$target for ${seconds} s ($jobs job(s)), concurrently"
    fuzz_one "$target" &
    pid[$target]=$!
  done
  for target in "${targets[@]}"; do
    rc[$target]=0
    wait "${pid[$target]}" || rc[$target]=$?
  done
else
  for target in "${targets[@]}"; do
    echo "ci/fuzz.sh: fuzz_$target for ${seconds} s ($jobs job(s))"
    rc[$target]=0
    fuzz_one "$target" || rc[$target]=$?
  done
fi

status=0
for target in "${targets[@]}"; do
  log=$out/fuzz_$target.log
  if ((rc[$target] != 0)); then
    echo "ci/fuzz.sh: FAIL fuzz_$target found a bug (exit ${rc[$target]}); last lines of $log:" >&2
    tail -n 40 "$log" >&2
    status=1
  fi
  execs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' | tail -n 1)
  units=$(ls "$out/corpus/$target" | wc -l)
  echo "ci/fuzz.sh: fuzz_$target: ${execs:-?} executions in ${seconds} s, corpus $units inputs"
done
exit $status
