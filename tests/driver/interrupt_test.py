#!/usr/bin/env python3
"""An interrupted peerconf run leaves everything as it was (issue 44).

  interrupt_test.py PEERCONF --path PATH [--scenarios DIR...] [--points N] [--seed S]
                    [--runtime mock|gpu] [--np N] [--window SECONDS]

PATH is what is interrupted: threads-sim (`peerconf run`, simulated time), threads-real
(`--clock real`), explore (`peerconf explore`), mpi (`--launcher mpi`: one mpirun, a child of
peerconf) or signal (`--launcher mpi --kill-mode signal`: the supervisor's mpiruns). `--runtime gpu`
runs the two MPI paths on GPUs (the GPU nightly; a GPU build and the GPUs' scenarios, e.g.
--scenarios scenarios/gpu; --np the ranks, 4 by default).

Each of N points (default 10) starts the run in a session of its own, waits for its first line of
output (a progress line: nothing here sleeps to synchronize), then signals it after a delay drawn
from the seed in [0, window): SIGINT to the process group (Ctrl-C), or SIGTERM or SIGHUP to the
group or to the process alone; at two points drawn from the seed, a second SIGINT follows as soon
as the run says it is ending, and at one SIGKILL goes to peerconf alone. Then:
  - the exit status is 128 + the signal, and (one signal) the output says "interrupted after N of
    M scenarios" (or cases); a second signal or SIGKILL ends the run within a few seconds;
  - no process of the run's session is left (children ended and reaped);
  - /dev/shm holds what it held before (a private tmpfs of the test's own when it may mount one,
    so that other programs' files cannot mix in; else the machine's, compared by name);
  - nothing is left in the run's TMPDIR (run directories, stop files) or beside its reports
    (no half-written report);
  - one signal: the JUnit file parses (xml.etree; and validates against tests/data/junit.xsd
    where xmllint is there) with the N test cases that ran and an "interrupted" error, the trace
    parses as JSON with N runs, the HTML report is whole, says "interrupted" and holds N runs; two
    signals or SIGKILL: each report is absent or whole.
The seed (random unless given) is printed first and with every failure. Exit status 0 when every
point holds, 1 otherwise.
"""
import argparse
import json
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import xml.etree.ElementTree as ET

HERE = os.path.dirname(os.path.abspath(__file__))
INNER = "PEERCONF_INTERRUPT_TEST_PRIVATE_SHM"
LINE = re.compile(r"interrupted after (\d+) of (\d+) (scenarios|cases) \((SIG[A-Z]+)\)")
EXIT_LIMIT = 120  # seconds an interrupted run may take to end (an MPI round under way ends first)
AT_ONCE_LIMIT = 10  # ... after a second signal (and its processes, mpirun's ranks, to be gone)


def private_shm(script=os.path.abspath(__file__)):
    """Re-runs `script` (this one) with a private tmpfs on /dev/shm where the system allows it
    (root, or an unprivileged user namespace); returns only when it cannot (then the machine's is
    used)."""
    if os.environ.get(INNER):
        subprocess.run(["mount", "-t", "tmpfs", "-o", "mode=1777", "tmpfs", "/dev/shm"],
                       check=True)
        return "private tmpfs"
    for prefix in (["unshare", "--mount", "--propagation", "private"],
                   ["unshare", "--user", "--map-root-user", "--mount", "--propagation",
                    "private"]):
        probe = subprocess.run(prefix + ["sh", "-c", "mount -t tmpfs tmpfs /dev/shm"],
                               capture_output=True)
        if probe.returncode == 0:
            env = dict(os.environ, **{INNER: "1"})
            sys.stdout.flush()
            os.execvpe(prefix[0], prefix + [sys.executable, script] + sys.argv[1:], env)
    return "the machine's /dev/shm (no private tmpfs could be mounted)"


def session_processes(sid):
    """Live (not zombie) processes of session `sid`: pid -> command line."""
    out = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                stat = f.read()
            fields = stat[stat.rindex(")") + 2:].split()
            if int(fields[3]) != sid or fields[0] in ("Z", "X"):
                continue
            with open(f"/proc/{entry}/cmdline", "rb") as f:
                out[int(entry)] = f.read().replace(b"\0", b" ").decode(errors="replace")[:160]
        except (OSError, ValueError):
            continue
    return out


