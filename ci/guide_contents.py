#!/usr/bin/env python3
"""The guide's table of contents (scenarios/README.md), made from its headings.

The contents sit between the lines `<!-- contents -->` and `<!-- /contents -->`: one line a `##`
heading and, indented, one a `###` heading, each linking to the anchor GitHub gives it (lower
case, punctuation dropped, spaces as dashes, a repeated anchor numbered -1, -2, ...). Every
intra-page link of the guide must name an anchor that exists.

  ci/guide_contents.py           check: exit 1, naming what differs, when the contents are stale
                                 or a link names no heading
  ci/guide_contents.py --write   rewrite the contents in place
"""
import argparse
import pathlib
import re
import sys

GUIDE = pathlib.Path(__file__).resolve().parent.parent / "scenarios" / "README.md"
START = "<!-- contents -->"
END = "<!-- /contents -->"


def anchor(title, seen):
    """GitHub's anchor for a heading: lower case, only letters, digits, spaces, - and _ kept."""
    text = re.sub(r"[^\w\- ]", "", title.lower().replace("`", ""))
    base = text.replace(" ", "-")
    count = seen.get(base, 0)
    seen[base] = count + 1
    return base if count == 0 else f"{base}-{count}"


def headings(lines):
    """(level, title, anchor) of every ## and ### heading outside code blocks; the page title and
    the contents' own heading are not listed."""
    out = []
    seen = {}
    fenced = False
    for line in lines:
        if line.startswith("```"):
            fenced = not fenced
            continue
        if fenced:
            continue
        match = re.match(r"^(#{1,6}) (.*)$", line)
        if not match:
            continue
        level, title = len(match.group(1)), match.group(2).strip()
        slug = anchor(title, seen)
        if level in (2, 3) and title != "Contents":
            out.append((level, title, slug))
    return out


def contents(lines):
    body = []
    for level, title, slug in headings(lines):
        body.append(("  " if level == 3 else "") + f"- [{title}](#{slug})")
    return body


def broken_links(lines):
    anchors = {slug for _, _, slug in headings(lines)}
    anchors.add("contents")
    broken = []
    fenced = False
    for number, line in enumerate(lines, 1):
        if line.startswith("```"):
            fenced = not fenced
            continue
        if fenced:
            continue
        for target in re.findall(r"\]\(#([^)]+)\)", line):
            if target not in anchors:
                broken.append(f"{GUIDE.name}:{number}: link to #{target}, which no heading has")
    return broken


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", action="store_true", help="rewrite the contents in place")
    parser.add_argument("guide", nargs="?", default=str(GUIDE))
    args = parser.parse_args()
    path = pathlib.Path(args.guide)
    lines = path.read_text().split("\n")
    try:
        start, end = lines.index(START), lines.index(END)
    except ValueError:
        print(f"{path}: the contents' markers {START} and {END} are missing", file=sys.stderr)
        return 1
    fresh = contents(lines)
    if args.write:
        path.write_text("\n".join(lines[: start + 1] + fresh + lines[end:]))
        return 0
    problems = []
    if lines[start + 1 : end] != fresh:
        problems.append(f"{path}: the contents differ from the headings: run ci/guide_contents.py "
                        "--write")
    problems += broken_links(lines)
    for problem in problems:
        print(problem, file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
