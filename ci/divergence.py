#!/usr/bin/env python3
"""The GPU nightly's divergence report: a GPU run's verdicts beside the mocked runtime's.

Each pair is two `peerconf run --verdicts FILE` outputs of the same files, launcher, seeds and
--ranks-per-gpu, one on `--runtime gpu`, one on `--runtime mock`. Every run (file, seed) is set
side by side: C1..C8, coverage and pass/fail. A difference is explained when a row of the runtime
table (tests/conformance/runtime_table.yaml) says so: one of its `explains` entries names the file
(an fnmatch glob from the repository root: `*` also crosses folders), the property (C1..C8,
coverage) and the GPU's runtime (cuda, rocm); the run's pass/fail may then differ too. Steps that
differ (a cap applied on one side only) make the runs incomparable: never explained.

Prints a text table (a line a run, the differences under it with the row that explains each, or
UNEXPLAINED) and a summary; --json writes the same as data. Exit status: 0 when every run is the
same on both runtimes and passed, or differs only as the table explains (with the mock's run
passing); 1 when a difference is unexplained, a run failed on the mocked runtime or on both, or a
run is missing on one side without a reason; 2 on a usage or input error (a table or verdicts file
that does not read, a table row of the wrong shape, two files of different launchers).

Usage: ci/divergence.py --table FILE --runtime cuda|rocm --pair GPU.json MOCK.json [--pair ...]
                        [--json OUT] [--root DIR]
"""
import argparse
import fnmatch
import json
import os
import pathlib
import sys

import yaml

PROPERTIES = [f"C{i}" for i in range(1, 9)]
STATUSES = ["pass", "fail", "n/a"]  # a property's verdict in a --verdicts file
COLUMNS = PROPERTIES + ["coverage", "result"]
GPU_RUNTIMES = ("cuda", "rocm")
LETTER = {"pass": "P", "fail": "F", "n/a": "-", None: "?"}


class InputError(Exception):
    """An input that cannot be read as it must be: exit 2 with this message."""


def _require(condition, message):
    if not condition:
        raise InputError(message)


def load_table(path):
    """The table's rows, checked for the shape the brief of runtime_table.yaml gives."""
    try:
        with open(path, encoding="utf-8") as f:
            doc = yaml.safe_load(f)
    except (OSError, yaml.YAMLError) as e:
        raise InputError(f"{path}: {e}") from e
    _require(isinstance(doc, dict) and isinstance(doc.get("rows"), list),
             f"{path}: needs a top-level `rows:` list")
    seen = set()
    rows = []
    for i, row in enumerate(doc["rows"]):
        where = f"{path}: row {i + 1}"
        _require(isinstance(row, dict), f"{where}: must be a mapping")
        rid = row.get("id")
        _require(isinstance(rid, str) and rid, f"{where}: needs an `id`")
        where = f"{path}: row {i + 1} ({rid})"
        _require(rid not in seen, f"{where}: the id is used twice")
        seen.add(rid)
        unknown = set(row) - {"id", "behaviour", "mock", "cuda", "rocm", "differs", "explains"}
        _require(not unknown, f"{where}: unknown key(s) {sorted(unknown)}")
        _require(isinstance(row.get("behaviour"), str), f"{where}: needs a one-line `behaviour`")
        for runtime in ("mock", "cuda", "rocm"):
            entry = row.get(runtime)
            _require(isinstance(entry, dict) and isinstance(entry.get("result"), str),
                     f"{where}: `{runtime}` needs a `result`")
        # The mock's column is always measured (CI probes it); a GPU's may wait for its probe to
        # run there (`why` says so), and is then compared with nothing.
        _require(row["mock"]["result"] != "unmeasured", f"{where}: the mock may not be `unmeasured`")
        # A row whose runtimes answer differently says why (and `explains` what it may change).
        _require(row["mock"]["result"] == row["cuda"]["result"] or
                 row["cuda"]["result"] == "unmeasured" or isinstance(row.get("differs"), str),
                 f"{where}: mock and cuda differ: the row needs `differs` (why)")
        for runtime in GPU_RUNTIMES:
            if row[runtime]["result"] == "unmeasured":
                _require(isinstance(row[runtime].get("why"), str),
                         f"{where}: unmeasured {runtime} needs `why`")
        explains = row.get("explains", [])
        _require(isinstance(explains, list), f"{where}: `explains` must be a list")
        for j, e in enumerate(explains):
            at = f"{where}: explains {j + 1}"
            _require(isinstance(e, dict), f"{at}: must be a mapping")
            unknown = set(e) - {"files", "properties", "runtimes", "statuses", "why"}
            _require(not unknown, f"{at}: unknown key(s) {sorted(unknown)}")
            for key in ("files", "properties", "runtimes"):
                _require(isinstance(e.get(key), list) and e[key] and
                         all(isinstance(v, str) for v in e[key]), f"{at}: `{key}` must be a list")
            bad = [p for p in e["properties"] if p not in PROPERTIES + ["coverage"]]
            _require(not bad, f"{at}: properties {bad}: C1..C8 or coverage")
            bad = [r for r in e["runtimes"] if r not in GPU_RUNTIMES]
            _require(not bad, f"{at}: runtimes {bad}: cuda or rocm")
            # Optional: only these (GPU verdict, mock verdict) pairs of a property, e.g. [n/a, pass].
            statuses = e.get("statuses")
            _require(statuses is None or (isinstance(statuses, list) and all(
                isinstance(p, list) and len(p) == 2 and all(v in STATUSES for v in p)
                for p in statuses)), f"{at}: `statuses` is a list of [gpu, mock] pairs of {STATUSES}")
            _require(isinstance(e.get("why"), str) and e["why"], f"{at}: needs a one-line `why`")
        rows.append(row)
    return rows


