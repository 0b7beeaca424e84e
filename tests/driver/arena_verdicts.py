#!/usr/bin/env python3
"""The mocked device's two memories on simulated time give every file the same verdict: the
in-process arena (the default) and the memfd segments (`--mock-memory segments`, what real time
and MPI use), for the same seeds.

  arena_verdicts.py PEERCONF SCENARIOS OUTDIR

1. The suite on each memory (`run --verdicts`): the same runs, each with the same verdict
   (pass/fail, every property, coverage, failures, steps).
2. Control: the suite on the segments with a planted core (`--core skips-agreement`) differs from
   the arena's verdicts, and the comparison names the files.
Exit status 0 when both hold, 1 otherwise (with the files that differ).
"""
import json
import os
import subprocess
import sys


def verdicts(peerconf, scenarios, out, name, *args):
    path = os.path.join(out, name + '.json')
    proc = subprocess.run([peerconf, 'run', scenarios, '--verdicts', path, *args],
                          capture_output=True, text=True, timeout=900)
    if proc.returncode not in (0, 1) or not os.path.exists(path):
        sys.exit(f'{name}: exit status {proc.returncode}\n{proc.stdout[-3000:]}{proc.stderr}')
    with open(path) as f:
        runs = {(r['file'], r['seed']): r for r in json.load(f)['runs']}
    print(f'{name}: {len(runs)} runs')
    return runs


def differences(a, b):
    """The files whose runs differ between two verdict maps (or run in only one)."""
    return sorted({key[0] for key in a.keys() | b.keys() if a.get(key) != b.get(key)})


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    peerconf, scenarios, out = sys.argv[1:4]
    os.makedirs(out, exist_ok=True)
    arena = verdicts(peerconf, scenarios, out, 'arena', '--mock-memory', 'arena')
    segments = verdicts(peerconf, scenarios, out, 'segments', '--mock-memory', 'segments')
    differ = differences(arena, segments)
    if differ or len(arena) < 100:
        sys.exit(f'FAIL: {len(differ)} files differ between the arena and the segments: '
                 f'{", ".join(differ[:20])}')
    print(f'the same verdict on both memories: {len(arena)} runs')
    planted = verdicts(peerconf, scenarios, out, 'planted', '--mock-memory', 'segments', '--core',
                       'skips-agreement')
    caught = differences(arena, planted)
    if not caught:
        sys.exit('FAIL: the control (a planted core on the segments) compared the same')
    print(f'control: a planted core differs on {len(caught)} files, e.g. {caught[0]}')


if __name__ == '__main__':
    main()
