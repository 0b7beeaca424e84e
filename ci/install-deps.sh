#!/usr/bin/env bash
# Installs the Debian packages peerconf builds and tests with (Debian 12). Idempotent.
set -euo pipefail
packages=(
  build-essential cmake ninja-build pkg-config git
  googletest libgtest-dev libgmock-dev libbenchmark-dev
  libyaml-cpp-dev libcli11-dev nlohmann-json3-dev librapidcheck-dev
  libopenmpi-dev openmpi-bin
  libamdhip64-dev hipcc
  libxml2-utils python3 python3-junitparser clang clang-format clang-tidy libclang-rt-14-dev
  python3-yaml nodejs
  chromium  # ctest reports.html-browser opens the HTML report headless (about 15 s to install)
)
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
  echo "ci/install-deps.sh: every package is installed"
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
