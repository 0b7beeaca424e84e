#!/usr/bin/env bash
# ASan+UBSan (preset asan, one build for both) and TSan (preset tsan): builds only what their
# tests run (target peerconf_sanitizer_targets: the `peerconf` command and the test executables
# with a test labelled unit, property or scenario; no GPU variants, no MPI test binaries, no
# benchmarks, nothing labelled only exhaustive; TSan's peerconf_tsan_targets also leaves out the
# executables labelled single-threaded: parsers, codecs, reports, nothing for a race detector)
# and runs labels unit, property and scenario under halt_on_error, each test executable as one
# ctest test running all its tests in one process (PEERCONF_CTEST_PER_EXECUTABLE, set by the
# presets: an instrumented process takes 0.1-0.2 CPU-s to start, more than most tests; one that
# forks after its threads started stays one test a process: FORKS_AFTER_THREADS). Prints
# what it built and what it ran. The scenario files run once, as the whole
# suite in one process (suite/threads: every scenario in thread mode, one after the other, so
# what a run leaves behind meets the next), not again one file a test (scenario/*: the ci
# preset's). The data-plane folders are left out of it (PEERCONF_SUITE_THREADS_SKIP, set by the
# presets: their ranks spin-wait through deadlines, 87 of TSan's 110 CPU-s for the suite); the data
# plane's threads run under both in src_tests and dataplane_tests. The simulated clock's hand-offs run under both in its own tests (sim_clock_test,
# the SimReplay and Clocks/* cases): on sim the ranks take turns, so a race between ranks is
# ordered by the turn and TSan could not see it in a whole suite on sim anyway.
# Usage: ci/sanitizers.sh [PRESET...]   (default: asan tsan). SANITIZER_STAGE=build only builds,
# SANITIZER_STAGE=test only tests (ci/test.sh builds in its background lane, then tests).
#
# Not run under the sanitizers, and why:
# - label mpi (the mpiexec tests and the suite under mpirun): Open MPI 4.1's own code reports
#   leaks and races of its progress threads and shared-memory transport under ASan/TSan (noise in
#   a third-party library, not in peerconf); the MPI paths run unsanitized in ctest --preset ci.
# - label gpu: no device here. exhaustive: 4096 cases of the thread launcher, run unsanitized in
#   ctest --preset ci. install/consumer: packaging, run in the ci build.
# - suite/core-* (the suite again with each planted core) and explain/* (explain and run over every
#   file): the same harness code as suite/threads, once more a file or a planted core; they judge
#   verdicts, not memory or races, and run in the ci build (in CI's TSan stage of 2026-12-01 the
#   scenario label took 650 of its 1067 test-seconds, two suites 188 s + these the most of it).
# - label script (layering checks, the CI examples, the schema check, the GPU nightly's judging
#   against fakes): Python and shell over the tree, no compiled code of ours runs.
# No suppression file is used: the runs are clean without one.
set -euo pipefail
cd "$(dirname "$0")/.."
presets=("$@")
((${#presets[@]})) || presets=(asan tsan)
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
stage=${SANITIZER_STAGE:-all}  # build | test | all (ci/test.sh builds in the background first)
for preset in "${presets[@]}"; do
  start=$SECONDS
  if [[ $stage != test ]]; then
    ci/configure.sh "$preset"
    list=sanitizer_targets.txt
    [[ $preset == tsan ]] && list=tsan_targets.txt  # without the single-threaded tests
    targets=$(paste -sd' ' "build/$preset/$list")
    # The asan build preset also builds the fuzzers (ci/fuzz.sh FUZZ_PRESET=asan runs them).
    [[ $preset == asan ]] && targets+=" fuzz_scenario fuzz_ipc_handle"
    echo "ci/sanitizers.sh: $preset builds $targets"
    cmake --build --preset "$preset" -j "$(nproc)"
    echo "ci/sanitizers.sh: $preset built in $((SECONDS - start)) s"
  fi
  [[ $stage == build ]] && continue
  built=$SECONDS
  ctest --preset "$preset" -j "$(nproc)"
  tested=$SECONDS
  # What ran: one count per executable (gtest binaries, peerconf for the scenarios, cmake -P
  # scripts around peerconf for the CLI checks).
  ctest --preset "$preset" -N --show-only=json-v1 2>/dev/null | python3 -c '
import collections, json, os, sys
tests = json.load(sys.stdin)["tests"]
runs = collections.Counter()
for t in tests:
    cmd = t.get("command") or ["?"]
    exe = os.path.basename(cmd[0])
    if exe == "cmake" and "-P" in cmd:
        exe = "cmake -P " + os.path.basename(cmd[cmd.index("-P") + 1])
    runs[exe] += 1
print(f"ci/sanitizers.sh: '"$preset"' ran {len(tests)} tests: " +
      ", ".join(f"{exe} {n}" for exe, n in sorted(runs.items())))'
  echo "ci/sanitizers.sh: $preset tested in $((tested - built)) s"
done
