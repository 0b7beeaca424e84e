#!/bin/sh
# Negative control of ci/test_mirror.py: a copy of the tree with one module's test file removed
# must fail the check, naming the module and the file it lacks.
set -eu
root=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cp -r "$root/src" "$root/faults" "$root/harness" "$root/tests" "$tmp/"
rm "$tmp/tests/scenario/rules_test.cc"
if out=$(python3 "$root/ci/test_mirror.py" --root "$tmp"); then
  echo "a module without its test file passed the mirror check:"
  echo "$out"
  exit 1
fi
echo "$out"
echo "$out" | grep -q '^  harness/scenario/rules.cc: no tests/scenario/rules_test.cc$'