def load_verdicts(path, runtime):
    """One `peerconf run --verdicts` file, checked to be of `runtime` (gpu | mock)."""
    try:
        with open(path, encoding="utf-8") as f:
            doc = json.load(f)
    except (OSError, ValueError) as e:
        raise InputError(f"{path}: {e}") from e
    _require(isinstance(doc, dict) and doc.get("format") == "peerconf-verdicts/1",
             f"{path}: not a `peerconf run --verdicts` file (format peerconf-verdicts/1)")
    _require(doc.get("runtime") == runtime,
             f"{path}: a run on --runtime {doc.get('runtime')}, expected {runtime}")
    return doc


def relative(file, root):
    """A run's file as the table's globs name it: from the repository root, without ./."""
    path = pathlib.Path(file)
    if path.is_absolute():
        try:
            return path.resolve().relative_to(root.resolve()).as_posix()
        except ValueError:
            return path.as_posix()
    text = path.as_posix()
    return text[2:] if text.startswith("./") else text


def columns_of(run):
    """C1..C8, coverage and result of one run (None where the run has no such verdict)."""
    out = {p: run.get("properties", {}).get(p) for p in PROPERTIES}
    out["coverage"] = run.get("coverage")
    out["result"] = "pass" if run.get("passed") else "fail"
    return out


def explaining_row(rows, file, prop, runtime, gpu_status=None, mock_status=None):
    """(id, why) of the first row that explains `prop` differing on `file` under `runtime`, from
    `gpu_status` to `mock_status` (a row's `statuses`, when it has any, must list that pair)."""
    for row in rows:
        for e in row.get("explains", []):
            if (prop in e["properties"] and runtime in e["runtimes"] and
                    any(fnmatch.fnmatchcase(file, glob) for glob in e["files"]) and
                    ("statuses" not in e or [gpu_status, mock_status] in e["statuses"])):
                return row["id"], e["why"]
    return None


def by_run(doc, root):
    runs = {}
    for run in doc.get("runs", []):
        runs[(relative(run["file"], root), run.get("seed"))] = run
    skipped = {relative(s["file"], root): s.get("reason", "") for s in doc.get("skipped", [])}
    return runs, skipped


def steps_text(run):
    if run is None or "dataplane_steps" not in run:
        return "-"
    if "dataplane_file_steps" in run:
        return f"{run['dataplane_steps']}/{run['dataplane_file_steps']}"
    return str(run["dataplane_steps"])