def command(args, path, work):
    """The command line of one point of PATH, its reports (or None) and what it counts."""
    scen = args.scenarios or ([os.path.join(args.root, "scenarios")]
                              if path.startswith("threads") else
                              [os.path.join(args.root, "scenarios", d)
                               for d in ("handshake", "lifecycle")])
    reports = {k: os.path.join(work, "reports", n)
               for k, n in (("junit", "r.xml"), ("trace", "r.json"), ("html", "r.html"))}
    report_args = ["--junit", reports["junit"], "--trace", reports["trace"],
                   "--html", reports["html"]]
    gpu = ["--runtime", args.runtime] if args.runtime != "mock" else []
    if path == "threads-sim":
        return [args.peerconf, "run", *scen, "--repeat", "100", *report_args], reports
    if path == "threads-real":
        return [args.peerconf, "run", *scen, "--clock", "real", "--repeat", "100",
                *report_args], reports
    if path == "explore":
        return [args.peerconf, "explore", "--cases", "10000000", "--out",
                os.path.join(work, "reports", "explore")], None
    if path == "mpi":
        return [args.peerconf, "run", *scen, "--launcher", "mpi", "--np", str(args.np),
                "--repeat", "100", *gpu, *report_args], reports
    if path == "signal":
        return [args.peerconf, "run", *scen, "--launcher", "mpi", "--kill-mode", "signal",
                "--np", str(args.np), "--repeat", "100", *gpu, *report_args], reports
    raise SystemExit(f"unknown path {path}")


class Run:
    """One started run: its output lines as they come, and when the first came."""

    def __init__(self, argv, env):
        self.lines = {"out": [], "err": []}
        self.first = threading.Event()
        self.ending = threading.Event()  # it said it is ending (or its output ended)
        self.said_ending = False
        self.proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                     env=env, start_new_session=True)
        self.readers = [threading.Thread(target=self._read, args=(self.proc.stdout, "out")),
                        threading.Thread(target=self._read, args=(self.proc.stderr, "err"))]
        for reader in self.readers:
            reader.start()

    def _read(self, stream, name):
        for raw in stream:
            line = raw.decode(errors="replace")
            self.lines[name].append(line)
            self.first.set()
            if name == "err" and "ending the run" in line:
                self.said_ending = True
                self.ending.set()
        self.first.set()  # EOF: nothing more will come
        if name == "err":
            self.ending.set()

    def finish(self, limit):
        """The exit status (None: not within `limit` s, then killed) and when it came; then the
        rest of the output (until every holder of the pipes is gone: mpirun may outlive
        peerconf by its teardown after a second signal, bounded by AT_ONCE_LIMIT)."""
        code = None
        try:
            code = self.proc.wait(timeout=limit)
        except subprocess.TimeoutExpired:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait()
        ended = time.monotonic()
        for reader in self.readers:
            reader.join(timeout=AT_ONCE_LIMIT)
        return code, ended

    def text(self, name):
        return "".join(self.lines[name])


