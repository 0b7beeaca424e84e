#!/usr/bin/env bash
# Scale-out throughput: scenarios per second and explored cases per second at 1, 2, 4, 8 and 16
# TP groups in ONE mpirun each, on the mocked HIP runtime (no GPU needed). Prints a table.
#   ci/bench/scaling.sh [PEERCONF] [GROUPS...]      e.g. ci/bench/scaling.sh build/default/harness/peerconf 1 2 4
# Scenarios: one 2-rank handshake scenario repeated JOBS times (--repeat), packed by the MPI
# launcher onto G groups of 2 ranks (np = 2G). Exploration: G processes, one explorer each
# (ranks as threads inside), CASES passing cases each, disjoint seeds.
set -euo pipefail
cd "$(dirname "$0")/../.."
peerconf=${1:-build/default/harness/peerconf}
shift || true
groups=("$@")
((${#groups[@]})) || groups=(1 2 4 8 16)
jobs=${JOBS:-256}
cases=${CASES:-200}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
scenario=scenarios/handshake/success-2-ranks.yaml
printf '%-7s %-5s %-14s %-10s %-14s %-10s\n' groups np scenarios/s efficiency cases/s efficiency
base_s=""
base_c=""
for g in "${groups[@]}"; do
  np=$((2 * g))
  t0=$(date +%s.%N)
  "$peerconf" run "$scenario" --repeat "$jobs" --launcher mpi --np "$np" >/tmp/scaling-run.log 2>&1 ||
    { echo "run failed at $g groups" >&2; tail -20 /tmp/scaling-run.log >&2; exit 1; }
  t1=$(date +%s.%N)
  sps=$(awk -v n="$jobs" -v a="$t0" -v b="$t1" 'BEGIN{print n/(b-a)}')
  out=$(mpirun --oversubscribe -np "$g" "$peerconf" explore --cases "$cases" --seed 11 --max-ranks 4 \
          --out /tmp/scaling-explore 2>&1) || { echo "$out" >&2; exit 1; }
  cps=$(echo "$out" | sed -n 's/.*(\([0-9.]*\) cases\/s).*/\1/p')
  [[ -n "$base_s" ]] || { base_s=$sps; base_c=$cps; }
  es=$(awk -v x="$sps" -v b="$base_s" -v g="$g" 'BEGIN{print x/(b*g)}')
  ec=$(awk -v x="$cps" -v b="$base_c" -v g="$g" 'BEGIN{print x/(b*g)}')
  printf '%-7s %-5s %-14.1f %-10.2f %-14.1f %-10.2f\n' "$g" "$np" "$sps" "$es" "$cps" "$ec"
done
echo "# machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs); jobs=$jobs cases=$cases; $(date -u +%F)"
