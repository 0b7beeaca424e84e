#!/usr/bin/env bash
# The fiber engine on simulated time with the mocked device in the in-process arena (the default,
# issue 43) beside the same engine on the memfd segments (`--mock-memory segments`, what real time
# and MPI use), side by side in one run, each measure one after the other: the whole suite, the
# 10^6-step exchange, random exploration's cases/s, exhaustive N=4 with late ranks, and systematic
# exploration of the reference layout; a case's wall time broken down (explore --breakdown: setup,
# run, checkers, record); each goal's verdict. Then what the arena must keep: every file's verdict
# the same on both memories (run --verdicts), and the suite's trace byte-identical run to run and
# across engines (fibers twice, threads once). Prints a markdown table for ci/bench/RESULTS.md.
#
#   ci/bench/engine_bench.sh [BUILD_DIR] [LIMIT_S]   (default build/default, 300 s a command)
set -uo pipefail
cd "$(dirname "$0")/../.."
# shellcheck source=ci/bench/timed.sh
source ci/bench/timed.sh "$@"
executions() { grep -oE '[0-9,]+ executions?' "$work/$1.txt" | head -1; }
ratio() { python3 -c "
a, b = '$1', '$2'
print('n/a' if a.startswith('>') or b.startswith('>') or not a or not b else f'{float(a) / float(b):.2f}x')"; }
# verdict VALUE OP GOAL: met | missed
verdict() { python3 -c "
v = '$1'
print('n/a' if not v or v.startswith('>') else ('met' if float(v) $2 float('$3') else 'missed'))"; }
# breakdown NAME FIELD: one field (setup, run, checkers, record, other, total) of explore's
# "per case (us of wall time, ...)" line, in µs a case.
breakdown() { grep -oE "per case .*" "$work/$1.txt" | head -1 | grep -oE "$2 [0-9.]+" | tr -dc '0-9.'; }

declare -A suite exch ex exh sys
for m in arena segments; do
  suite[$m]=$(timed suite-$m "$peerconf" run scenarios/ --mock-memory $m --verdicts "$work/verdicts-$m.json")
  exch[$m]=$(timed exch-$m "$peerconf" run scenarios/gpu/dataplane/reference-exchange-1m.yaml --mock-memory $m --no-fork)
  timed ex-$m "$peerconf" explore --cases 4000 --seed 1 --quiet --breakdown --mock-memory $m --out "$work/ex-$m" >/dev/null
  ex[$m]=$(rate ex-$m)
  exh[$m]=$(timed exh-$m "$peerconf" explore --exhaustive --ranks 4 --with-late --quiet --breakdown --mock-memory $m --out "$work/exh-$m")
  sys[$m]=$(timed sys-$m "$peerconf" explore --systematic tests/data/systematic/reference-3-steps.yaml --mock-memory $m --quiet)
done
same() { cmp -s "$1" "$2" && echo "yes" || echo "NO"; }
"$peerconf" run scenarios/ --trace "$work/t1.json" >/dev/null 2>&1
"$peerconf" run scenarios/ --trace "$work/t2.json" >/dev/null 2>&1
"$peerconf" run scenarios/ --engine threads --trace "$work/t3.json" >/dev/null 2>&1
sameVerdicts=$(python3 - "$work/verdicts-arena.json" "$work/verdicts-segments.json" <<'PY'
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
runs = lambda v: {(r["file"], r["seed"]): r for r in v["runs"]}
ra, rb = runs(a), runs(b)
differ = sorted(k[0] for k in ra.keys() | rb.keys() if ra.get(k) != rb.get(k))
print(f"yes ({len(ra)} runs)" if not differ and ra else f"NO: {', '.join(differ[:5]) or 'no runs'}")
PY
)

echo "| measure | arena | segments | segments / arena | goal (arena) |"
echo "|---|---|---|---|---|"
echo "| run scenarios/ (whole suite, $(passed suite-arena)): wall s | ${suite[arena]} | ${suite[segments]} | $(ratio "${suite[segments]}" "${suite[arena]}") | <= 2 s: $(verdict "${suite[arena]}" '<=' 2) |"
echo "| reference-exchange-1m (10^6 steps, --no-fork): wall s | ${exch[arena]} | ${exch[segments]} | $(ratio "${exch[segments]}" "${exch[arena]}") | <= 0.5 s: $(verdict "${exch[arena]}" '<=' 0.5) |"
echo "| explore --cases 4000: cases/s | ${ex[arena]} | ${ex[segments]} | $(ratio "${ex[arena]}" "${ex[segments]}") faster | >= 20,000: $(verdict "${ex[arena]}" '>=' 20000) |"
for part in setup run checkers record other total; do
  echo "| &nbsp; explore, a case's $part: µs | $(breakdown ex-arena $part) | $(breakdown ex-segments $part) | $(ratio "$(breakdown ex-segments $part)" "$(breakdown ex-arena $part)") | |"
done
echo "| explore --exhaustive --ranks 4 --with-late: wall s | ${exh[arena]} | ${exh[segments]} | $(ratio "${exh[segments]}" "${exh[arena]}") | <= 5 s: $(verdict "${exh[arena]}" '<=' 5) |"
for part in setup run checkers record other total; do
  echo "| &nbsp; exhaustive, a case's $part: µs | $(breakdown exh-arena $part) | $(breakdown exh-segments $part) | $(ratio "$(breakdown exh-segments $part)" "$(breakdown exh-arena $part)") | |"
done
echo "| explore --systematic reference, 2 ranks, 3 steps ($(executions sys-arena)): wall s | ${sys[arena]} | ${sys[segments]} | $(ratio "${sys[segments]}" "${sys[arena]}") | <= 10 s: $(verdict "${sys[arena]}" '<=' 10) |"
echo "| every file's verdict the same on both memories | $sameVerdicts | | | |"
echo "| the suite's trace: fibers twice, byte-identical | $(same "$work/t1.json" "$work/t2.json") | | | |"
echo "| the suite's trace: fibers == threads, byte-identical | $(same "$work/t1.json" "$work/t3.json") | | | |"
echo
echo "load average at the end: $(cut -d' ' -f1-3 /proc/loadavg); $(nproc) CPUs; $(date -u +%F)"
