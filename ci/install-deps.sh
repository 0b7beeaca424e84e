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
