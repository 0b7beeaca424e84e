#!/usr/bin/env bash
# clang-tidy (.clang-tidy: bug finders, each group justified there) over every translation unit
# of src/, faults/ and harness/ in a configure-only build without GPU variants (the mock, every
# library). Fails on any finding. Usage: ci/tidy.sh [REGEX]
#
# Default: two passes. Every check, the path-sensitive analyzer (clang-analyzer-*) included, on
# src/, faults/, harness/launch/ and harness/mpirun/: the core, the backends, the mocked runtime,
# the groups and the launchers, where the raw system calls are (fds, mmap, fork, sockets, shared memory). Every check
# but the analyzer on the rest of harness/ (model, scenario, checkers, judge, reports, explore,
# dataplane, driver): pure C++ over values, where the analyzer found nothing yet cost 40-50 % of a
# unit's time (ci/bench/CI-TIMES.md). With REGEX: every check on the units it matches.
set -euo pipefail
cd "$(dirname "$0")/.."
build=build/tidy
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Debug -DBUILD_TESTING=OFF -DPEERCONF_WITH_HIP=OFF \
  -DPEERCONF_WITH_CUDA=OFF -DCMAKE_EXPORT_COMPILE_COMMANDS=ON >/dev/null
tidy=$(command -v run-clang-tidy-14 || command -v run-clang-tidy)
log=$build/tidy.log
: >"$log"
pass() {  # pass REGEX [EXTRA-ARGS...]: clang-tidy on the units REGEX matches
  local regex=$1
  shift
  if ! "$tidy" -p "$build" -j "$(nproc)" -quiet "$@" "$regex" >>"$log" 2>&1; then
    echo "ci/tidy.sh: FAIL clang-tidy findings:" >&2
    sed 's/\x1b\[[0-9;]*m//g' "$log" | grep -E -A3 "(warning|error):" >&2 || tail -n 50 "$log" >&2
    exit 1
  fi
}
if [[ $# -gt 0 ]]; then
  pass "$1"
  checked="those under $1: every check"
else
  pass "$PWD/(src|faults|harness/launch|harness/mpirun)/"
  pass "$PWD/harness/(?!launch/|mpirun/)" "-checks=-clang-analyzer-*"  # python re: every other folder
  checked="src/, faults/, harness/launch/, harness/mpirun/: every check;"
  checked+=" the rest of harness/: all but clang-analyzer-*"
fi
units=$(grep -c '"file"' "$build/compile_commands.json" || true)
echo "ci/tidy.sh: clean ($units translation units in the build; $checked)"
