#!/usr/bin/env bash
# Exploration throughput, side by side in one run: 4-rank fault scenarios per second in thread
# mode (threads started per run vs the kept rank pool), exhaustive N=4 wall time (benchmark and
# CLI), and the MPI launcher with one mpirun for a list of scenarios vs one mpirun per scenario.
# Prints a markdown table for ci/bench/RESULTS.md.
#
#   ci/bench/explore_bench.sh [BUILD_DIR]     (default build/default; configured if missing)
set -euo pipefail
cd "$(dirname "$0")/../.."
build=${1:-build/default}
if [[ ! -f "$build/CMakeCache.txt" ]]; then
  cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
fi
# The benchmarks are built only when asked for.
cmake "$build" -DPEERCONF_WITH_BENCH=ON >/dev/null
cmake --build "$build" -j "$(nproc)" --target peerconf peerconf_explore_bench >/dev/null
peerconf="$(realpath "$build")/harness/peerconf"
bench="$(realpath "$build")/ci/bench/peerconf_explore_bench"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

seconds() { python3 -c "import sys; print(f'{float(sys.argv[1]):.2f}')" "$1"; }
now() { date +%s.%N; }

# Thread mode: Google Benchmark, JSON for the figures.
(cd "$work" && "$bench" --benchmark_format=json --benchmark_min_time=2 >bench.json 2>bench.err)
figure() {  # figure NAME FIELD
  python3 - "$work/bench.json" "$1" "$2" <<'EOF'
import json, sys
data = json.load(open(sys.argv[1]))
for b in data["benchmarks"]:
    if b["name"] == sys.argv[2]:
        value = b[sys.argv[3]]
        print(f"{value:.0f}" if sys.argv[3] == "items_per_second" else f"{value:.2f}")
        break
else:
    print("n/a")
EOF
}
fresh=$(figure BM_FourRankFaultScenario/0/real_time items_per_second)
pooled=$(figure BM_FourRankFaultScenario/1/real_time items_per_second)
launchFresh=$(figure BM_LaunchFourRanks/0/real_time items_per_second)
launchPooled=$(figure BM_LaunchFourRanks/1/real_time items_per_second)
validate=$(figure BM_ValidateScenario items_per_second)
exhaustiveBench=$(figure BM_ExhaustiveN4/iterations:1/real_time real_time)

# Exhaustive N=4 through the CLI, as a user runs it.
start=$(now)
"$peerconf" explore --exhaustive --ranks 4 --out "$work/failures" >"$work/exhaustive.txt"
exhaustiveCli=$(seconds "$(python3 -c "print($(now) - $start)")")

# MPI: the same list of 4-rank fault scenarios, one mpirun for all vs one mpirun each.
"$bench" --write-scenarios="$work/list"
count=$(ls "$work/list"/*.yaml | wc -l)
start=$(now)
"$peerconf" run "$work/list" --launcher mpi >"$work/mpi-once.txt" 2>&1
mpiOnce=$(seconds "$(python3 -c "print($(now) - $start)")")
start=$(now)
for file in "$work/list"/*.yaml; do
  "$peerconf" run "$file" --launcher mpi >>"$work/mpi-each.txt" 2>&1
done
mpiEach=$(seconds "$(python3 -c "print($(now) - $start)")")
perOnce=$(python3 -c "print(f'{$count / $mpiOnce:.1f}')")
perEach=$(python3 -c "print(f'{$count / $mpiEach:.1f}')")

cat <<EOF
Machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)
Date: $(date -u +%Y-%m-%dT%H:%MZ); commit $(git rev-parse --short HEAD)
Command: ci/bench/explore_bench.sh $build

| what | figure | target |
| --- | --- | --- |
| 4-rank fault scenarios/s, thread mode, rank pool (launch + checkers + judgement) | $pooled | >= 1000 |
| 4-rank fault scenarios/s, thread mode, threads started per run (runThreads) | $fresh | |
| 4-rank launches/s alone: rank pool / runThreads | $launchPooled / $launchFresh | |
| scenarios validated/s (writer + parser) | $validate | |
| exhaustive N=4 (4096 cases), benchmark | $exhaustiveBench s | < 10 s |
| exhaustive N=4, \`peerconf explore --exhaustive --ranks 4\` | $exhaustiveCli s | < 10 s |
| MPI, $count scenarios in one mpirun (\`peerconf run LIST --launcher mpi\`) | $mpiOnce s ($perOnce scenarios/s) | |
| MPI, one mpirun per scenario ($count × \`peerconf run FILE --launcher mpi\`) | $mpiEach s ($perEach scenarios/s) | |
EOF
grep -E "^ +[0-9]+ cases" "$work/exhaustive.txt" | sed 's/^ */CLI exhaustive: /'
grep -E "passed, [0-9]+ failed" "$work/mpi-once.txt" | sed 's/^/MPI once: /'
echo "MPI each: $(grep -c '^.*PASS' "$work/mpi-each.txt") of $count passed"