def compare_pair(name, gpu_doc, mock_doc, rows, runtime, root):
    """Every run of one pair, side by side: a list of entries (dicts, as --json writes them)."""
    for key in ("launcher", "ranks_per_gpu"):
        _require(gpu_doc.get(key) == mock_doc.get(key),
                 f"{name}: the two runs differ in {key} ({gpu_doc.get(key)} on the GPU, "
                 f"{mock_doc.get(key)} on the mock): not comparable")
    gpu_runs, gpu_skipped = by_run(gpu_doc, root)
    mock_runs, mock_skipped = by_run(mock_doc, root)
    entries = []
    ran = {file for file, _ in set(gpu_runs) | set(mock_runs)}
    for file in sorted(set(gpu_skipped) & set(mock_skipped) - ran):
        entries.append({"pair": name, "file": file, "seed": None, "steps": "-", runtime: None,
                        "mock": None, "differences": [], "status": "skipped",
                        "note": f"on both: {gpu_skipped[file]}"})
    for key in sorted(set(gpu_runs) | set(mock_runs), key=lambda k: (k[0], k[1] or 0)):
        file, seed = key
        gpu, mock = gpu_runs.get(key), mock_runs.get(key)
        entry = {"pair": name, "file": file, "seed": seed, "steps": steps_text(gpu or mock),
                 runtime: columns_of(gpu) if gpu else None,
                 "mock": columns_of(mock) if mock else None, "differences": []}
        if gpu is None or mock is None:
            side, other_skipped = (runtime, gpu_skipped) if gpu is None else ("mock", mock_skipped)
            if file in other_skipped:
                entry["status"] = "not compared"
                entry["note"] = f"skipped on {side}: {other_skipped[file]}"
            else:
                entry["status"] = "missing"
                entry["note"] = f"no run on {side} and no reason given"
            entries.append(entry)
            continue
        g, m = entry[runtime], entry["mock"]
        if steps_text(gpu) != steps_text(mock):
            entry["differences"].append({"property": "steps", runtime: steps_text(gpu),
                                         "mock": steps_text(mock), "explained_by": None,
                                         "why": "the runs did not run the same steps"})
        # A knock-on the file lets fail or pass (`appear: may`, listed by both runs): its verdict
        # may fall either way on either runtime, so a difference there is the file's own.
        may = set(gpu.get("may_violations", [])) & set(mock.get("may_violations", []))
        for prop in PROPERTIES + ["coverage"]:
            if g[prop] == m[prop]:
                continue
            found = explaining_row(rows, file, prop, runtime, g[prop], m[prop])
            if not found and prop in may:
                found = ("appear: may", "the file lets it fail (appear: may) or pass")
            entry["differences"].append({"property": prop, runtime: g[prop], "mock": m[prop],
                                         "explained_by": found[0] if found else None,
                                         "why": found[1] if found else None})
        if g["result"] != m["result"]:
            others = [d for d in entry["differences"] if d["property"] != "steps"]
            explained = bool(others) and all(d["explained_by"] for d in others)
            entry["differences"].append({
                "property": "result", runtime: g["result"], "mock": m["result"],
                "explained_by": "the differences above" if explained else None,
                "why": None if explained else "pass/fail differs with no property that explains it"})
        unexplained = [d for d in entry["differences"] if not d["explained_by"]]
        if unexplained:
            entry["status"] = "unexplained"
        elif m["result"] == "fail":
            entry["status"] = "failed"
            entry["note"] = ("failed on both runtimes" if g["result"] == "fail" else
                             "failed on the mocked runtime")
        elif entry["differences"]:
            entry["status"] = "explained"
        else:
            entry["status"] = "same"
        entries.append(entry)
    entries.sort(key=lambda e: (e["file"], e["seed"] or 0))
    return entries


