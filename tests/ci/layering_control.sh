#!/bin/sh
# Negative control of ci/layering.py: a copy of the tree with one planted upward include (the
# model including the launch layer) must fail the check, naming the file, line and layers.
set -eu
root=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/tests"
cp -r "$root/ci" "$root/harness" "$root/faults" "$root/src" "$tmp/"
cp -r "$root/tests/planted" "$tmp/tests/"
echo '#include "launch/launcher.h"' >> "$tmp/harness/model/verdict.h"
if out=$("$root/ci/layering.py" --root "$tmp"); then
  echo "the planted wrong-way include passed the layering check:"
  echo "$out"
  exit 1
fi
echo "$out"
echo "$out" | grep -q '^harness/model/verdict.h:[0-9]*: model includes "launch/launcher.h" of layer launch'
