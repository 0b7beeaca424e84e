#!/usr/bin/env python3
"""Prints, for `ctest -I 0,0,0,LIST`, the numbers of the tests of a build that a sanitizer test
preset does not run: what CI's plain ctest stage still has to run when its sanitizer stages run
the rest (ci/test.sh; tests/CMakeLists.txt, PEERCONF_PLAIN_SANITIZED_TESTS).

The sanitizer preset's filter is read from CMakePresets.json (its testPresets entry: include
label, exclude label, exclude name), never copied here, and applied as ctest applies it: a test is
the sanitizer's when one of its labels matches the include regex, none matches the exclude regex
and its name does not match the excluded names. A test labelled `plain` is always printed (its
checks hold only unsanitized). Exit 0 and an empty line when nothing is left.

Usage: ci/unsanitized_tests.py [--preset ci] [--sanitizer asan] [--run [CTEST ARGS...]]
  --run  runs `ctest --preset PRESET -I 0,0,0,LIST CTEST ARGS...` instead of printing LIST
"""
import argparse
import json
import os
import pathlib
import re
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent


def sanitizer_filter(name):
    presets = json.loads((ROOT / "CMakePresets.json").read_text())
    for preset in presets.get("testPresets", []):
        if preset["name"] == name:
            f = preset.get("filter", {})
            return (f.get("include", {}).get("label"), f.get("exclude", {}).get("label"),
                    f.get("exclude", {}).get("name"))
    sys.exit(f"ci/unsanitized_tests.py: no test preset {name!r} in CMakePresets.json")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--preset", default="ci", help="the build's test preset (default ci)")
    parser.add_argument("--sanitizer", default="asan",
                        help="the sanitizer test preset whose tests to leave out (default asan)")
    parser.add_argument("--run", nargs=argparse.REMAINDER,
                        help="run ctest on them, with these arguments")
    args = parser.parse_args()
    include, exclude, exclude_name = sanitizer_filter(args.sanitizer)
    listing = subprocess.run(["ctest", "--preset", args.preset, "-N", "--show-only=json-v1"],
                             cwd=ROOT, capture_output=True, text=True, check=True).stdout
    numbers = []
    for number, test in enumerate(json.loads(listing)["tests"], start=1):
        labels = next((p["value"] for p in test.get("properties", []) if p["name"] == "LABELS"),
                      [])
        sanitized = ((include is None or any(re.search(include, l) for l in labels)) and
                     not (exclude and any(re.search(exclude, l) for l in labels)) and
                     not (exclude_name and re.search(exclude_name, test["name"])))
        if "plain" in labels or not sanitized:
            numbers.append(str(number))
    if args.run is None:
        print(",".join(numbers))
        return
    print(f"ci/unsanitized_tests.py: {len(numbers)} tests the {args.sanitizer} stage does not run",
          flush=True)
    if not numbers:
        return
    command = ["ctest", "--preset", args.preset, "-I", "0,0,0," + ",".join(numbers), *args.run]
    os.chdir(ROOT)
    os.execvp(command[0], command)


if __name__ == "__main__":
    main()
