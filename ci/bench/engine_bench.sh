#!/usr/bin/env bash
# The fiber engine against the thread engine on simulated time (`--engine fibers | threads`, issue
# 28 item 5), side by side in one run, each measure on both engines one after the other: the whole
# suite, the 10^6-step exchange, random exploration's cases/s, exhaustive N=4 with late ranks, and
# systematic exploration of the reference layout (2 ranks, 3 steps) with its execution count. Then
# the determinism each engine promises: the suite's trace written twice (fibers) and once on
# threads, compared byte for byte. Prints a markdown table for ci/bench/RESULTS.md, with each
# goal's verdict.
#
#   ci/bench/engine_bench.sh [BUILD_DIR] [LIMIT_S]   (default build/default, 300 s a command)
set -uo pipefail
cd "$(dirname "$0")/../.."
# shellcheck source=ci/bench/timed.sh
source ci/bench/timed.sh "$@"
executions() { grep -oE '[0-9,]+ executions?' "$work/$1.txt" | head -1; }
ratio() { python3 -c "
a, b = '$1', '$2'
print('n/a' if a.startswith('>') or b.startswith('>') or not a or not b else f'{float(a) / float(b):.1f}x')"; }
# verdict VALUE OP GOAL: met | missed
verdict() { python3 -c "
v = '$1'
print('n/a' if not v or v.startswith('>') else ('met' if float(v) $2 float('$3') else 'missed'))"; }

declare -A suite exch ex exh sys
for e in fibers threads; do
  suite[$e]=$(timed suite-$e "$peerconf" run scenarios/ --engine $e)
  exch[$e]=$(timed exch-$e "$peerconf" run scenarios/gpu/dataplane/reference-exchange-1m.yaml --engine $e --no-fork)
  timed ex-$e "$peerconf" explore --cases 2000 --seed 1 --quiet --engine $e --out "$work/ex-$e" >/dev/null
  ex[$e]=$(rate ex-$e)
  exh[$e]=$(timed exh-$e "$peerconf" explore --exhaustive --ranks 4 --with-late --quiet --engine $e --out "$work/exh-$e")
  sys[$e]=$(timed sys-$e "$peerconf" explore --systematic tests/data/systematic/reference-3-steps.yaml --engine $e --quiet)
done
same() { cmp -s "$1" "$2" && echo "yes" || echo "NO"; }
"$peerconf" run scenarios/ --trace "$work/t1.json" >/dev/null 2>&1
"$peerconf" run scenarios/ --trace "$work/t2.json" >/dev/null 2>&1
"$peerconf" run scenarios/ --engine threads --trace "$work/t3.json" >/dev/null 2>&1

echo "| measure | fibers | threads | threads / fibers | goal (fibers) |"
echo "|---|---|---|---|---|"
echo "| run scenarios/ (whole suite, $(passed suite-fibers)): wall s | ${suite[fibers]} | ${suite[threads]} | $(ratio "${suite[threads]}" "${suite[fibers]}") | <= 2 s: $(verdict "${suite[fibers]}" '<=' 2) |"
echo "| reference-exchange-1m (10^6 steps, --no-fork): wall s | ${exch[fibers]} | ${exch[threads]} | $(ratio "${exch[threads]}" "${exch[fibers]}") | <= 0.5 s: $(verdict "${exch[fibers]}" '<=' 0.5) |"
echo "| explore --cases 2000: cases/s | ${ex[fibers]} | ${ex[threads]} | $(ratio "${ex[fibers]}" "${ex[threads]}") faster | >= 20,000: $(verdict "${ex[fibers]}" '>=' 20000) |"
echo "| explore --exhaustive --ranks 4 --with-late: wall s | ${exh[fibers]} | ${exh[threads]} | $(ratio "${exh[threads]}" "${exh[fibers]}") | <= 5 s: $(verdict "${exh[fibers]}" '<=' 5) |"
echo "| explore --systematic reference, 2 ranks, 3 steps ($(executions sys-fibers), $(grep -oE 'space exhausted|bound reached' "$work/sys-fibers.txt" | head -1)): wall s | ${sys[fibers]} | ${sys[threads]} | $(ratio "${sys[threads]}" "${sys[fibers]}") | <= 10 s: $(verdict "${sys[fibers]}" '<=' 10) |"
echo "| the suite's trace: fibers twice, byte-identical | $(same "$work/t1.json" "$work/t2.json") | | | |"
echo "| the suite's trace: fibers == threads, byte-identical | $(same "$work/t1.json" "$work/t3.json") | | | |"
echo
echo "load average at the end: $(cut -d' ' -f1-3 /proc/loadavg); $(nproc) CPUs; $(date -u +%F)"
