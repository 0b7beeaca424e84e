#!/usr/bin/env python3
"""Merges the ROW lines of peerconf_gpu_bench and torch_bench.py into one markdown table, then
checks the goals of issue 6 against them. Usage: merge_bench.py LOG... > table.md"""
import sys


def read_rows(paths):
    rows = []
    for path in paths:
        with open(path, errors="replace") as f:
            for line in f:
                if line.startswith("ROW\t"):
                    parts = line.rstrip("\n").split("\t")
                    if len(parts) >= 6:
                        rows.append({"metric": parts[1], "impl": parts[2], "size": parts[3],
                                     "us": float(parts[4]), "note": parts[5]})
    return rows


def find(rows, metric, impl_part, size=None):
    for r in rows:
        if r["metric"] == metric and impl_part in r["impl"] and (size is None or r["size"] == size):
            if r["us"] > 0:
                return r
    return None


def best(rows, metric, impl_part, size):
    found = [r for r in rows if r["metric"] == metric and impl_part in r["impl"]
             and r["size"] == size and r["us"] > 0]
    return min(found, key=lambda r: r["us"]) if found else None


def fmt(r):
    return "n/a" if r is None else f"{r['us']:.2f}"


def main():
    rows = read_rows(sys.argv[1:])
    order = ["meta", "construct", "construct-only", "close-only", "agree", "floor",
             "allreduce-eager", "allreduce-graph"]
    out = ["| metric | implementation | size | µs | how |", "| --- | --- | --- | ---: | --- |"]
    for metric in order:
        for r in rows:
            if r["metric"] != metric:
                continue
            us = "n/a" if r["us"] < 0 else ("" if metric == "meta" else f"{r['us']:.2f}")
            out.append(f"| {metric} | {r['impl']} | {r['size']} | {us} | {r['note']} |")
    print("\n".join(out))
    print()
    goals = [
        ("construct + close ≤ 0.8 × SymmetricMemory rendezvous",
         find(rows, "construct", "peerconf"), find(rows, "construct-only", "torch"), 0.8),
        ("tpAgree ≤ 0.1 × gloo MIN all-reduce",
         find(rows, "agree", "peerconf"), find(rows, "agree", "gloo"), 0.1),
        ("all-reduce 8 KiB, reference (tagged) layout, ≤ 0.5 × one_shot (eager vs eager)",
         best(rows, "allreduce-eager", "one-shot kernel", "8KiB"),
         find(rows, "allreduce-eager", "one_shot", "8KiB"), 0.5),
        ("all-reduce 8 KiB ≤ 0.5 × SymmetricMemory one_shot (eager vs eager)",
         best(rows, "allreduce-eager", "peerconf", "8KiB"),
         find(rows, "allreduce-eager", "one_shot", "8KiB"), 0.5),
        ("all-reduce 8 KiB ≤ 0.5 × SymmetricMemory one_shot (graphed vs graphed)",
         best(rows, "allreduce-graph", "peerconf", "8KiB"),
         find(rows, "allreduce-graph", "one_shot", "8KiB"), 0.5),
    ]
    print("| goal | ours (µs) | reference (µs) | ratio | verdict |")
    print("| --- | ---: | ---: | ---: | --- |")
    for name, ours, ref, limit in goals:
        if ours is None or ref is None:
            print(f"| {name} | {fmt(ours)} | {fmt(ref)} | n/a | not measured |")
            continue
        ratio = ours["us"] / ref["us"]
        verdict = "met" if ratio <= limit else "MISSED"
        print(f"| {name} | {ours['us']:.2f} ({ours['impl']}) | {ref['us']:.2f} | {ratio:.3f} | "
              f"{verdict} |")
    floor = find(rows, "floor", "NVLink")
    if floor:
        print(f"\nFloor: NVLink flag round trip {floor['us']:.2f} µs.")


if __name__ == "__main__":
    main()
