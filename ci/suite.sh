#!/usr/bin/env bash
# The README's main job: installs what is missing, builds, and runs the whole scenario suite on
# the mocked HIP runtime (ranks as threads). Extra arguments go to `peerconf run`, e.g.
#   ci/suite.sh --junit out/junit.xml --trace out/trace.json
#   ci/suite.sh --launcher mpi        (the same suite, every rank an MPI process, one mpirun)
set -euo pipefail
cd "$(dirname "$0")/.."
ci/install-deps.sh
ci/build.sh default
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
exec build/default/harness/peerconf run scenarios/ "$@"
