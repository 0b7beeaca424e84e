#!/usr/bin/env python3
"""Simulated time replays a run byte for byte: the same scenario and seed give the same trace and
event log, with nothing masked (device pointers, allocation numbers, tag generations and the
interleaving are all drawn from the seed).

  byte_identical.py PEERCONF SCENARIOS FILE OUTDIR

1. The whole suite (SCENARIOS) twice on the fiber engine, each in a process of its own: the two
   trace files are the same bytes.
2. Once more on the thread engine (the same scheduler, so the same interleaving): the same bytes.
3. FILE alone: its run's events are the same as in the suite's trace, where every run of the suite
   before it came first in the same process (the trace numbers runs by their place in the list, its
   "pid" and sort index; those labels are the only thing not compared).
4. Control: FILE with another seed differs, and the comparison says where.
Exit status 0 when all hold, 1 otherwise (with the first difference).
"""
import json
import os
import subprocess
import sys


def run(peerconf, out, name, *args):
    path = os.path.join(out, name + '.json')
    proc = subprocess.run([peerconf, 'run', *args, '--trace', path], capture_output=True,
                          text=True, timeout=900)
    if proc.returncode != 0:
        sys.exit(f'{name}: exit status {proc.returncode}\n{proc.stdout[-3000:]}{proc.stderr}')
    with open(path, 'rb') as f:
        data = f.read()
    print(f'{name}: {len(data)} bytes of trace')
    return data


def first_difference(a, b):
    """Where two byte strings first differ, with some context; None when they are equal."""
    if a == b:
        return None
    i = next((k for k in range(min(len(a), len(b))) if a[k] != b[k]), min(len(a), len(b)))
    lo = max(0, i - 160)
    return (f'byte {i} (of {len(a)} and {len(b)}):\n  {a[lo:i + 160]!r}\n  vs\n'
            f'  {b[lo:i + 160]!r}')


def runs_by_name(data):
    """Each run of a trace: its name (the process_name) -> its events as canonical JSON lines, in
    order, without the run's place in the list ("pid")."""
    events = json.loads(data)['traceEvents']
    names = {e['pid']: e['args']['name'] for e in events
             if e.get('ph') == 'M' and e.get('name') == 'process_name'}
    runs = {}
    for e in events:
        if e.get('name') == 'process_sort_index':
            continue  # the run's place in the list again
        e = dict(e)
        name = names[e.pop('pid')]
        runs.setdefault(name, []).append(json.dumps(e, sort_keys=True).encode())
    return runs


def main():
    if len(sys.argv) != 5:
        print(__doc__, file=sys.stderr)
        return 2
    peerconf, scenarios, one, out = sys.argv[1:]
    os.makedirs(out, exist_ok=True)
    failures = []

    fibers = run(peerconf, out, 'fibers', scenarios)
    again = run(peerconf, out, 'fibers-again', scenarios)
    threads = run(peerconf, out, 'threads', scenarios, '--engine', 'threads')
    for name, other in (('fibers-again', again), ('threads', threads)):
        difference = first_difference(fibers, other)
        print(f'fibers == {name}: {"yes" if difference is None else "NO"}')
        if difference:
            failures.append(f'fibers.json and {name}.json differ at {difference}')

    in_suite = runs_by_name(fibers)
    alone = runs_by_name(run(peerconf, out, 'alone', one))
    (name, events), = alone.items()
    if name not in in_suite:
        failures.append(f'{name}: not in the suite\'s trace')
    else:
        difference = first_difference(b'\n'.join(events), b'\n'.join(in_suite[name]))
        print(f'{name} alone == in the suite: {"yes" if difference is None else "NO"}')
        if difference:
            failures.append(f'{name} alone and in the suite differ at {difference}')

    # Control: another seed is another run, and the comparison sees it.
    reseeded = runs_by_name(run(peerconf, out, 'reseeded', one, '--seed', '987654321'))
    (name_r, events_r), = reseeded.items()
    control = first_difference(b'\n'.join(events), b'\n'.join(events_r))
    print(f'control: {name} with another seed differs: {"yes" if control else "NO"}')
    if control is None:
        failures.append('control: a run with another seed gave the same trace: the comparison '
                        'or the seed\'s draws are not what this test relies on')

    for failure in failures:
        print('FAIL ' + failure)
    return 1 if failures else 0


if __name__ == '__main__':
    sys.exit(main())
