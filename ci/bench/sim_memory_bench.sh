#!/usr/bin/env bash
# The memory model before and after a change, side by side in one run (issue 43, item 4): two
# builds of peerconf (-DPEERCONF_WITH_BENCH=ON), e.g. one configured at the commit before the
# change and built there, the other at the change. Alternating the builds ROUNDS times: ns an
# operation of peerconf_sim_memory_bench (SimMemory alone, a ring exchange of 2, 4 and 16 ranks)
# and the wall and CPU time of the 10^6-step exchange file (the memory model's longest run).
# Prints the median of each and the ratio before / after, a markdown table for RESULTS.md.
#
#   ci/bench/sim_memory_bench.sh BEFORE_BUILD AFTER_BUILD [ROUNDS]   (default 3 rounds)
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 2
before=$(realpath "${1:?before build dir}")
after=$(realpath "${2:?after build dir}")
rounds=${3:-3}
exchange=scenarios/gpu/dataplane/reference-exchange-1m.yaml
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

TIMEFORMAT='%R %U %S'
for ((i = 0; i < rounds; ++i)); do
  for side in before after; do
    build=$before
    [[ $side == after ]] && build=$after
    "$build/ci/bench/peerconf_sim_memory_bench" --benchmark_min_time=0.5 \
      --benchmark_format=json >"$work/micro-$side-$i.json" 2>/dev/null
    # Wall and CPU (user + system) seconds: on a shared box the CPU time is the steadier.
    { time "$build/harness/peerconf" run "$exchange" --no-fork >"$work/exch-$side-$i.txt" 2>&1 ||
      echo "exchange failed on $side (round $i)" >&2; } 2>>"$work/exch-$side.txt"
  done
done
python3 - "$work" "$rounds" <<'PY'
import json, statistics, sys
work, rounds = sys.argv[1], int(sys.argv[2])
def micro(side):
    per = {}
    for i in range(rounds):
        for b in json.load(open(f"{work}/micro-{side}-{i}.json"))["benchmarks"]:
            per.setdefault(b["name"], []).append(b["per_op"] * 1e9)
    return {k: statistics.median(v) for k, v in per.items()}
def exch(side):  # (wall, cpu) medians
    rows = [[float(x) for x in l.split()] for l in open(f"{work}/exch-{side}.txt") if l.strip()]
    return (statistics.median(r[0] for r in rows), statistics.median(r[1] + r[2] for r in rows))
mb, ma = micro("before"), micro("after")
print(f"| measure (median of {rounds}, alternating) | before | after | before / after |")
print("|---|---|---|---|")
for name in mb:
    ranks = name.split("/")[-1]
    print(f"| SimMemory load/store, ring exchange of {ranks} ranks: ns/op | {mb[name]:.1f} | "
          f"{ma[name]:.1f} | {mb[name] / ma[name]:.2f}x |")
eb, ea = exch("before"), exch("after")
for k, what in enumerate(("wall", "CPU (user + sys)")):
    print(f"| reference-exchange-1m (10^6 steps, --no-fork): {what} s | {eb[k]:.2f} | {ea[k]:.2f} | "
          f"{eb[k] / ea[k]:.2f}x |")
PY
echo
echo "load average at the end: $(cut -d' ' -f1-3 /proc/loadavg); $(nproc) CPUs; $(date -u +%F)"
