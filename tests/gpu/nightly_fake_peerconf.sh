#!/usr/bin/env bash
# A stand-in for `peerconf` (and the protocol example's executable) in the CPU tests of
# ci/nightly-gpu (nightly_gpu_test.sh, nightly_topology_test.sh): records each call in $FAKE_CALLS
# with the time-sliced cap it was given, answers `validate` (refusing the files that match
# FAKE_REFUSE, an ERE) and `run` (console lines the nightly judges, a CAP line a data-plane file
# when capped, and a --verdicts file naming every file it was given). Its behaviour:
#   FAKE_SUITE=ok|empty|failed|nomem|drop|controldrop  what the run shows (failed: the first file
#                                          fails C3 on both runtimes; nomem/drop: a missing or
#                                          dropping device-memory line of b; controldrop: that
#                                          drop, b being a C3 control that passed)
#   FAKE_DIVERGE=ERE, FAKE_DIVERGE_PROP=C1 on --runtime gpu, those files fail that property
echo "$(basename "$0") $* [sliced ${PEERCONF_SLICED_STEP_RATE:-}/${PEERCONF_SLICED_GPUS:-}/${PEERCONF_SLICED_SECONDS:-}]" >> "$FAKE_CALLS"
command=$1
shift
# Every option the nightly passes takes a value; the rest are files.
files=()
runtime=mock
verdicts=
while (($#)); do
  case $1 in
    --runtime) runtime=$2; shift 2 ;;
    --verdicts) verdicts=$2; shift 2 ;;
    --*) shift 2 ;;
    *) files+=("$1"); shift ;;
  esac
done

if [[ $command == validate ]]; then
  refused=0
  for f in "${files[@]}"; do
    if [[ -n ${FAKE_REFUSE:-} && $f =~ $FAKE_REFUSE ]]; then
      echo "$f:3:1: under --runtime gpu: fake refusal" >&2
      refused=$((refused + 1))
    fi
  done
  echo "$((${#files[@]} - refused)) valid, $refused invalid"
  ((refused == 0)) || exit 2
  exit 0
fi

suite=${FAKE_SUITE:-ok}
if [[ $suite == empty ]]; then
  [[ -n $verdicts ]] && printf '{"format": "peerconf-verdicts/1", "runtime": "%s", "launcher": "mpi", "ranks_per_gpu": 0, "runs": [], "skipped": []}\n' "$runtime" > "$verdicts"
  echo "0 passed, 0 failed"
  exit 0
fi
# The verdicts: one run a file; what fails where the variables say.
failed=0
runs=
for i in "${!files[@]}"; do
  f=${files[$i]}
  name=n$i passed=true prop= expected=
  [[ $suite == failed && $i == 0 ]] && prop=C3
  [[ $suite == controldrop && $i == 0 ]] && { name=b prop=C3 expected='"C3"'; }
  [[ $runtime == gpu && -n ${FAKE_DIVERGE:-} && $f =~ $FAKE_DIVERGE ]] && prop=${FAKE_DIVERGE_PROP:-C1}
  steps=
  if [[ $f == */dataplane/* ]]; then
    steps=', "dataplane_steps": 1000'
    if [[ -n ${PEERCONF_SLICED_STEP_RATE:-} ]]; then
      echo "CAP $f: data-plane steps 100000 -> 890 (fake)" >&2
      steps=', "dataplane_steps": 890, "dataplane_file_steps": 100000'
    fi
  fi
  props=""
  for p in C1 C2 C3 C4 C5 C6 C7 C8; do
    value=pass
    [[ $p == "$prop" ]] && value=fail
    props+="${props:+, }\"$p\": \"$value\""
  done
  [[ -n $prop && -z $expected ]] && { passed=false; failed=$((failed + 1)); }
  runs+="${runs:+,}
  {\"file\": \"$f\", \"name\": \"$name\", \"seed\": 1, \"ranks\": 2, \"passed\": $passed, \"properties\": {$props}, \"expected_violations\": [$expected], \"coverage\": \"n/a\", \"failures\": []$steps}"
done
if [[ -n $verdicts ]]; then
  printf '{"format": "peerconf-verdicts/1", "runtime": "%s", "launcher": "mpi", "ranks_per_gpu": 0, "runs": [%s], "skipped": []}\n' "$runtime" "$runs" > "$verdicts"
fi
echo "peerconf: meminfo a rank 0 device 0: free 100 -> 100 bytes (drop 0)"
echo "[1/2] PASS a (2 ranks, 1 ms)"
case $suite in
  nomem) ;;
  drop | controldrop) echo "peerconf: meminfo b rank 1 device 1: free 100 -> 90 bytes (drop 10)" >&2 ;;
  *) echo "peerconf: meminfo b rank 1 device 1: free 100 -> 100 bytes (drop 0)" >&2 ;;
esac
if ((failed > 0)); then
  echo "[2/2] FAIL b (2 ranks, 1 ms): C3"
  echo "1 passed, $failed failed"
  exit 1
fi
echo "[2/2] PASS b (2 ranks, 1 ms)"
echo "2 passed, 0 failed"
