#!/usr/bin/env bash
# The suite's checks beyond the scenario files (ci/suite.sh runs them after the simulated pass;
# ci/mutants/run.py as a pass of its own), each a few milliseconds (the interrupt: 3 s):
#   1. every file of tests/data/invalid_scenarios/ (the parser's and rules' refusals) and of
#      tests/data/refused_by_the_oracle/ (refused at load for what the oracle derives: an outcome
#      the draw decides without `outcome: as-drawn`) is refused where and how its first line says
#      ("# expect-error: LINE:COL: fragment"): a validation rule made blind (it accepts what it
#      must refuse: the vacuous-verdict rule, say) fails here; and --refused itself fails on a valid
#      file that claims it must be refused (tests/data/refused_control/), its negative control;
#   2. `explore --systematic` finds small broken layouts within its bounds and misses them at bound
#      0: ack-before-read (C6, a preemption needed) and reader-without-acquire (C7, an older read
#      needed), so an explorer whose bounds never prune, or that enumerates nothing, fails here;
#   3. the expectation oracle (`peerconf explain`) derives what every file of scenarios/ expects:
#      no run fails for a file whose expect: the oracle reads otherwise (the judge only rewords a
#      failure with it), so a walk of a rank's calls made wrong (model/rank_calls: the faults a
#      rank's calls draw), a buffer match or a timeline the oracle misreads fails here (the judge's
#      own coverage control agrees where its certain faults never fire, as it expects);
#   4. a step cap: the real pass's cap of 10^5 skips a file whose stop is at step 10^5 exactly
#      (model/step_cap.h: a stop at S needs S + 1 steps), never runs it cut short of the stop;
#   5. a cross-node peer set: `explain` lists the faults `peers: cross-node` planted, those of the
#      guide's nodes (in blocks), which no run can tell apart from another set, since every
#      reader of the file reads the set the parser planted;
#   6. an interrupt: SIGINT in the middle of `run` ends it cleanly (exit 130, the line that says
#      how far it got), so a handler that ends the process at once or exits as a failed run fails.
# Usage: ci/suite-checks.sh [PEERCONF]   (default: build/suite/harness/peerconf)
set -uo pipefail
cd "$(dirname "$0")/.."
peerconf=${1:-build/suite/harness/peerconf}
status=0
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

# expect NAME RC REGEX -- COMMAND...: runs COMMAND, which must exit RC with output matching REGEX.
expect() {
  local name=$1 rc=$2 regex=$3
  shift 4
  local text got
  text=$("$@" 2>&1)
  got=$?
  if [[ $got -eq $rc ]] && grep -Eq -- "$regex" <<<"$text"; then
    echo "PASS $name"
  else
    echo "FAIL $name: expected exit $rc and /$regex/, got exit $got:"
    tail -n 8 <<<"$text" | sed 's/^/    /'
    status=1
  fi
}

echo "== the suite's own checks: refused files, the systematic explorer's bounds"
expect refused-files 0 "^[0-9]+ refused as stated, 0 not" -- \
  "$peerconf" validate --refused tests/data/invalid_scenarios/ tests/data/refused_by_the_oracle/
expect refused-control 1 "but it was accepted" -- \
  "$peerconf" validate --refused tests/data/refused_control/
sys=tests/data/systematic
expect systematic-ack-before-read-found 1 "FAIL after [0-9]+ executions: C6" -- \
  "$peerconf" explore --systematic "$sys/ack-before-read-3-steps.yaml" --schedule-out "$out/a"
expect systematic-ack-before-read-missed-at-bound-0 0 "at most 0 preemption\(s\) and 0 older read\(s\) ran and passed" -- \
  "$peerconf" explore --systematic "$sys/ack-before-read-3-steps.yaml" --preemptions 0 --older-reads 0
expect systematic-reader-without-acquire-found 1 "FAIL after [0-9]+ executions: C7" -- \
  "$peerconf" explore --systematic "$sys/reader-without-acquire-3-steps.yaml" --schedule-out "$out/r"
expect systematic-reader-without-acquire-missed-at-bound-0 0 "at most 0 preemption\(s\) and 0 older read\(s\) ran and passed" -- \
  "$peerconf" explore --systematic "$sys/reader-without-acquire-3-steps.yaml" --preemptions 0 --older-reads 0

echo "== a step cap never cuts a run short of a planned stop"
# The real-time pass's cap of 10^5 steps on a file whose stop is at step 10^5 exactly: it needs
# 100001 steps, so it is skipped with the reason. A cap that ran it cut at 10^5 fails it here on
# simulated time as well (C8: "the planned stop did not happen").
expect stop-at-the-step-cap-skipped 0 "SKIP stop-at-the-step-cap: .*needs 100001 data-plane steps, above the step cap of 100000" -- \
  env PEERCONF_MAX_DATAPLANE_STEPS=100000 "$peerconf" run scenarios/dataplane/stop-at-the-step-cap.yaml

echo "== a cross-node peer set is the guide's"
# `peers: cross-node` plants one fault a peer on another node than the rank's, nodes in blocks of
# ranks / nodes (the guide): rank 4 of 6 on 2 nodes is on node 1 (3, 4, 5), so its set is peers 0,
# 1, 2. The parser, the oracle and the checkers all read the set the parser planted, so a set made
# wrong (nodes round-robin, the rank's own node included) passes every run; the file's planted
# faults as `explain` lists them do not.
xn=scenarios/topology/cross-node-one-rank-others-another.yaml
expect cross-node-set 0 "^fault #0 \(open of peer 0, fault #1 \(open of peer 1, fault #2 \(open of peer 2, $" -- \
  bash -c '"$1" explain "$2" | grep -Eo "fault #[0-9]+ \(open of peer [0-9]+," | sort -u | tr "\n" " "' \
  _ "$peerconf" "$xn"

echo "== the expectation oracle against every file of scenarios/"
mapfile -t files < <(find scenarios -name '*.yaml' | sort)
text=$("$peerconf" explain "${files[@]}" 2>&1)
got=$?
if [[ $got -eq 0 ]]; then
  echo "PASS oracle-agrees (${#files[@]} files)"
else
  echo "FAIL oracle-agrees: expected exit 0, got exit $got; the differences:"
  grep -E "DIFFERS|error" <<<"$text" | head -n 8 | sed 's/^/    /'
  status=1
fi

echo "== an interrupt in the middle of a run"
# 3 s in: past the self-check, in the middle of the simulated pass (about 10 s); the run must end
# within 20 s more (-k: else SIGKILL, exit 137). --foreground: one SIGINT, to peerconf only
# (without it timeout also signals its process group, so peerconf got two, and read the second as
# a second Ctrl-C whenever its handler ran between them: "ended at once" under load).
expect interrupt-ends-run-cleanly 130 "interrupted after [0-9]+ of [0-9]+ scenarios \(SIGINT\)" -- \
  timeout --foreground --preserve-status -k 20 -s INT 3 "$peerconf" run scenarios/
exit "$status"
