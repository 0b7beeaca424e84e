#!/bin/sh
# Negative controls of ci/namespace_check.py: a copy of the tree with one planted mistake must
# fail the check, naming the file, line, namespace and folder. `wrong-namespace` (the default):
# the model declaring something in the launch layer's namespace; `alias`: the model giving the
# launch layer's namespace a second name.
set -eu
root=$1
kind=${2:-wrong-namespace}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/tests"
cp -r "$root/ci" "$root/harness" "$root/faults" "$root/src" "$tmp/"
cp -r "$root/tests/planted" "$tmp/tests/"
case $kind in
  wrong-namespace)
    printf 'namespace peerconf::harness::launch {\nint planted = 0;\n}\n' >> "$tmp/harness/model/verdict.h"
    want='^harness/model/verdict.h:[0-9]*: namespace peerconf::harness::launch in folder harness/model'
    ;;
  alias)
    printf 'namespace peerconf::harness::model {\nnamespace planted = peerconf::harness::launch;\n}\n' >> "$tmp/harness/model/verdict.h"
    want='^harness/model/verdict.h:[0-9]*: namespace alias planted = peerconf::harness::launch in folder harness/model'
    ;;
  *) echo "unknown control $kind"; exit 2 ;;
esac
if out=$(python3 "$root/ci/namespace_check.py" --root "$tmp"); then
  echo "the planted $kind passed the namespace check:"
  echo "$out"
  exit 1
fi
echo "$out"
echo "$out" | grep -q "$want"
