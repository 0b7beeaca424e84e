#!/usr/bin/env bash
# The README's test command: installs what is missing, builds every variant the `ci` preset
# names, and runs every test (unit, mpi, scenario, property, ...) through ctest; then the
# hardening stages (issue 8): clang-format and clang-tidy checks, the short fuzz runs, the
# crash/hang sweep, and the tests under ASan+UBSan and TSan. Arguments go to ctest.
# PEERCONF_CI_HARDENING=0 skips the hardening stages (e.g. `PEERCONF_CI_HARDENING=0 ci/test.sh -L
# unit`). Each stage's time is printed at the end.
set -euo pipefail
cd "$(dirname "$0")/.."
timings=()
stage() {
  local name=$1 start=$SECONDS
  shift
  echo "== ci/test.sh: $name"
  "$@"
  timings+=("$(printf '%-12s %5d s' "$name" $((SECONDS - start)))")
}
report() {
  echo "== ci/test.sh: stage times"
  printf '  %s\n' "${timings[@]}"
  echo "  total        $((SECONDS)) s"
}
trap report EXIT
hardening=${PEERCONF_CI_HARDENING:-1}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

stage deps ci/install-deps.sh
if [[ $hardening != 0 ]]; then
  stage format ci/format-check.sh
fi
stage build ci/build.sh ci
stage ctest ctest --preset ci -j 2 "$@"
if [[ $hardening != 0 ]]; then
  stage tidy ci/tidy.sh
  stage fuzz ci/fuzz.sh
  stage sweep ci/sweep.sh build/ci/harness/peerconf
  stage asan ci/sanitizers.sh asan
  stage tsan ci/sanitizers.sh tsan
fi
leftover=$(ls /dev/shm 2>/dev/null | grep '^peerconf\.' || true)
if [[ -n "$leftover" ]]; then
  echo "ci/test.sh: FAIL shared-memory segments left in /dev/shm:" >&2
  echo "$leftover" >&2
  exit 1
fi
