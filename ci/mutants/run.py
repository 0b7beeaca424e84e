#!/usr/bin/env python3
"""Mutation run (issue 25, item 6): hand-written mutants of peerconf against the suite.

No C++ mutation tool is packaged for Debian, so the mutants are written by hand in
ci/mutants/mutants.yaml (id, file, an exact `find` snippet, its `replace`, and what real defect it
`models`). For each mutant, one at a time, this script:
  1. applies it to a scratch copy of the working tree (default build/mutants/tree: the files git
     lists, tracked and untracked-not-ignored, synced so that unchanged files keep their times),
     refusing a stale mutant whose `find` is missing or ambiguous (reported STALE, never skipped);
  2. builds the `peerconf` target in one build dir reused across mutants (configured once with the
     `suite` preset, ccache when present), so only the mutated file recompiles;
  3. runs what ci/suite.sh runs: `peerconf run scenarios/` on simulated time, then the suite's
     own checks (ci/suite-checks.sh: files the rules must refuse, the systematic explorer's
     bounds), then `--clock real` (its data planes capped at 10^5 steps, as ci/suite.sh caps
     them), each only while no earlier pass killed it (unless --both-clocks);
  4. with --ctest, also builds a full test build (the `default` preset's, its own build dir) and
     runs ctest's labels (--ctest-labels; mpi, gpu, sweep, exhaustive and browser left out);
  5. restores the file, and at the end prints the kill table (markdown) with a total.
Every build, pass and ctest run has a timeout; a mutant that hangs a pass is killed-by-timeout.
A baseline (the tree unmutated) runs first and must pass: a red suite cannot judge mutants (on a
loaded box the real-time pass misses its time bounds: --tolerate-baseline then records the
scenarios it fails, and a mutant failing only those is not counted as killed by that pass).
Slow (a suite run or two per mutant): not run in CI; the table lives in ci/bench/RESULTS.md.

  ci/mutants/run.py --list                   the mutants and whether each still applies
  ci/mutants/run.py --syntax                 compile each mutated file (-fsyntax-only) only
  ci/mutants/run.py                          every mutant against the suite
  ci/mutants/run.py --only ID... --ctest     some, and the tests too
  ci/mutants/run.py --out table.md --json results.json
"""
import argparse
import json
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[2]
MUTANTS = Path(__file__).resolve().parent / "mutants.yaml"
CTEST_EXCLUDE = "^(mpi|gpu|sweep|exhaustive|browser)$"
FAIL_LINE = re.compile(r"^FAIL (\S+) \((?:[^()]|\([^()]*\))*\)(?: \[[^\]]*\])?: (.+)$")
SUMMARY = re.compile(r"^(\d+) passed, (\d+) failed$")


def load(path):
    with open(path, encoding="utf-8") as f:
        mutants = yaml.safe_load(f)["mutants"]
    seen = set()
    for m in mutants:
        missing = {"id", "file", "find", "replace", "models"} - set(m)
        if missing:
            sys.exit(f"{path}: mutant {m.get('id', '?')} lacks {', '.join(sorted(missing))}")
        if m["id"] in seen:
            sys.exit(f"{path}: mutant id {m['id']} twice")
        if m["find"] == m["replace"]:
            sys.exit(f"{path}: mutant {m['id']} replaces its snippet with itself")
        seen.add(m["id"])
    return mutants


def staleness(root, m):
    """Why the mutant no longer applies to the tree at `root`, or None."""
    path = root / m["file"]
    if not path.is_file():
        return f"{m['file']} does not exist"
    count = path.read_text(encoding="utf-8").count(m["find"])
    if count == 0:
        return "`find` no longer occurs in the file"
    if count > 1:
        return f"`find` is ambiguous: it occurs {count} times"
    return None


