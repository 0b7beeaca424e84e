#!/bin/sh
# Negative control of ci/namespace_check.py: a copy of the tree with one planted wrong namespace
# (the model declaring something in the launch layer's namespace) must fail the check, naming
# the file, line, namespace and folder.
set -eu
root=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/tests"
cp -r "$root/ci" "$root/harness" "$root/faults" "$root/src" "$tmp/"
cp -r "$root/tests/planted" "$tmp/tests/"
printf 'namespace peerconf::harness::launch {\nint planted = 0;\n}\n' >> "$tmp/harness/model/verdict.h"
if out=$(python3 "$root/ci/namespace_check.py" --root "$tmp"); then
  echo "the planted wrong namespace passed the namespace check:"
  echo "$out"
  exit 1
fi
echo "$out"
echo "$out" |
  grep -q '^harness/model/verdict.h:[0-9]*: namespace peerconf::harness::launch in folder harness/model'
