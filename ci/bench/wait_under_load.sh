#!/bin/bash
# Side by side: the data-plane scenarios (scenarios/dataplane/) run by two peerconf binaries,
# alternately, under the same load: one busy loop at normal priority (a parallel ctest job) and
# two at nice 19 (the CI's background builds) on the box's cores. Prints each run's wall time and
# the per-scenario durations of the last round side by side.
# usage: ci/bench/wait_under_load.sh OLD_PEERCONF NEW_PEERCONF [ROUNDS]
set -euo pipefail
if [[ $# -lt 2 ]]; then
  echo "usage: $0 OLD_PEERCONF NEW_PEERCONF [ROUNDS]" >&2
  exit 2
fi
old=$1 new=$2 rounds=${3:-2}
here=$(cd "$(dirname "$0")/../.." && pwd)
logs=$(mktemp -d)
sh -c 'while :; do :; done' &
l1=$!
nice -n 19 sh -c 'while :; do :; done' &
l2=$!
nice -n 19 sh -c 'while :; do :; done' &
l3=$!
trap 'kill $l1 $l2 $l3 2>/dev/null; rm -rf "$logs"' EXIT
for ((round = 1; round <= rounds; ++round)); do
  for which in old new; do
    bin=$old
    [[ $which == new ]] && bin=$new
    start=$(date +%s.%N)
    "$bin" run "$here/scenarios/dataplane/" >"$logs/$which.log" 2>&1 || true
    end=$(date +%s.%N)
    printf '%s round %d: %.1f s; %s\n' "$which" "$round" "$(echo "$end - $start" | bc)" \
      "$(tail -1 "$logs/$which.log")"
  done
done
echo "last round, per scenario: old | new"
paste <(grep -o '^[A-Z]* [^ ]* ([0-9]* ranks, [0-9.]* m\?s' "$logs/old.log") \
  <(grep -o '([0-9]* ranks, [0-9.]* m\?s' "$logs/new.log") | column -t
