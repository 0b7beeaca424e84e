#!/usr/bin/env bash
# The README's test command: installs what is missing, builds every variant the `ci` preset
# names, and runs every test (unit, mpi, scenario, property, ...) through ctest.
set -euo pipefail
cd "$(dirname "$0")/.."
ci/install-deps.sh
ci/build.sh ci
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
ctest --preset ci -j 2 "$@"
leftover=$(ls /dev/shm 2>/dev/null | grep '^peerconf\.' || true)
if [[ -n "$leftover" ]]; then
  echo "ci/test.sh: FAIL shared-memory segments left in /dev/shm:" >&2
  echo "$leftover" >&2
  exit 1
fi
