#!/usr/bin/env bash
# clang-tidy (.clang-tidy: bug finders, each group justified there) over every translation unit
# of src/, faults/ and harness/ in configure-only builds without GPU variants (the mock, every
# library). Fails on any finding. Usage: ci/tidy.sh [REGEX]
#
# Default: two passes.
# 1. The path-sensitive analyzer (clang-analyzer-*) alone, on each file compiled alone (build/tidy)
#    that calls the system directly (`::mmap(`, `::fork(`, `::open(`, ... as this code writes
#    them: fds, mmap, fork, signals, pipes, shared memory; found by git grep on each run, so a new
#    such file is analyzed without a list to keep), and on the production core (peer_buffer.cc,
#    tp_agree.cc, exchange_entry.cc). The analyzer only analyzes the functions of the unit's main
#    file, so it needs the files alone; elsewhere (pure C++ over values) it found nothing yet cost
#    40-50 % of a unit's time. Until 2026-12-01 it ran on every file of src/, faults/,
#    harness/launch/ and harness/mpirun/: 43 files, 222 CPU-s on this 2-core box; CI's 20 minutes
#    needed that time (ci/bench/CI-TIMES.md).
# 2. Every other check over unity units (build/tidy-unity: 16 sources a unit, as the ci preset
#    builds): the headers are parsed once a unit instead of once a file, a third of the CPU of
#    file by file (ci/bench/CI-TIMES.md, 2026-12-01). The .cc files are headers of the unity unit
#    there, and the HeaderFilterRegex reports them. bugprone-suspicious-include is off in this
#    pass (a unity unit includes .cc files by design); the include of a .cc file it would catch
#    is refused below with git grep instead.
# With REGEX: every check on the units of build/tidy (files alone) that it matches.
set -euo pipefail
cd "$(dirname "$0")/.."
build=build/tidy
unity=build/tidy-unity
configure() {  # configure DIR [CMAKE ARGS...]: a compile database, nothing built
  local dir=$1
  shift
  cmake -S . -B "$dir" -DCMAKE_BUILD_TYPE=Debug -DBUILD_TESTING=OFF -DPEERCONF_WITH_HIP=OFF \
    -DPEERCONF_WITH_CUDA=OFF -DCMAKE_EXPORT_COMPILE_COMMANDS=ON "$@" >/dev/null
}
configure "$build"
tidy=$(command -v run-clang-tidy-14 || command -v run-clang-tidy)
log=$build/tidy.log
: >"$log"
pass() {  # pass DIR REGEX [EXTRA-ARGS...]: clang-tidy on the units of DIR that REGEX matches
  local dir=$1 regex=$2
  shift 2
  if ! "$tidy" -p "$dir" -j "$(nproc)" -quiet "$@" "$regex" >>"$log" 2>&1; then
    echo "ci/tidy.sh: FAIL clang-tidy findings:" >&2
    sed 's/\x1b\[[0-9;]*m//g' "$log" | grep -E -A3 "(warning|error):" >&2 || tail -n 50 "$log" >&2
    exit 1
  fi
}
if [[ $# -gt 0 ]]; then
  pass "$build" "$1"
  units=$(grep -c '"file"' "$build/compile_commands.json" || true)
  echo "ci/tidy.sh: clean (those of the $units units under $1: every check)"
  exit 0
fi
# What pass 2 cannot see: a source that includes a .cc file.
if git grep -nE '^[[:space:]]*#[[:space:]]*include[[:space:]]*[<"][^>"]*\.(cc|cpp|cxx)[>"]' \
    -- src faults harness; then
  echo "ci/tidy.sh: FAIL a source includes a .cc file (bugprone-suspicious-include)" >&2
  exit 1
fi
# Pass 1's checks: the clang-analyzer-* groups .clang-tidy enables, and nothing else.
analyzer="-*,$(grep -oE '^ *clang-analyzer-[a-z.*]+' .clang-tidy | tr -d ' ' | paste -sd,)"
syscalls='::(mmap|munmap|fork|socket|shm_open|shm_unlink|pipe2?|waitpid|kill|killpg|ftruncate|open|close|dup2?|execv[pe]?|poll|posix_spawnp?|read|write|sigaction|prctl|unlink|setsid)[[:space:]]*\('
mapfile -t analyzed < <({ git grep -lE "$syscalls" -- 'src/*.cc' 'faults/*.cc' 'harness/*.cc'
  printf '%s\n' src/peer_buffer.cc src/tp_agree.cc src/exchange_entry.cc; } | sort -u)
echo "ci/tidy.sh: the analyzer on ${#analyzed[@]} files: ${analyzed[*]}"
# The analyzer's node budget per function is clang's shallow mode's (max-nodes 75000, against
# 225000 by default): supervisor.cc 17.2 -> 7.9 CPU-s, process_watch.cc 6.0 -> 3.8
# (2026-12-02); a planted null dereference is still found.
budget=(-extra-arg=-Xclang -extra-arg=-analyzer-config -extra-arg=-Xclang
        -extra-arg=max-nodes=75000)
pass "$build" "$PWD/($(IFS='|'; echo "${analyzed[*]}" | sed 's/\./\\./g'))\$" "-checks=$analyzer" \
  "${budget[@]}"
configure "$unity" -DCMAKE_UNITY_BUILD=ON -DCMAKE_UNITY_BUILD_BATCH_SIZE=16
pass "$unity" "$PWD/$unity/(src|faults|harness)/" \
  "-checks=-clang-analyzer-*,-bugprone-suspicious-include"
units=$(grep -cE "\"file\": \"$PWD/$unity/(src|faults|harness)/" "$unity/compile_commands.json" || true)
echo "ci/tidy.sh: clean (clang-analyzer-* on the ${#analyzed[@]} files above, each alone; every" \
  "other check on the $units unity units of src/, faults/ and harness/)"