def run(cmd, cwd, log, timeout, env=None):
    """Runs `cmd` in its own process group, output to `log`; returns (rc, output, timed_out).
    On timeout the whole group is killed (the run's own processes, by their group id)."""
    start = time.monotonic()
    with open(log, "w", encoding="utf-8", errors="replace") as out:
        out.write(f"$ {shlex.join(str(c) for c in cmd)}   (cwd {cwd})\n")
        out.flush()
        proc = subprocess.Popen(cmd, cwd=cwd, stdout=out, stderr=subprocess.STDOUT,
                                stdin=subprocess.DEVNULL, env=env, start_new_session=True)
        timed_out = False
        try:
            proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            timed_out = True
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            proc.wait()
        out.write(f"\n[exit {proc.returncode}{', timed out' if timed_out else ''}, "
                  f"{time.monotonic() - start:.1f} s]\n")
    text = Path(log).read_text(encoding="utf-8", errors="replace")
    return proc.returncode, text, timed_out


def tail(text, lines=15):
    return "\n".join(text.rstrip().splitlines()[-lines:])


class Tree:
    """The scratch copy of the working tree, and its build dirs."""

    def __init__(self, work, build_jobs):
        self.work = work
        self.root = work / "tree"
        self.suite_build = self.root / "build" / "suite"
        self.test_build = self.root / "build" / "ctest"
        self.logs = work / "logs"
        self.build_jobs = build_jobs
        self.env = dict(os.environ)
        self.env.setdefault("CCACHE_BASEDIR", str(self.root))
        self.env.setdefault("CCACHE_NOHASHDIR", "1")
        self.env.update(OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")

    def sync(self):
        """Copies the files git lists; a file whose content is unchanged keeps its time, so only
        what changed recompiles. Also undoes a mutant left applied by an interrupted run."""
        listed = subprocess.run(
            ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=REPO,
            check=True, capture_output=True).stdout.decode().split("\0")
        wanted = set()
        for rel in filter(None, listed):
            src = REPO / rel
            if not src.is_file() or src.is_symlink():
                continue
            wanted.add(rel)
            dst = self.root / rel
            data = src.read_bytes()
            if dst.is_file() and dst.read_bytes() == data:
                continue
            dst.parent.mkdir(parents=True, exist_ok=True)
            dst.write_bytes(data)
            shutil.copymode(src, dst)
        manifest = self.work / "manifest.txt"
        if manifest.is_file():
            for rel in manifest.read_text().splitlines():
                if rel not in wanted and (self.root / rel).is_file():
                    (self.root / rel).unlink()
        manifest.write_text("\n".join(sorted(wanted)) + "\n")
        self.logs.mkdir(parents=True, exist_ok=True)

    def configure(self, which, timeout):
        build = self.suite_build if which == "suite" else self.test_build
        if (build / "build.ninja").is_file():
            return
        cmd = ["cmake", "--preset", "suite" if which == "suite" else "default", "-B", str(build),
               "-G", "Ninja", "-DCMAKE_EXPORT_COMPILE_COMMANDS=ON"]
        if which != "suite":
            cmd += ["-DPEERCONF_TEST_CXX_FLAGS=-O0",
                    "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O2 -g1 -DNDEBUG"]
        if shutil.which("ccache"):
            cmd += ["-DCMAKE_CXX_COMPILER_LAUNCHER=ccache", "-DCMAKE_C_COMPILER_LAUNCHER=ccache"]
        rc, text, timed_out = run(cmd, self.root, self.logs / f"configure-{which}.log", timeout,
                                  self.env)
        if rc != 0 or timed_out:
            shutil.rmtree(build, ignore_errors=True)
            sys.exit(f"configuring the {which} build failed:\n{tail(text)}")

    def build(self, which, log, timeout):
        build = self.suite_build if which == "suite" else self.test_build
        cmd = ["nice", "-n", "5", "cmake", "--build", str(build), "-j", str(self.build_jobs)]
        if which == "suite":
            cmd += ["--target", "peerconf"]
        return run(cmd, self.root, log, timeout, self.env)


class Applied:
    """A mutant applied to the scratch tree for the length of a `with`; always restored (the
    restored file gets a new time, so the next build recompiles it: a ccache hit)."""

    def __init__(self, tree, m):
        self.path = tree.root / m["file"]
        self.m = m

    def __enter__(self):
        self.original = self.path.read_text(encoding="utf-8")
        self.path.write_text(self.original.replace(self.m["find"], self.m["replace"], 1),
                             encoding="utf-8")
        return self

    def __exit__(self, *exc):
        self.path.write_text(self.original, encoding="utf-8")
        return False


def suite_pass(tree, clock, log, timeout, baseline=None):
    """One pass of the suite. It kills the mutant when it times out, crashes, exits non-zero with
    no scenario failing (a harness error), or fails a scenario that `baseline` (the scenarios the
    unmutated tree failed on this clock, if tolerated) does not hold. Returns {"killed", "how",
    "scenario", "property" (the first failing scenario that counts and its failure titles),
    "counts", "fails" (every failing scenario)}."""
    job = f"{os.getpid():08x}{int(time.time() * 1000) & 0xffffffff:08x}"
    env = dict(tree.env, PEERCONF_MOCK_JOB=job)
    cmd = [str(tree.suite_build / "harness" / "peerconf"), "run", "scenarios/"]
    if clock == "real":
        cmd += ["--clock", "real"]
        # As ci/suite.sh's real-time pass: its data planes capped at 10^5 steps (the step cap's
        # code under test too), unless the environment says otherwise.
        env.setdefault("PEERCONF_MAX_DATAPLANE_STEPS", "100000")
    rc, text, timed_out = run(cmd, tree.root, log, timeout, env)
    for seg in Path("/dev/shm").glob(f"peerconf.{job}.*"):  # only this pass's own segments
        try:
            seg.unlink()
        except OSError:
            pass
    baseline = baseline or set()
    result = {"clock": clock, "killed": False, "how": "", "scenario": "", "property": "",
              "counts": "", "fails": []}
    for line in text.splitlines():
        if m := SUMMARY.match(line.strip()):
            result["counts"] = f"{m.group(1)} passed, {m.group(2)} failed"
        if m := FAIL_LINE.match(line):
            result["fails"].append(m.group(1))
            if not result["scenario"] and m.group(1) not in baseline:
                result["scenario"], result["property"] = m.group(1), m.group(2)
    if timed_out:
        result["how"] = f"timeout ({timeout} s)"
    elif rc < 0:
        result["how"] = f"crashed ({signal.Signals(-rc).name})"
    elif rc != 0 and not result["fails"]:
        # The command's own word on why (the simulator's refused self-check, say), else its end.
        said = next((line for line in text.splitlines() if line.startswith("peerconf: ")), "")
        result["how"] = f"exit {rc}: {(said or tail(text, 1))[:120]}"
    elif result["scenario"]:
        result["how"] = "failed"
    result["killed"] = bool(result["how"])
    return result


CHECK_FAIL = re.compile(r"^FAIL (\S+): (.+)$")


def checks_pass(tree, log, timeout):
    """ci/suite-checks.sh on the tree's peerconf, in the shape of suite_pass's result: a check
    that fails (a rule that no longer refuses its file, an explorer bound that no longer prunes)
    kills the mutant, and names it."""
    cmd = [str(tree.root / "ci" / "suite-checks.sh"), str(tree.suite_build / "harness" / "peerconf")]
    rc, text, timed_out = run(cmd, tree.root, log, timeout, tree.env)
    result = {"clock": "checks", "killed": False, "how": "", "scenario": "", "property": "",
              "counts": "", "fails": []}
    passed = sum(line.startswith("PASS ") for line in text.splitlines())
    for line in text.splitlines():
        if m := CHECK_FAIL.match(line.strip()):
            result["fails"].append(m.group(1))
            if not result["scenario"]:
                result["scenario"], result["property"] = m.group(1), "suite check"
    result["counts"] = f"{passed} passed, {len(result['fails'])} failed"
    if timed_out:
        result["how"] = f"timeout ({timeout} s)"
    elif rc < 0:
        result["how"] = f"crashed ({signal.Signals(-rc).name})"
    elif rc != 0 and not result["fails"]:
        result["how"] = f"exit {rc}: {tail(text, 1)[:120]}"
    elif result["fails"]:
        result["how"] = "failed"
    result["killed"] = bool(result["how"])
    return result


def ctest_run(tree, labels, log, timeout, per_test):
    cmd = ["ctest", "--test-dir", str(tree.test_build), "-j", str(tree.build_jobs), "-L", labels,
           "-LE", CTEST_EXCLUDE, "--timeout", str(per_test)]
    rc, text, timed_out = run(cmd, tree.root, log, timeout, tree.env)
    failed = []
    in_list = False
    for line in text.splitlines():
        if line.startswith("The following tests FAILED"):
            in_list = True
        elif in_list and (m := re.match(r"^\s*\d+ - (.+?) \(([^)]*)\)\s*$", line)):
            failed.append(m.group(1))
    return {"rc": rc, "timed_out": timed_out, "failed": failed}


def syntax_check(tree, m, log):
    """-fsyntax-only on the mutated file with its compile command from the suite build."""
    db = json.loads((tree.suite_build / "compile_commands.json").read_text())
    target = (tree.root / m["file"]).resolve()
    for entry in db:
        if Path(entry["directory"], entry["file"]).resolve() != target:
            continue
        args = entry.get("arguments") or shlex.split(entry["command"])
        if Path(args[0]).name == "ccache":
            args = args[1:]
        cleaned, skip = [], False
        for a in args:
            if skip:
                skip = False
                continue
            if a == "-o":
                skip = True
                continue
            cleaned.append(a)
        rc, text, _ = run(cleaned + ["-fsyntax-only"], entry["directory"], log, 300, tree.env)
        return rc == 0, text
    return False, f"{m['file']} is not compiled by the peerconf build (no compile command)"


def verdict_cell(r):
    if r["status"] != "ran":
        return r["status"] + (f": {r['why']}" if r.get("why") else "")
    killer = next((p for p in r["passes"] if p["killed"]), None)
    if killer is None:
        return "no (" + "; ".join(f"{p['clock']}: {p['counts'] or 'passed'}" for p in r["passes"]) + ")"
    where = f"`{killer['scenario']}` ({killer['property']})" if killer["scenario"] else ""
    how = killer["how"] if killer["how"] != "failed" else ""
    return "yes: " + ", ".join(filter(None, [killer["clock"], where, how]))


def ctest_cell(r):
    c = r.get("ctest")
    if c is None:
        return "not run"
    if c.get("error"):
        return c["error"]
    new = c["new_failures"]
    if c["timed_out"]:
        return "yes: timeout" + (f" ({', '.join(new[:3])})" if new else "")
    if not new:
        return "no"
    return "yes: " + ", ".join(f"`{t}`" for t in new[:3]) + (f" (+{len(new) - 3})" if len(new) > 3 else "")


def table(results, notes=()):
    out = ["| id | file | models | killed by the suite | killed by ctest |", "|---|---|---|---|---|"]
    for r in results:
        m = r["mutant"]
        models = m["models"].replace("|", "\\|")
        out.append(f"| `{m['id']}` | `{m['file']}` | {models} | {verdict_cell(r)} | {ctest_cell(r)} |")
    ran = [r for r in results if r["status"] == "ran"]
    by_suite = [r for r in ran if any(p["killed"] for p in r["passes"])]
    ctested = [r for r in ran if r.get("ctest") and not r["ctest"].get("error")]
    only_ctest = [r for r in ctested if r not in by_suite and
                  (r["ctest"]["new_failures"] or r["ctest"]["timed_out"])]
    survived = [r for r in ran if r not in by_suite and r not in only_ctest]
    out.append("")
    out.append(f"Total: {len(results)} mutants; {len(ran)} ran: {len(by_suite)} killed by the suite, "
               f"{len(only_ctest)} only by ctest (of {len(ctested)} run under ctest), "
               f"{len(survived)} survived; "
               f"{sum(r['status'] == 'STALE' for r in results)} stale, "
               f"{sum(r['status'] == 'BUILD-FAIL' for r in results)} build failures.")
    out.extend(notes)
    if only_ctest or survived:
        out.append("Need a scenario or control in the suite: " +
                   ", ".join(f"`{r['mutant']['id']}`" for r in only_ctest + survived) + ".")
    return "\n".join(out)


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--mutants", type=Path, default=MUTANTS, help="the list (default: %(default)s)")
    ap.add_argument("--list", action="store_true", help="list the mutants and whether each applies")
    ap.add_argument("--only", nargs="+", metavar="ID", help="run these mutants only")
    ap.add_argument("--syntax", action="store_true",
                    help="only check that each mutated file compiles (-fsyntax-only); runs nothing")
    ap.add_argument("--ctest", action="store_true",
                    help="also run ctest on a full test build for each mutant (slow)")
    ap.add_argument("--ctest-labels", default="^(unit|property|scenario)$",
                    help=f"ctest -L regex (default: %(default)s; -LE {CTEST_EXCLUDE} always)")
    ap.add_argument("--both-clocks", action="store_true",
                    help="run the real-time pass even when the simulated one killed the mutant")
    ap.add_argument("--clocks", nargs="+", choices=("sim", "checks", "real"),
                    default=["sim", "checks", "real"],
                    help="the suite's passes, in order (default: %(default)s, as ci/suite.sh; "
                    "`checks` is ci/suite-checks.sh; `--clocks sim checks` as "
                    "PEERCONF_SUITE_REAL=0)")
    ap.add_argument("--tolerate-baseline", action="store_true",
                    help="a baseline pass that fails scenarios is recorded instead of fatal, and "
                    "a mutant failing only those scenarios is not killed by that pass")
    ap.add_argument("--no-baseline", action="store_true",
                    help="skip the unmutated baseline (only when it is known to pass)")
    ap.add_argument("--work", type=Path, default=REPO / "build" / "mutants",
                    help="scratch tree, build dirs and logs (default: %(default)s)")
    ap.add_argument("--build-jobs", type=int, default=2, help="ninja -j (default: %(default)s)")
    ap.add_argument("--build-timeout", type=int, default=3600, help="seconds (default: %(default)s)")
    ap.add_argument("--suite-timeout", type=int, default=900,
                    help="seconds a suite pass may take (default: %(default)s)")
    ap.add_argument("--ctest-timeout", type=int, default=5400,
                    help="seconds the whole ctest run may take (default: %(default)s)")
    ap.add_argument("--out", type=Path, help="also write the kill table (markdown) here")
    ap.add_argument("--json", type=Path, help="also write every result (JSON) here")
    args = ap.parse_args()

    mutants = load(args.mutants)
    if args.only:
        unknown = set(args.only) - {m["id"] for m in mutants}
        if unknown:
            sys.exit(f"unknown mutant id(s): {', '.join(sorted(unknown))}")
        mutants = [m for m in mutants if m["id"] in args.only]

    if args.list:
        for m in mutants:
            why = staleness(REPO, m)
            print(f"{'STALE' if why else 'ok':5}  {m['id']:32} {m['file']:36} {why or m['models']}")
        stale = sum(staleness(REPO, m) is not None for m in mutants)
        print(f"{len(mutants)} mutants, {len({m['file'] for m in mutants})} files, {stale} stale")
        return 1 if stale else 0

    tree = Tree(args.work.resolve(), args.build_jobs)
    tree.sync()
    tree.configure("suite", args.build_timeout)

    if args.syntax:
        bad = 0
        for m in mutants:
            why = staleness(tree.root, m)
            if why:
                print(f"STALE       {m['id']}: {why}")
                bad += 1
                continue
            with Applied(tree, m):
                ok, text = syntax_check(tree, m, tree.logs / f"{m['id']}-syntax.log")
            print(f"{'ok' if ok else 'BUILD-FAIL':11} {m['id']}")
            if not ok:
                print(tail(text))
                bad += 1
        return 1 if bad else 0

    if args.ctest:
        tree.configure("ctest", args.build_timeout)

    def log(name):
        return tree.logs / name

    print(f"building the unmutated tree ({tree.suite_build})", flush=True)
    rc, text, timed_out = tree.build("suite", log("baseline-build.log"), args.build_timeout)
    if rc != 0 or timed_out:
        sys.exit(f"the unmutated tree does not build:\n{tail(text)}")
    baseline = {clock: set() for clock in args.clocks}
    if not args.no_baseline:
        for clock in args.clocks:
            p = (checks_pass(tree, log("baseline-checks.log"), args.suite_timeout)
                 if clock == "checks" else
                 suite_pass(tree, clock, log(f"baseline-{clock}.log"), args.suite_timeout))
            print(f"baseline {clock}: {p['counts'] or p['how']}", flush=True)
            if not p["killed"]:
                continue
            if args.tolerate_baseline and p["how"] == "failed":
                baseline[clock] = set(p["fails"])
                print(f"    tolerated: a mutant's failure of these does not count on {clock}: "
                      f"{', '.join(p['fails'])}", flush=True)
                continue
            sys.exit(f"the unmutated suite fails on {clock} ({p['scenario']} {p['property']} "
                     f"{p['how']}); see {log(f'baseline-{clock}.log')} (on a loaded box the "
                     f"real-time pass misses its bounds: --clocks sim, or --tolerate-baseline)")
    baseline_failures = set()
    if args.ctest:
        rc, text, timed_out = tree.build("ctest", log("baseline-ctest-build.log"), args.build_timeout)
        if rc != 0 or timed_out:
            sys.exit(f"the unmutated test build fails:\n{tail(text)}")
        c = ctest_run(tree, args.ctest_labels, log("baseline-ctest.log"), args.ctest_timeout, 300)
        baseline_failures = set(c["failed"])
        print(f"baseline ctest: {len(baseline_failures)} failing "
              f"(left out of every mutant's kills): {sorted(baseline_failures)}", flush=True)

    results = []
    try:
        for i, m in enumerate(mutants, 1):
            r = {"mutant": m, "status": "ran", "passes": []}
            results.append(r)
            print(f"[{i}/{len(mutants)}] {m['id']} ({m['file']})", flush=True)
            why = staleness(tree.root, m)
            if why:
                r["status"] = "STALE"
                r["why"] = why
                print(f"    STALE: {why}", flush=True)
                continue
            started = time.monotonic()
            with Applied(tree, m):
                rc, text, timed_out = tree.build("suite", log(f"{m['id']}-build.log"),
                                                 args.build_timeout)
                if rc != 0 or timed_out:
                    r["status"] = "BUILD-FAIL"
                    print(f"    BUILD-FAIL (log {log(m['id'] + '-build.log')})", flush=True)
                    continue
                for clock in args.clocks:
                    p = (checks_pass(tree, log(f"{m['id']}-checks.log"), args.suite_timeout)
                         if clock == "checks" else
                         suite_pass(tree, clock, log(f"{m['id']}-{clock}.log"),
                                    args.suite_timeout, baseline[clock]))
                    r["passes"].append(p)
                    if p["killed"] and not args.both_clocks:
                        break
                if args.ctest:
                    rc, text, timed_out = tree.build("ctest", log(f"{m['id']}-ctest-build.log"),
                                                     args.build_timeout)
                    if rc != 0 or timed_out:
                        r["ctest"] = {"error": "test build failed"}
                    else:
                        c = ctest_run(tree, args.ctest_labels, log(f"{m['id']}-ctest.log"),
                                      args.ctest_timeout, 300)
                        c["new_failures"] = [t for t in c["failed"] if t not in baseline_failures]
                        r["ctest"] = c
            r["seconds"] = round(time.monotonic() - started, 1)
            print(f"    suite: {verdict_cell(r)}; ctest: {ctest_cell(r)} ({r['seconds']} s)",
                  flush=True)
    except KeyboardInterrupt:
        print("interrupted: the table below covers the mutants run so far", flush=True)

    notes = [f"Baseline failures tolerated on {clock} (not counted as kills): "
             f"{', '.join(sorted(fails))}." for clock, fails in baseline.items() if fails]
    text = table(results, notes)
    print()
    print(text)
    if args.out:
        args.out.write_text(text + "\n", encoding="utf-8")
    if args.json:
        args.json.write_text(json.dumps(results, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