def check_reports(reports, interrupted, double, problems, xsd=None):
    """The reports of a run that `interrupted` ran N of (None: any count): whole, parsed, N runs."""
    n = interrupted
    junit, trace, html = reports["junit"], reports["trace"], reports["html"]
    if double:  # the second signal may come before they are written: whole or absent
        present = [p for p in (junit, trace, html) if os.path.exists(p)]
    else:
        present = [junit, trace, html]
        for p in present:
            if not os.path.exists(p):
                problems.append(f"no report {os.path.basename(p)}")
                return
    if junit in present:
        try:
            root = ET.parse(junit).getroot()
            cases = root.findall("testcase")
            stopped = [c for c in cases if c.get("name") == "interrupted"]
            if root.get("tests") != str(len(cases)):
                problems.append(f"JUnit says tests={root.get('tests')} but has {len(cases)}")
            if len(stopped) != 1 or stopped[0].find("error") is None or root.get("errors") != "1":
                problems.append("JUnit has no single \"interrupted\" test case in error")
            if n is not None and len(cases) - 1 != n:
                problems.append(f"JUnit holds {len(cases) - 1} runs, the output says {n}")
        except ET.ParseError as e:
            problems.append(f"JUnit does not parse: {e}")
        # Where xmllint is there, against the JUnit schema the suite's reports test uses too.
        if xsd and shutil.which("xmllint") and os.path.exists(xsd):
            check = subprocess.run(["xmllint", "--noout", "--schema", xsd, junit],
                                   capture_output=True, text=True)
            if check.returncode != 0:
                problems.append(f"JUnit does not validate: {check.stderr.strip()[-300:]}")
    if trace in present:
        try:
            with open(trace) as f:
                events = json.load(f)["traceEvents"]
            runs = sum(1 for e in events if e.get("ph") == "M" and e.get("name") == "process_name")
            if n is not None and runs != n:
                problems.append(f"the trace holds {runs} runs, the output says {n}")
        except (ValueError, KeyError) as e:
            problems.append(f"the trace does not parse as JSON: {e}")
    if html in present:
        with open(html, encoding="utf-8", errors="replace") as f:
            page = f.read()
        runs = page.count('<details class="sc ')
        if not page.rstrip().endswith("</html>"):
            problems.append("the HTML report is cut short")
        elif not double and 'id="interrupted"' not in page:
            problems.append("the HTML report does not say it was interrupted")
        elif n is not None and runs != n:
            problems.append(f"the HTML report holds {runs} runs, the output says {n}")


