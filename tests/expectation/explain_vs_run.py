#!/usr/bin/env python3
"""`peerconf explain` and `peerconf run` agree on every scenario file (issue 25, item 4).

Runs `peerconf explain PATHS` once and `peerconf run PATHS --junit FILE` once, then compares
file by file:

  explain agrees      and the run passes   -> agree
  explain differs     and the run fails    -> agree, if explain predicted the failure: a run
                                              failing its coverage check needs a difference
                                              naming the coverage check, any other failure a
                                              difference of the expect: section
  explain agrees      and the run fails    -> DISAGREE (the reviewer was told all is well)
  explain differs     and the run passes   -> DISAGREE (a difference the run does not see)
  explain not derived, or the run skipped the file (another clock or launcher): not compared

Prints one line per disagreement and a closing count; exit 0 when none, 1 when one, 2 on a
usage or input error. --explain-output reads explain's report from a file instead of running it
(the negative control feeds it a report that calls a failing file "agrees").
Usage: explain_vs_run.py --peerconf BIN [--clock sim|real] [--explain-output FILE] PATH...
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET

HEADER = re.compile(r"^== (.+?) \(")
RESULT = re.compile(r"^result: (agrees|differs|not derived)")
COVERAGE = "a run fails its coverage check"


def parse_explain(text):
    """{file: {"result": ..., "differences": [...]}} from explain's report."""
    files = {}
    current = None
    for line in text.splitlines():
        header = HEADER.match(line)
        if header:
            current = {"result": None, "differences": []}
            files[header.group(1)] = current
            continue
        if current is None:
            continue
        if ": DIFFERS: " in line or ": the file has no expect: section" in line:
            current["differences"].append(line.strip())
        result = RESULT.match(line)
        if result:
            current["result"] = result.group(1)
    return files


def parse_junit(path):
    """{file: [failure titles]} from run's JUnit report (an empty list: passed)."""
    runs = {}
    for case in ET.parse(path).getroot().iter("testcase"):
        out = case.findtext("system-out") or ""
        first = out.splitlines()[0] if out else ""
        match = re.match(r"scenario (.+), seed \d+, launcher ", first)
        if not match:
            raise ValueError(f"{path}: a testcase without its scenario file: {first!r}")
        titles = []
        failure = case.find("failure")
        if failure is not None:
            # The story: the ranks' line, then per failure "TITLE: summary" at column 0.
            for line in (failure.text or "").splitlines():
                if line and not line.startswith(" ") and not line.startswith("ranks:"):
                    titles.append(line.split(": ", 1)[0])
        runs.setdefault(match.group(1), []).append(titles)
    return runs


def compare(explained, runs):
    disagreements = []
    agree = not_compared = 0
    for file, explanation in sorted(explained.items()):
        verdict = explanation["result"]
        if verdict not in ("agrees", "differs") or file not in runs:
            not_compared += 1
            continue
        for titles in runs[file]:
            coverage_predicted = any(COVERAGE in d for d in explanation["differences"])
            expect_predicted = any(COVERAGE not in d for d in explanation["differences"])
            if verdict == "agrees" and titles:
                disagreements.append(f"{file}: explain says agrees, run fails: "
                                     + ", ".join(titles))
            elif verdict == "differs" and not titles:
                disagreements.append(f"{file}: explain says differs, run passes: "
                                     + "; ".join(explanation["differences"]))
            elif verdict == "differs":
                missed = [t for t in titles
                          if not (coverage_predicted if t == "coverage" else expect_predicted)]
                if missed:
                    disagreements.append(f"{file}: explain differs, but did not predict the "
                                         f"run's {', '.join(missed)} failure: "
                                         + "; ".join(explanation["differences"]))
                else:
                    agree += 1
            else:
                agree += 1
    return agree, not_compared, disagreements


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--peerconf", required=True)
    parser.add_argument("--clock", default="sim")
    parser.add_argument("--explain-output", help="explain's report, read instead of running it")
    parser.add_argument("paths", nargs="+")
    args = parser.parse_args()

    if args.explain_output:
        with open(args.explain_output, encoding="utf-8") as f:
            explain_text = f.read()
    else:
        done = subprocess.run([args.peerconf, "explain", *args.paths], capture_output=True,
                              text=True, check=False)
        if done.returncode not in (0, 1):
            print(f"peerconf explain: exit {done.returncode}\n{done.stdout}{done.stderr}")
            return 2
        explain_text = done.stdout
    explained = parse_explain(explain_text)

    with tempfile.TemporaryDirectory() as tmp:
        junit = os.path.join(tmp, "junit.xml")
        done = subprocess.run([args.peerconf, "run", *args.paths, "--clock", args.clock,
                               "--junit", junit], capture_output=True, text=True, check=False)
        if done.returncode not in (0, 1) or not os.path.exists(junit):
            print(f"peerconf run: exit {done.returncode}\n{done.stdout}{done.stderr}")
            return 2
        runs = parse_junit(junit)

    missing = sorted(set(runs) - set(explained))
    for file in missing:
        print(f"{file}: run ran it, explain did not explain it")
    agree, not_compared, disagreements = compare(explained, runs)
    for line in disagreements:
        print("DISAGREE " + line)
    print(f"{len(explained)} files explained, {agree} agree with the run, "
          f"{len(disagreements)} disagree, {not_compared} not compared (not derived, or "
          f"skipped by the run)")
    if not explained:
        return 2
    return 1 if disagreements or missing else 0


if __name__ == "__main__":
    sys.exit(main())
