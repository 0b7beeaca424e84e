#!/usr/bin/env python3
"""Where the reference one-shot's time goes (issue 18): the decompose-graph and decompose-eager
rows of peerconf_gpu_bench as markdown tables, one row a rung, one column a size, each cell the
rung's µs and its increment over the rung it builds on (N over N-1; "3f" over 3), and the rungs'
descriptions below.

Usage: decompose.py LOG... (writes markdown to stdout; exit 1 when the log has no decompose rows)
"""
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from merge_bench import read_rows  # noqa: E402
from plot_allreduce import size_bytes  # noqa: E402


def rung_key(name):
    """"3f push+fence" -> (3, "f"): the ladder's order."""
    m = re.match(r"(\d+)(\w?) ", name)
    return (int(m.group(1)), m.group(2)) if m else (99, name)


def base_of(name, names):
    """The rung `name` builds on: "3f ..." on 3, "N ..." on N-1 (its letterless rung)."""
    number, letter = rung_key(name)
    want = number if letter else number - 1
    for other in names:
        if rung_key(other) == (want, ""):
            return other
    return None


def table(rows, metric, title):
    data = {}
    for r in rows:
        if r["metric"] == metric:
            data.setdefault(r["impl"], {})[r["size"]] = r
    if not data:
        return []
    names = sorted(data, key=rung_key)
    sizes = sorted({s for d in data.values() for s in d}, key=size_bytes)
    out = [f"**{title}** (µs, slowest rank's mean; (+x): over the rung it builds on; "
           "`!`: a wait timed out)", "",
           "| rung | " + " | ".join(sizes) + " |", "| --- |" + " ---: |" * len(sizes)]
    for name in names:
        base = base_of(name, names)
        cells = []
        for size in sizes:
            r = data[name].get(size)
            if r is None:
                cells.append("")
                continue
            cell = f"{r['us']:.2f}"
            b = data[base].get(size) if base else None
            if b is not None:
                cell += f" ({r['us'] - b['us']:+.2f})"
            if "TIMED OUT" in r["note"]:
                cell += " !"
            cells.append(cell)
        out.append(f"| {name} | " + " | ".join(cells) + " |")
    return out + [""]


def main():
    rows = read_rows(sys.argv[1:])
    out = table(rows, "decompose-graph", "Graphed (100 calls a graph, 20 replays)")
    out += table(rows, "decompose-eager", "Eager (2000 calls)")
    if not out:
        print("decompose.py: no decompose rows in " + " ".join(sys.argv[1:]), file=sys.stderr)
        return 1
    floor = [r for r in rows if r["metric"] == "floor" and r["us"] > 0]
    if floor:
        out.append(f"NVLink flag round trip: {floor[-1]['us']:.2f} µs "
                   f"(one way {floor[-1]['us'] / 2:.2f} µs).")
        out.append("")
    out.append("Rungs (512 threads a block, 16 bytes a thread, a block a channel of 8 KiB; "
               "an x rung: 4 vectors a thread):")
    seen = {}
    for r in rows:
        if r["metric"] == "decompose-graph":
            seen.setdefault(r["impl"], r["note"].split("; ")[0])
    for name in sorted(seen, key=rung_key):
        out.append(f"- **{name}**: {seen[name]}")
    print("\n".join(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