def one_point(args, path, index, rng, shm_before, workroot):
    work = tempfile.mkdtemp(prefix=f"{path}-{index}-", dir=workroot)
    tmp = os.path.join(work, "tmp")
    os.makedirs(os.path.join(work, "reports"))
    os.makedirs(tmp)
    argv, reports = command(args, path, work)
    delay = rng.uniform(0, args.window)
    sig = rng.choice([signal.SIGINT] * 3 + [signal.SIGTERM, signal.SIGHUP])
    to_group = sig == signal.SIGINT or rng.random() < 0.5
    double = index in args.doubles
    killed = index in args.kills  # SIGKILL to peerconf alone: nothing it can catch
    if killed:
        sig, to_group = signal.SIGKILL, False
    abrupt = double or killed  # ended at once: its reports whole or absent, no summary
    what = (f"point {index}: {signal.Signals(sig).name} to the "
            f"{'process group' if to_group else 'process'} {delay:.3f} s after the first line"
            f"{', then a second SIGINT' if double else ''}")
    env = dict(os.environ, TMPDIR=tmp, OMPI_ALLOW_RUN_AS_ROOT="1",
               OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    run = Run(argv, env)
    problems = []
    if not run.first.wait(timeout=EXIT_LIMIT) or run.proc.poll() is not None:
        problems.append("the run printed nothing or ended before it was signalled")
    else:
        time.sleep(delay)  # the point (drawn from the seed), not a synchronization
        (os.killpg if to_group else os.kill)(run.proc.pid, sig)
        if double:
            run.ending.wait(timeout=EXIT_LIMIT)
            if not run.said_ending:
                problems.append("the run never said it was ending")
            elif run.proc.poll() is None:
                try:
                    os.killpg(run.proc.pid, signal.SIGINT)
                except ProcessLookupError:
                    pass  # it ended first: then it ended as after one signal
    began = time.monotonic()
    code, ended = run.finish(AT_ONCE_LIMIT if abrupt else EXIT_LIMIT)
    took = ended - began
    out, err = run.text("out"), run.text("err")
    if code is None:
        problems.append(f"the run did not end within {AT_ONCE_LIMIT if abrupt else EXIT_LIMIT} s"
                        " of the signal (killed)")
    elif code != (-sig if killed else 128 + sig):
        problems.append(f"exit status {code}, not {-sig if killed else 128 + sig}")
    left = session_processes(run.proc.pid)
    if abrupt:  # mpirun (its keeper) ends its ranks after peerconf is gone: bounded, not instant
        deadline = time.monotonic() + AT_ONCE_LIMIT
        while left and time.monotonic() < deadline:
            time.sleep(0.05)
            left = session_processes(run.proc.pid)
    for pid, line in left.items():
        problems.append(f"process {pid} of the run is left: {line}")
    shm_after = set(os.listdir("/dev/shm"))
    for name in sorted(shm_after - shm_before):
        if args.shm_mode.startswith("private") or name.startswith("peerconf."):
            problems.append(f"/dev/shm/{name} is left")
    for root, dirs, files in os.walk(tmp):
        for name in dirs + files:
            problems.append(f"{os.path.join(root, name)} is left in the run's TMPDIR")
    interrupted = None
    if not abrupt and code is not None:
        m = LINE.search(out)
        if not m:
            problems.append("no \"interrupted after N of M\" line")
        else:
            interrupted = int(m.group(1))
            if m.group(4) != signal.Signals(sig).name:
                problems.append(f"the line names {m.group(4)}")
    if reports:
        leftovers = [f for f in os.listdir(os.path.dirname(reports["junit"]))
                     if ".partial." in f]
        for name in leftovers:
            problems.append(f"half-written report {name} is left")
        check_reports(reports, interrupted, abrupt, problems,
                      os.path.join(args.root, "tests", "data", "junit.xsd"))
    summary = (f"{path} {what}: exit {code} after {took:.2f} s"
               + (f", interrupted after {interrupted}" if interrupted is not None else ""))
    if problems:
        print(f"FAIL {summary}\n  command: {' '.join(argv)}")
        for p in problems:
            print(f"  - {p}")
        print("  stdout (end):\n" + "".join("    " + l for l in out.splitlines(True)[-8:]))
        print("  stderr (end):\n" + "".join("    " + l for l in err.splitlines(True)[-12:]))
        return False
    print(f"ok   {summary}")
    shutil.rmtree(work, ignore_errors=True)
    return True


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("peerconf")
    parser.add_argument("--path", required=True,
                        choices=["threads-sim", "threads-real", "explore", "mpi", "signal"])
    parser.add_argument("--scenarios", nargs="*", default=[])
    parser.add_argument("--points", type=int, default=10)
    parser.add_argument("--seed", type=int, default=None)
    parser.add_argument("--runtime", default="mock", choices=["mock", "gpu"])
    parser.add_argument("--np", type=int, default=4, help="the MPI paths' ranks (default 4)")
    parser.add_argument("--window", type=float, default=None,
                        help="signal within this many seconds of the first line (default: 1.0, "
                             "1.5 for the MPI paths)")
    parser.add_argument("--root", default=os.path.dirname(os.path.dirname(HERE)),
                        help="the repository (default: this script's)")
    args = parser.parse_args()
    if args.runtime == "gpu" and args.path not in ("mpi", "signal"):
        parser.error("--runtime gpu runs the MPI paths only (mpi, signal)")
    args.shm_mode = private_shm()
    if args.seed is None:
        args.seed = random.SystemRandom().randrange(1 << 32)
    if args.window is None:
        args.window = 1.5 if args.path in ("mpi", "signal") else 1.0
    rng = random.Random(args.seed)
    drawn = rng.sample(range(args.points), min(3, args.points))
    args.doubles, args.kills = set(drawn[:2]), set(drawn[2:])
    print(f"interrupt_test: {args.path}, {args.points} points, seed {args.seed} "
          f"(again: --seed {args.seed}), /dev/shm: {args.shm_mode}")
    workroot = tempfile.mkdtemp(prefix="peerconf-interrupt-")
    failed = 0
    try:
        for index in range(args.points):
            shm_before = set(os.listdir("/dev/shm"))
            if not one_point(args, args.path, index, rng, shm_before, workroot):
                failed += 1
    finally:
        shutil.rmtree(workroot, ignore_errors=True)
    if failed:
        print(f"interrupt_test: {failed} of {args.points} points FAILED (seed {args.seed}; "
              f"again: {os.path.basename(sys.argv[0])} {args.peerconf} --path {args.path} "
              f"--points {args.points} --seed {args.seed}"
              + (f" --runtime {args.runtime}" if args.runtime != "mock" else "")
              + (" --scenarios " + " ".join(args.scenarios) if args.scenarios else "") + ")")
        return 1
    print(f"interrupt_test: {args.path}: all {args.points} points left everything as it was")
    return 0


if __name__ == "__main__":
    sys.exit(main())
