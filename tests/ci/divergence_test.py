#!/usr/bin/env python3
"""The GPU nightly's divergence report (ci/divergence.py) over the fixtures of tests/ci/divergence/:
an identical pair passes; a difference that a row of the runtime table explains passes and names
the row; an unexplained difference fails naming the file and the property; a run missing on one
side, different steps, a run failed on both runtimes fail; a skip on one side is not compared; a
table of the wrong shape is an input error (2). The project's own runtime table must read. With
a `peerconf` binary, what `peerconf run --verdicts` writes reads too (a mocked run set beside
itself passes).
Usage: divergence_test.py SOURCE_DIR [PEERCONF]"""
import copy
import json
import os
import subprocess
import sys
import tempfile
import unittest

SOURCE = os.path.abspath(sys.argv[1]) if len(sys.argv) > 1 else os.getcwd()
PEERCONF = sys.argv[2] if len(sys.argv) > 2 else None
SCRIPT = os.path.join(SOURCE, "ci", "divergence.py")
FIXTURES = os.path.join(SOURCE, "tests", "ci", "divergence")
TABLE = os.path.join(FIXTURES, "table.yaml")


def fixture(name):
    return os.path.join(FIXTURES, name)


def divergence(gpu, mock=None, table=TABLE, runtime="cuda", extra=()):
    """Runs the script; (exit code, stdout + stderr, the --json document or None)."""
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "divergence.json")
        proc = subprocess.run(
            [sys.executable, SCRIPT, "--table", table, "--runtime", runtime, "--pair", gpu,
             mock or fixture("mock.json"), "--json", out, "--root", SOURCE, *extra],
            capture_output=True, text=True, check=False)
        doc = None
        if os.path.exists(out):
            with open(out, encoding="utf-8") as f:
                doc = json.load(f)
        return proc.returncode, proc.stdout + proc.stderr, doc


def status_of(doc, file):
    return [e["status"] for e in doc["runs"] if e["file"] == file]


