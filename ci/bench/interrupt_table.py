#!/usr/bin/env python3
"""Issue 44's table measured again: what an interrupted run leaves behind.

  ci/bench/interrupt_table.py PEERCONF [--points 10] [--rows ROW,...]

The issue's four commands, each interrupted at ten points (seconds after its start, spread over
its running time; the issue's table used 3-4): the exit status, the mocked runtime's segments left
in /dev/shm (peerconf.* files made by the run: a private tmpfs when the test may mount one, as in
tests/driver/interrupt_test.py, whose helpers this uses), the processes of the run's session left,
and whether the "interrupted after" line came. A point the run outlived is counted as finished.
Prints the markdown table ci/bench/RESULTS.md keeps.
"""
import argparse
import importlib.util
import os
import signal
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))


def load_test_helpers():
    sys.dont_write_bytecode = True  # no __pycache__ in the source tree
    path = os.path.join(ROOT, "tests", "driver", "interrupt_test.py")
    spec = importlib.util.spec_from_file_location("interrupt_test", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


T = load_test_helpers()

# name, arguments after PEERCONF, signals (cycled over the points), the points' span in seconds.
ROWS = {
    "sim": (["run", "scenarios"], [signal.SIGINT, signal.SIGTERM], (0.5, 9.5)),
    "real": (["run", "scenarios", "--clock", "real"], [signal.SIGINT], (1.0, 19.0)),
    "explore": (["explore", "--cases", "100000"], [signal.SIGINT], (1.0, 19.0)),
    "mpi": (["run", "scenarios", "--launcher", "mpi"], [signal.SIGINT], (1.0, 19.0)),
}
TITLES = {
    "sim": "`peerconf run scenarios` (threads, simulated time)",
    "real": "`peerconf run scenarios --clock real`",
    "explore": "`peerconf explore --cases 100000`",
    "mpi": "`peerconf run scenarios --launcher mpi`",
}


def point(peerconf, row, at, sig, work):
    args, _, _ = ROWS[row]
    tmp = tempfile.mkdtemp(dir=work)
    shm_before = set(os.listdir("/dev/shm"))
    env = dict(os.environ, TMPDIR=tmp, OMPI_ALLOW_RUN_AS_ROOT="1",
               OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    argv = [peerconf, *args]
    if row == "explore":
        argv += ["--out", os.path.join(tmp, "explore")]
    run = T.Run(argv, env)
    start = time.monotonic()
    finished = False
    try:
        run.proc.wait(timeout=at)
        finished = True
    except Exception:  # subprocess.TimeoutExpired: still running at the point
        os.killpg(run.proc.pid, sig)
    code, _ = run.finish(T.EXIT_LIMIT)
    took = time.monotonic() - start
    segments = sorted(n for n in set(os.listdir("/dev/shm")) - shm_before
                      if n.startswith("peerconf."))
    left = T.session_processes(run.proc.pid)
    line = bool(T.LINE.search(run.text("out")))
    for name in segments:  # what an old build leaves: removed so the next point starts clean
        try:
            os.unlink(os.path.join("/dev/shm", name))
        except OSError:
            pass
    for pid in left:
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass
    return {"at": at, "sig": sig, "finished": finished, "code": code, "segments": len(segments),
            "processes": len(left), "line": line, "took": took}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("peerconf")
    parser.add_argument("--points", type=int, default=10)
    parser.add_argument("--rows", default="sim,real,explore,mpi")
    args = parser.parse_args()
    os.chdir(ROOT)
    mode = T.private_shm(os.path.abspath(__file__))
    peerconf = os.path.abspath(args.peerconf)
    print(f"interrupt_table: {peerconf}, {args.points} points a row, /dev/shm: {mode}",
          flush=True)
    work = tempfile.mkdtemp(prefix="peerconf-interrupt-table-")
    table = []
    for row in args.rows.split(","):
        _, signals, (lo, hi) = ROWS[row]
        results = []
        for i in range(args.points):
            at = lo + (hi - lo) * i / max(1, args.points - 1)
            r = point(peerconf, row, round(at, 2), signals[i % len(signals)], work)
            results.append(r)
            print(f"  {row} at {r['at']} s {signal.Signals(r['sig']).name}: "
                  f"{'finished first' if r['finished'] else 'exit ' + str(r['code'])}, "
                  f"{r['segments']} segments, {r['processes']} processes left, "
                  f"line {'yes' if r['line'] else 'no'}, {r['took']:.1f} s", flush=True)
        table.append((row, results))
    print()
    print("| command | signal, at (s after the start) | segments left, in that order "
          "| exit status | processes left | \"interrupted after\" line |")
    print("|---|---|---|---|---|---|")
    for row, results in table:
        names = sorted({signal.Signals(r["sig"]).name for r in results})
        when = ", ".join(f"{r['at']:g}" for r in results)
        segs = ", ".join(str(r["segments"]) for r in results)
        codes = ", ".join("done" if r["finished"] else str(r["code"]) for r in results)
        procs = sum(r["processes"] for r in results)
        lines = sum(1 for r in results if r["line"] and not r["finished"])
        stopped = sum(1 for r in results if not r["finished"])
        print(f"| {TITLES[row]} | {' and '.join(names)} to the group at {when} | {segs} | {codes} "
              f"| {procs} | {lines} of {stopped} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