def cell(entry, prop, runtime):
    g = entry[runtime][prop] if entry[runtime] else None
    m = entry["mock"][prop] if entry["mock"] else None
    if prop == "result":
        word = {"pass": "pass", "fail": "FAIL", None: "?"}
        return word[g] if g == m else f"{word[g]}/{word[m]}"
    return LETTER.get(g, "?") if g == m else f"{LETTER.get(g, '?')}/{LETTER.get(m, '?')}"


def render(entries, runtime):
    """The text table: a line a run, then its differences."""
    width = max([len(e["file"]) for e in entries] + [4])
    head = (f"{'file':<{width}} {'seed':>5} {'steps':>14} " +
            " ".join(f"{p:<3}" for p in PROPERTIES) + f" {'cov':<3} {'result':<9} verdict")
    lines = [f"cells: {runtime} and mock alike (P pass, F fail, - n/a), or {runtime}/mock",
             head]
    for e in entries:
        props = " ".join(f"{cell(e, p, runtime):<3}" for p in PROPERTIES)
        verdict = e["status"] + (f": {e['note']}" if e.get("note") else "")
        if e["status"] == "unexplained":
            verdict = "UNEXPLAINED: " + ", ".join(
                d["property"] for d in e["differences"] if not d["explained_by"])
        seed = "-" if e["seed"] is None else str(e["seed"])
        if e[runtime] is None or e["mock"] is None:
            lines.append(f"{e['file']:<{width}} {seed:>5} {e['steps']:>14} {verdict}")
            continue
        lines.append(f"{e['file']:<{width}} {seed:>5} {e['steps']:>14} {props} "
                     f"{cell(e, 'coverage', runtime):<3} {cell(e, 'result', runtime):<9} {verdict}")
        for d in e["differences"]:
            said = (f"explained by {d['explained_by']}" + (f": {d['why']}" if d["why"] else "")
                    if d["explained_by"] else f"UNEXPLAINED ({d['why'] or 'no row of the table'})")
            lines.append(f"    {d['property']}: {runtime} {d[runtime]}, mock {d['mock']}: {said}")
    return "\n".join(lines)


def summarize(entries):
    counts = {}
    for e in entries:
        counts[e["status"]] = counts.get(e["status"], 0) + 1
    return counts


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--table", required=True, help="the runtime table (YAML)")
    parser.add_argument("--runtime", required=True, choices=GPU_RUNTIMES,
                        help="the GPU side's runtime, as the table's `runtimes:` name it")
    parser.add_argument("--pair", nargs=2, action="append", required=True,
                        metavar=("GPU_JSON", "MOCK_JSON"),
                        help="verdicts of the GPU run and of the mocked run (repeatable)")
    parser.add_argument("--json", help="write the comparison here as JSON")
    parser.add_argument("--root", default=pathlib.Path(__file__).resolve().parent.parent,
                        type=pathlib.Path, help="the repository root the globs start at")
    args = parser.parse_args(argv)
    try:
        rows = load_table(args.table)
        entries = []
        for gpu_path, mock_path in args.pair:
            gpu_doc = load_verdicts(gpu_path, "gpu")
            mock_doc = load_verdicts(mock_path, "mock")
            entries += compare_pair(os.path.basename(gpu_path), gpu_doc, mock_doc, rows,
                                    args.runtime, args.root)
    except InputError as e:
        print(f"divergence: {e}", file=sys.stderr)
        return 2
    counts = summarize(entries)
    bad = sum(counts.get(s, 0) for s in ("unexplained", "failed", "missing"))
    print(render(entries, args.runtime))
    summary = (f"divergence: {len(entries)} row(s): {counts.get('same', 0)} the same, "
               f"{counts.get('explained', 0)} explained by the table, "
               f"{counts.get('unexplained', 0)} unexplained, {counts.get('failed', 0)} failed "
               f"on the mock or on both, {counts.get('missing', 0)} missing on one side, "
               f"{counts.get('not compared', 0)} not compared (skipped on one side), "
               f"{counts.get('skipped', 0)} skipped on both")
    print(summary)
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump({"format": "peerconf-divergence/1", "runtime": args.runtime,
                       "table": str(args.table), "counts": counts, "passed": bad == 0,
                       "runs": entries}, f, indent=1)
            f.write("\n")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
