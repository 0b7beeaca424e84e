#!/usr/bin/env bash
# clang-tidy (.clang-tidy: bug finders, each group justified there) over every translation unit
# of src/, faults/ and harness/ in a configure-only build without GPU variants (the mock, every
# library). Fails on any finding. Usage: ci/tidy.sh [REGEX]   (default: the three folders)
set -euo pipefail
cd "$(dirname "$0")/.."
regex=${1:-"$PWD/(src|faults|harness)/"}
build=build/tidy
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Debug -DBUILD_TESTING=OFF -DPEERCONF_WITH_HIP=OFF \
  -DPEERCONF_WITH_CUDA=OFF -DCMAKE_EXPORT_COMPILE_COMMANDS=ON >/dev/null
tidy=$(command -v run-clang-tidy-14 || command -v run-clang-tidy)
log=$build/tidy.log
if ! "$tidy" -p "$build" -j "$(nproc)" -quiet "$regex" >"$log" 2>&1; then
  echo "ci/tidy.sh: FAIL clang-tidy findings:" >&2
  sed 's/\x1b\[[0-9;]*m//g' "$log" | grep -E -A3 "(warning|error):" >&2 || tail -n 50 "$log" >&2
  exit 1
fi
units=$(grep -c '"file"' "$build/compile_commands.json" || true)
echo "ci/tidy.sh: clean ($units translation units in the build, those under $regex checked)"
