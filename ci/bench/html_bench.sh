#!/usr/bin/env bash
# The HTML report (`peerconf run --html`) at scale: for suites of 100 and 1000 runs, the report's
# size and how long headless chromium takes to open it. Prints a markdown table for
# ci/bench/RESULTS.md. Needs chromium (apt-get install chromium).
#
#   ci/bench/html_bench.sh [BUILD_DIR]     (default build/default; configured if missing)
#
# Columns: `load` is the page's own figure: its script writes, at the load event, the ms since
# navigation began into body[data-load-ms] (parse, DOM, styles, script), read back with
# --dump-dom (median of 3). `screenshot` is the wall time of `chromium --headless --screenshot`
# of the page (start, load, layout, paint, PNG) minus the same for an empty page (median of 3
# each): the time until the first screen is painted that the report adds.
set -euo pipefail
cd "$(dirname "$0")/../.."
build=${1:-build/default}
if [[ ! -f "$build/CMakeCache.txt" ]]; then
  cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
fi
cmake --build "$build" -j "$(nproc)" --target peerconf >/dev/null
peerconf="$(realpath "$build")/harness/peerconf"
browser=$(command -v chromium || command -v chromium-browser || command -v google-chrome || true)
if [[ -z $browser ]]; then
  echo "html_bench.sh: no chromium (apt-get install chromium)" >&2
  exit 2
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
flags=(--headless --no-sandbox --disable-gpu --disable-dev-shm-usage --no-first-run
  --user-data-dir="$work/profile" --window-size=1280,1024 --hide-scrollbars)

median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
wall() {  # wall URL: seconds for one screenshot
  local t0 t1
  t0=$(date +%s.%N)
  "$browser" "${flags[@]}" --screenshot="$work/shot.png" "$1" >/dev/null 2>&1
  t1=$(date +%s.%N)
  python3 -c "import sys; print(f'{float(sys.argv[2]) - float(sys.argv[1]):.3f}')" "$t0" "$t1"
}
echo '<!DOCTYPE html><html><body></body></html>' >"$work/blank.html"
blank=$(for _ in 1 2 3; do wall "file://$work/blank.html"; done | median)

# The folders the planted-core ctests use (no deadline waits): 1 to 16 ranks, faults of every
# kind; the production core passes them, leaks-on-failure fails some (expanded in the page).
mixed=(scenarios/handshake scenarios/open scenarios/close-free scenarios/alloc
  scenarios/get-handle scenarios/table scenarios/handles)
mixed_count=$(find "${mixed[@]}" -name '*.yaml' | wc -l)

row() {  # row LABEL RUNS ARGS...: run, then measure
  local label=$1 runs=$2
  shift 2
  local report="$work/report.html" t0 t1 run_s bytes load shot
  t0=$(date +%s.%N)
  "$peerconf" run "$@" --html "$report" >"$work/run.log" 2>&1 || true
  t1=$(date +%s.%N)
  run_s=$(python3 -c "import sys; print(f'{float(sys.argv[2]) - float(sys.argv[1]):.1f}')" "$t0" "$t1")
  local summary
  summary=$(grep -E '^[0-9]+ passed, [0-9]+ failed' "$work/run.log" | tail -1)
  bytes=$(stat -c %s "$report")
  load=$(for _ in 1 2 3; do
    "$browser" "${flags[@]}" --dump-dom "file://$report" 2>/dev/null |
      grep -o 'data-load-ms="[0-9]*"' | grep -o '[0-9]*' || echo n/a
  done | median)
  shot=$(for _ in 1 2 3; do wall "file://$report"; done | median)
  python3 - "$label" "$runs" "$summary" "$bytes" "$load" "$shot" "$blank" "$run_s" <<'EOF'
import sys
label, runs, summary, size, load, shot, blank, run_s = sys.argv[1:]
size = int(size)
print(f"| {label} | {runs} ({summary}) | {size:,} ({size / 1048576:.2f} MiB) | {load} ms | "
      f"{float(shot) - float(blank):.2f} s | {run_s} s |")
EOF
}

echo "| suite | runs | report bytes | load (in page) | screenshot - empty page | peerconf run |"
echo "|---|---|---|---|---|---|"
row "success-4-ranks --repeat 100" 100 scenarios/handshake/success-4-ranks.yaml --repeat 100
row "success-4-ranks --repeat 1000" 1000 scenarios/handshake/success-4-ranks.yaml --repeat 1000
repeat=$(((1000 + mixed_count - 1) / mixed_count))
row "$mixed_count mixed files --repeat $repeat" $((mixed_count * repeat)) "${mixed[@]}" \
  --repeat "$repeat"
row "the same, --core leaks-on-failure" $((mixed_count * repeat)) "${mixed[@]}" \
  --repeat "$repeat" --core leaks-on-failure
echo
echo "empty page screenshot: ${blank} s; chromium: $("$browser" --version 2>/dev/null | head -1);" \
  "$(nproc) CPUs; load average $(cut -d' ' -f1-3 /proc/loadavg)"
