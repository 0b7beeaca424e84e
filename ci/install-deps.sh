#!/usr/bin/env bash
# Installs the Debian packages peerconf builds and tests with (Debian 12). Idempotent.
#   ci/install-deps.sh           everything: the tests' compilers, tools and browser too (ci/test.sh)
#   ci/install-deps.sh --suite   only what the main job (ci/suite.sh) needs to build the `peerconf`
#                                command and run the scenario suite
set -euo pipefail
mode=all
case ${1:-} in
  --suite) mode=suite ;;
  "") ;;
  *) echo "usage: ci/install-deps.sh [--suite]" >&2; exit 2 ;;
esac
# The main job: a C++20 toolchain and CMake with Ninja, the harness's libraries, Boost.Context (the
# simulated clock's fibers), Open MPI (the MPI group is part of every build; `--launcher mpi` starts
# mpirun).
suite_packages=(
  build-essential cmake ninja-build pkg-config
  libyaml-cpp-dev libcli11-dev nlohmann-json3-dev librapidcheck-dev libboost-context-dev
  libopenmpi-dev openmpi-bin
)
# The tests: GoogleTest and Benchmark, the ROCm compile, clang's sanitizers and tools, the CI
# examples' validators, the HTML report's browser.
test_packages=(
  git
  googletest libgtest-dev libgmock-dev libbenchmark-dev
  libamdhip64-dev hipcc
  libxml2-utils python3 python3-junitparser clang clang-format clang-tidy libclang-rt-14-dev
  python3-yaml nodejs
  chromium  # ctest reports.html-browser opens the HTML report headless (about 15 s to install)
)
packages=("${suite_packages[@]}")
[[ $mode == suite ]] || packages+=("${test_packages[@]}")
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "ci/install-deps.sh: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}"
else
  echo "ci/install-deps.sh: every package ($mode) is installed"
fi
if [[ $mode == suite ]]; then
  exit 0
fi

# The GitHub Actions workflow's validator (tests/ci/examples_test.py, ci/examples/): the npm
# package @action-validator/cli, pinned, into build/tools (git-ignored). About 1 s.
validator=@action-validator/cli@0.6.0
tools=$(dirname "$0")/../build/tools
if npm ls --prefix "$tools" "$validator" >/dev/null 2>&1 &&
  [[ -x $tools/node_modules/.bin/action-validator ]]; then
  echo "ci/install-deps.sh: $validator is installed"
else
  if ! command -v npm >/dev/null; then  # Debian's nodejs comes without npm (NodeSource's has it)
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends npm
  fi
  echo "ci/install-deps.sh: installing $validator into $tools"
  mkdir -p "$tools"
  npm install --prefix "$tools" --no-audit --no-fund --loglevel=error "$validator"
fi
