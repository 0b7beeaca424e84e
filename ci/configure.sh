#!/usr/bin/env bash
# Configures a preset quietly: ci/configure.sh PRESET [CMAKE ARGS...]. The CI presets (ci, asan,
# tsan, fuzz) use Ninja; a build/PRESET configured earlier with another generator (Makefiles,
# before the presets said Ninja) is reset first (its CMakeCache.txt and CMakeFiles/, build
# outputs only), since CMake refuses to switch generators in place.
set -euo pipefail
cd "$(dirname "$0")/.."
preset=$1
shift
if ! out=$(cmake --preset "$preset" "$@" 2>&1); then
  if ! grep -q "Does not match the generator used previously" <<<"$out"; then
    echo "$out" >&2
    exit 1
  fi
  echo "ci/configure.sh: build/$preset was made by another generator: resetting its cache"
  rm -rf "build/$preset/CMakeCache.txt" "build/$preset/CMakeFiles"
  cmake --preset "$preset" "$@" >/dev/null
fi