class Divergence(unittest.TestCase):
    def test_identical_pair_passes(self):
        code, text, doc = divergence(fixture("gpu-same.json"))
        self.assertEqual(code, 0, text)
        self.assertTrue(doc["passed"])
        self.assertEqual(doc["counts"], {"same": 3, "skipped": 1})
        self.assertNotIn("UNEXPLAINED", text)

    def test_explained_difference_passes_and_names_its_row(self):
        code, text, doc = divergence(fixture("gpu-explained.json"))
        self.assertEqual(code, 0, text)
        self.assertIn("C8: cuda fail, mock pass: explained by time-sliced-kernels: a time-sliced "
                      "data plane may run past its bound", text)
        entry = [e for e in doc["runs"] if e["file"].endswith("stop-mid-run.yaml")][0]
        self.assertEqual(entry["status"], "explained")
        self.assertEqual([d["explained_by"] for d in entry["differences"]],
                         ["time-sliced-kernels", "the differences above"])

    def test_a_row_explains_only_its_runtimes(self):
        code, text, _ = divergence(fixture("gpu-explained.json"), runtime="rocm")
        self.assertEqual(code, 1, text)
        self.assertIn("C8: rocm fail, mock pass: UNEXPLAINED", text)

    def test_unexplained_difference_fails_naming_file_and_property(self):
        code, text, doc = divergence(fixture("gpu-unexplained.json"))
        self.assertEqual(code, 1, text)
        self.assertRegex(text, r"scenarios/open/open-fails\.yaml .*UNEXPLAINED: C1, result")
        self.assertIn("C1: cuda fail, mock pass: UNEXPLAINED", text)
        # The control's C4 row explains rocm only.
        self.assertRegex(text, r"c4-unwritten-device-table\.yaml .*UNEXPLAINED: C4")
        self.assertFalse(doc["passed"])
        self.assertEqual(doc["counts"]["unexplained"], 2)

    def test_steps_missing_runs_and_one_sided_skips(self):
        code, text, doc = divergence(fixture("gpu-incomparable.json"))
        self.assertEqual(code, 1, text)
        self.assertIn("steps: cuda 500/100000, mock 1001/100000: UNEXPLAINED", text)
        self.assertEqual(status_of(doc, "scenarios/open/open-fails.yaml"), ["missing"])
        self.assertEqual(status_of(doc, "scenarios/controls/c4-unwritten-device-table.yaml"),
                         ["not compared"])
        self.assertEqual(status_of(doc, "scenarios/timing/sim-only.yaml"), ["skipped"])

    def test_a_row_explains_only_its_status_pairs(self):
        # A row with `statuses` explains a property only between those verdicts: n/a on the GPU
        # where the mock passes, never a failure on the GPU.
        with tempfile.TemporaryDirectory() as tmp:
            table = os.path.join(tmp, "table.yaml")
            with open(table, "w", encoding="utf-8") as f:
                f.write("rows:\n  - id: ledger\n    behaviour: x\n    mock: {result: kept}\n"
                        "    cuda: {result: none}\n    rocm: {result: unmeasured, why: x}\n"
                        "    differs: the mock keeps a ledger\n    explains:\n"
                        "      - {files: ['scenarios/*'], properties: [C3], runtimes: [cuda],\n"
                        "         statuses: [['n/a', 'pass']], why: no ledger on the GPU}\n")
            with open(fixture("mock.json"), encoding="utf-8") as f:
                mock = json.load(f)
            for gpu_status, want in (("n/a", 0), ("fail", 1)):
                gpu = copy.deepcopy(mock)
                gpu["runtime"] = "gpu"
                gpu["runs"][0]["properties"]["C3"] = gpu_status
                path = os.path.join(tmp, "gpu.json")
                with open(path, "w", encoding="utf-8") as f:
                    json.dump(gpu, f)
                code, text, _ = divergence(path, table=table)
                self.assertEqual(code, want, text)
                if want == 0:
                    self.assertIn("explained by ledger", text)
                else:
                    self.assertIn("UNEXPLAINED", text)

    def test_a_property_the_file_lets_fail_is_no_divergence(self):
        # `appear: may` (both runs list it in may_violations): a knock-on that fell one way on
        # the GPU and the other on the mock is the file's own; not listed, the same difference fails.
        with tempfile.TemporaryDirectory() as tmp:
            with open(fixture("mock.json"), encoding="utf-8") as f:
                mock = json.load(f)
            for listed, want in ((True, 0), (False, 1)):
                docs = {"mock": copy.deepcopy(mock), "gpu": copy.deepcopy(mock)}
                docs["gpu"]["runtime"] = "gpu"
                docs["gpu"]["runs"][0]["properties"]["C8"] = "fail"
                for doc in docs.values():
                    doc["runs"][0]["may_violations"] = ["C8"] if listed else []
                for side, doc in docs.items():
                    with open(os.path.join(tmp, f"{side}.json"), "w", encoding="utf-8") as f:
                        json.dump(doc, f)
                code, text, _ = divergence(os.path.join(tmp, "gpu.json"),
                                           os.path.join(tmp, "mock.json"))
                self.assertEqual(code, want, text)
                self.assertIn("appear: may" if listed else "UNEXPLAINED", text)

    def test_a_run_failed_on_both_runtimes_fails(self):
        with tempfile.TemporaryDirectory() as tmp:
            docs = {}
            for side in ("gpu", "mock"):
                with open(fixture(f"{'gpu-same' if side == 'gpu' else 'mock'}.json"),
                          encoding="utf-8") as f:
                    docs[side] = json.load(f)
                docs[side]["runs"][0]["properties"]["C3"] = "fail"
                docs[side]["runs"][0]["passed"] = False
                with open(os.path.join(tmp, f"{side}.json"), "w", encoding="utf-8") as f:
                    json.dump(docs[side], f)
            code, text, _ = divergence(os.path.join(tmp, "gpu.json"), os.path.join(tmp, "mock.json"))
        self.assertEqual(code, 1, text)
        self.assertIn("failed: failed on both runtimes", text)

    def test_input_errors(self):
        with tempfile.TemporaryDirectory() as tmp:
            bad = os.path.join(tmp, "table.yaml")
            with open(bad, "w", encoding="utf-8") as f:
                f.write("rows:\n  - id: a\n    behaviour: b\n    mock: {result: x}\n"
                        "    cuda: {result: x}\n    rocm: {result: unmeasured, why: w}\n"
                        "    explains: [{files: ['*'], properties: [C9], runtimes: [cuda], "
                        "why: w}]\n")
            code, text, _ = divergence(fixture("gpu-same.json"), table=bad)
            self.assertEqual(code, 2, text)
            self.assertIn("row 1 (a): explains 1: properties ['C9']", text)
            # The mock's file given as the GPU's.
            code, text, _ = divergence(fixture("mock.json"))
            self.assertEqual(code, 2, text)
            self.assertIn("a run on --runtime mock, expected gpu", text)
            # Different launchers: not comparable.
            with open(fixture("gpu-same.json"), encoding="utf-8") as f:
                other = json.load(f)
            other["ranks_per_gpu"] = 2
            path = os.path.join(tmp, "gpu.json")
            with open(path, "w", encoding="utf-8") as f:
                json.dump(other, f)
            code, text, _ = divergence(path)
            self.assertEqual(code, 2, text)
            self.assertIn("differ in ranks_per_gpu", text)

    def test_an_unmeasured_column(self):
        # A GPU's column may wait for its probe (with `why`), and then needs no `differs`; the
        # mock's never, and no column is unmeasured without `why`.
        row = ("rows:\n  - id: a\n    behaviour: b\n    mock: {result: %s}\n"
               "    cuda: {result: %s}\n    rocm: {result: unmeasured, why: w}\n")
        with tempfile.TemporaryDirectory() as tmp:
            table = os.path.join(tmp, "table.yaml")
            for mock, cuda, want, says in (("x", "unmeasured, why: not yet run", 0, None),
                                           ("x", "unmeasured", 2, "unmeasured cuda needs `why`"),
                                           ("unmeasured, why: w", "x", 2,
                                            "the mock may not be `unmeasured`")):
                with open(table, "w", encoding="utf-8") as f:
                    f.write(row % (mock, cuda))
                code, text, _ = divergence(fixture("gpu-same.json"), table=table)
                self.assertEqual(code, want, text)
                if says:
                    self.assertIn(says, text)

    def test_the_projects_runtime_table_reads(self):
        table = os.path.join(SOURCE, "tests", "conformance", "runtime_table.yaml")
        code, text, _ = divergence(fixture("gpu-same.json"), table=table)
        self.assertEqual(code, 0, text)

    @unittest.skipUnless(PEERCONF, "no peerconf binary given")
    def test_what_peerconf_writes_reads(self):
        with tempfile.TemporaryDirectory() as tmp:
            mock = os.path.join(tmp, "mock.json")
            files = [os.path.join("scenarios", "open", "open-fails-rank1-to-peer0.yaml"),
                     os.path.join("scenarios", "gpu", "dataplane", "control-epoch-ge.yaml")]
            proc = subprocess.run([PEERCONF, "run", *files, "--verdicts", mock], cwd=SOURCE,
                                  capture_output=True, text=True, check=False)
            self.assertEqual(proc.returncode, 0, proc.stdout + proc.stderr)
            with open(mock, encoding="utf-8") as f:
                doc = json.load(f)
            self.assertEqual(len(doc["runs"]), 2)
            gpu = copy.deepcopy(doc)
            gpu["runtime"] = "gpu"
            gpu_path = os.path.join(tmp, "gpu.json")
            with open(gpu_path, "w", encoding="utf-8") as f:
                json.dump(gpu, f)
            code, text, _ = divergence(gpu_path, mock)
            self.assertEqual(code, 0, text)
            # A control's property flipped on the "GPU" side is named.
            control = [r for r in gpu["runs"] if r["file"].endswith("control-epoch-ge.yaml")][0]
            control["properties"]["C7"] = "pass"
            control["passed"] = False
            with open(gpu_path, "w", encoding="utf-8") as f:
                json.dump(gpu, f)
            code, text, _ = divergence(gpu_path, mock)
            self.assertEqual(code, 1, text)
            self.assertRegex(text, r"control-epoch-ge\.yaml .*UNEXPLAINED: C7")


if __name__ == "__main__":
    unittest.main(argv=[sys.argv[0]])
