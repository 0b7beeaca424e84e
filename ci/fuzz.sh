#!/usr/bin/env bash
# libFuzzer targets (preset fuzz: clang, -fsanitize=fuzzer,address,undefined):
#   fuzz_scenario    parseScenario(text, "fuzz.yaml") may only return or throw ScenarioError
#   fuzz_ipc_handle  decodeHandle / hipIpcOpenMemHandle on arbitrary 64 bytes: refuse, never map
# Each runs FUZZ_SECONDS (default 60: the CI's short run) from its seed corpus in
# tests/fuzz/corpus/<target>/ (read only); what it learns goes to build/fuzz/corpus/<target>/ and
# any crash, leak or hang (> 10 s an input) to build/fuzz/artifacts/, and fails this script.
#
# Long run (documented, not in CI), e.g. an hour each on every core:
#   FUZZ_SECONDS=3600 FUZZ_JOBS=$(nproc) ci/fuzz.sh
# then minimize what it found into the seed corpus if it adds coverage:
#   build/fuzz/tests/fuzz/fuzz_scenario -merge=1 tests/fuzz/corpus/scenario build/fuzz/corpus/scenario
# and record executions and findings in ci/fuzz/RESULTS.md.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${FUZZ_SECONDS:-60}
jobs=${FUZZ_JOBS:-1}
cmake --preset fuzz >/dev/null
cmake --build --preset fuzz -j 2
out=build/fuzz
mkdir -p "$out/artifacts"
status=0
for target in scenario ipc_handle; do
  binary=$out/tests/fuzz/fuzz_$target
  corpus=$out/corpus/$target
  mkdir -p "$corpus"
  case $target in
    scenario) max_len=4096 ;;
    ipc_handle) max_len=65 ;;  # 64 handle bytes and the mode byte
  esac
  log=$out/fuzz_$target.log
  args=(-max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -max_len="$max_len"
        -print_final_stats=1 -artifact_prefix="$out/artifacts/${target}-")
  if ((jobs > 1)); then
    # Fork mode: jobs workers share the corpus; the run ends at max_total_time.
    args+=(-fork="$jobs" -ignore_crashes=0)
  fi
  echo "ci/fuzz.sh: fuzz_$target for ${seconds} s ($jobs job(s))"
  if ! "$binary" "${args[@]}" "$corpus" "tests/fuzz/corpus/$target" >"$log" 2>&1; then
    echo "ci/fuzz.sh: FAIL fuzz_$target found a bug; last lines of $log:" >&2
    tail -n 40 "$log" >&2
    status=1
  fi
  execs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' | tail -n 1)
  units=$(ls "$corpus" | wc -l)
  echo "ci/fuzz.sh: fuzz_$target: ${execs:-?} executions in ${seconds} s, corpus $units inputs"
done
exit $status
