#!/usr/bin/env bash
# Crash/hang sweep: 100 generated scenarios with dead (SIGKILL) and hung (SIGSTOP) ranks, all of
# them in thread mode and all of them under mpirun with real signals (--kill-mode signal); asserts
# no orphan process, no /dev/shm/peerconf.* segment left, every run reported within its bound +
# 5 s with every rank's last state (ci/sweep.py). Usage: ci/sweep.sh [PEERCONF] [sweep.py args]
# Summary: build/sweep/results.md (the committed figures are in ci/sweep/RESULTS.md).
set -euo pipefail
cd "$(dirname "$0")/.."
peerconf=${1:-}
if [[ -z "$peerconf" ]]; then
  for b in build/ci build/default; do
    [[ -x $b/harness/peerconf ]] && { peerconf=$b/harness/peerconf; break; }
  done
else
  shift
fi
[[ -x "$peerconf" ]] || { echo "ci/sweep.sh: no peerconf built (run ci/build.sh)" >&2; exit 2; }
mkdir -p build/sweep
exec python3 ci/sweep.py "$peerconf" --results build/sweep/results.md "$@"
