#!/usr/bin/env bash
# Simulated vs real time in thread mode (--clock sim | real), side by side in one run: random
# exploration cases/s, the suite's wall time (whole, and without the two 10^6-step data planes of
# scenarios/gpu/dataplane), exhaustive N=4 with --with-late, and replay (every passing case of a
# search re-run with its seed and its event log compared: 10,000 cases on sim, 1,000 on real).
# Prints a markdown table for ci/bench/RESULTS.md.
#
#   ci/bench/clock_bench.sh [BUILD_DIR] [LIMIT_S]   (default build/default, 300 s a command)
set -uo pipefail
cd "$(dirname "$0")/../.."
# shellcheck source=ci/bench/timed.sh
source ci/bench/timed.sh "$@"

cases=1000
exSim=$(timed explore-sim "$peerconf" explore --cases $cases --seed 1 --quiet --clock sim --out "$work/f1")
exReal=$(timed explore-real "$peerconf" explore --cases $cases --seed 1 --quiet --clock real --out "$work/f2")
suiteSim=$(timed suite-sim "$peerconf" run scenarios/ --clock sim)
suiteReal=$(timed suite-real "$peerconf" run scenarios/ --clock real)
mapfile -t light < <(find scenarios -mindepth 1 -maxdepth 1 -type d ! -name gpu | sort)
lightSim=$(timed light-sim "$peerconf" run "${light[@]}" --clock sim)
lightReal=$(timed light-real "$peerconf" run "${light[@]}" --clock real)
exhSim=$(timed exh-sim "$peerconf" explore --exhaustive --ranks 4 --with-late --clock sim --out "$work/e1")
exhReal=$(timed exh-real "$peerconf" explore --exhaustive --ranks 4 --with-late --clock real --out "$work/e2")

replaySim=$(timed replay-sim "$peerconf" explore --cases 10000 --seed 1 --quiet --clock sim --recheck-fraction 1 --out "$work/r1")
replayReal=$(timed replay-real "$peerconf" explore --cases 1000 --seed 1 --quiet --clock real --recheck-fraction 1 --out "$work/r2")
# "N passing case(s) re-run, D ended differently, I interleaved differently"
replayed() { grep -oE '[0-9]+ passing case\(s\) re-run, [0-9]+ ended differently, [0-9]+ interleaved differently' "$work/$1.txt" || echo "no result"; }

ratio() { python3 -c "
a, b = '$1', '$2'
print('n/a' if a.startswith('>') or b.startswith('>') else f'{float(a) / float(b):.1f}x')"; }
echo "| measure | sim | real | real / sim |"
echo "|---|---|---|---|"
echo "| explore --cases $cases: cases/s | $(rate explore-sim) ($exSim s) | $(rate explore-real) ($exReal s) | $(python3 -c "print(f'{float(\"$(rate explore-sim)\") / float(\"$(rate explore-real)\"):.1f}x')") faster |"
echo "| run scenarios/ (whole suite): wall s | $suiteSim ($(passed suite-sim)) | $suiteReal ($(passed suite-real)) | $(ratio "$suiteReal" "$suiteSim") |"
echo "| run scenarios/ without gpu/ (no 10^6-step data planes): wall s | $lightSim ($(passed light-sim)) | $lightReal ($(passed light-real)) | $(ratio "$lightReal" "$lightSim") |"
echo "| explore --exhaustive --ranks 4 --with-late: wall s | $exhSim | $exhReal | $(ratio "$exhReal" "$exhSim") |"
echo "| replay (--recheck-fraction 1): event logs compared | $(replayed replay-sim) ($replaySim s) | $(replayed replay-real) ($replayReal s) | |"
echo
echo "load average at the end: $(cut -d' ' -f1-3 /proc/loadavg); $(nproc) CPUs"
