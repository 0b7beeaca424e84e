# Shared by the bench scripts that time peerconf commands side by side (clock_bench.sh,
# engine_bench.sh); sourced after `cd` to the repository root. Reads BUILD_DIR and LIMIT_S from
# the caller's $1 and $2 (default build/default, 300 s a command) and sets `peerconf`, `limit` and
# `work` (a temporary folder removed on exit, holding each command's output).
build=${1:-build/default}
limit=${2:-300}
peerconf="$(realpath "$build")/harness/peerconf"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

now() { date +%s.%N; }
# timed NAME CMD...: wall seconds of CMD (">LIMIT" when it ran past the limit), output in NAME.txt
timed() {
  local name=$1 start rc
  shift
  start=$(now)
  timeout "$limit" "$@" >"$work/$name.txt" 2>&1
  rc=$?
  if [[ $rc -eq 124 ]]; then echo ">$limit"; return; fi
  python3 -c "print(f'{$(now) - $start:.2f}')"
}
# The cases/s a search printed; the suite's closing "N passed, M failed".
rate() { grep -oE '\(([0-9.]+) cases/s\)' "$work/$1.txt" | tr -dc '0-9.'; }
passed() { grep -oE '[0-9]+ passed, [0-9]+ failed' "$work/$1.txt" | tail -1; }
