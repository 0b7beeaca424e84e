#!/usr/bin/env python3
"""Every module has its test file (issue 13): tests mirror the source.

  harness/<folder>/<file>.cc  ->  tests/<folder>/<file>_test.cc
  src/<file>.cc               ->  tests/src/<file>_test.cc
  src/<sub>/<file>.cc         ->  tests/src/<sub>/<file>_test.cc
  faults/<file>.cc            ->  tests/faults/<file>_test.cc

Lists every module without its test file and exits 1; exit 0 when none is missing.
Usage: ci/test_mirror.py [--root DIR]
"""
import argparse
import pathlib
import sys


def expected_test(rel: pathlib.PurePosixPath) -> pathlib.PurePosixPath:
    parts = rel.parts
    name = rel.stem + "_test.cc"
    if parts[0] == "harness":
        return pathlib.PurePosixPath("tests", *parts[1:-1], name)
    return pathlib.PurePosixPath("tests", *parts[:-1], name)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", default=pathlib.Path(__file__).resolve().parent.parent,
                        type=pathlib.Path, help="the repository (default: this script's)")
    args = parser.parse_args()
    root = args.root
    modules = sorted(p.relative_to(root).as_posix()
                     for top in ("src", "faults", "harness")
                     for p in (root / top).rglob("*.cc"))
    missing = []
    for module in modules:
        test = expected_test(pathlib.PurePosixPath(module))
        if not (root / test).is_file():
            missing.append(f"{module}: no {test}")
    if missing:
        print(f"test mirror: {len(missing)} of {len(modules)} modules have no test file:")
        print("\n".join("  " + m for m in missing))
        return 1
    print(f"test mirror: every one of {len(modules)} modules has its test file")
    return 0


if __name__ == "__main__":
    sys.exit(main())
