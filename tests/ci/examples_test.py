#!/usr/bin/env python3
"""Checks the CI examples under ci/examples/ (issue 16 item 6) against what ci/nightly-gpu does.

  examples_test.py github ROOT   the GitHub Actions workflow
  examples_test.py gitlab ROOT   the GitLab CI job

github: the third-party validator (npm @action-validator/cli, installed by ci/install-deps.sh into
build/tools; PEERCONF_ACTION_VALIDATOR names another) must accept the workflow; it runs nightly
and on demand on a self-hosted GPU runner with a timeout; every `run:` line that calls a repo
script names an existing executable file, and the workflow calls ci/nightly-build.sh and
ci/nightly-gpu; NVLink multicast is off (the variables ci/nightly-gpu itself exports, with the same
values); an upload-artifact step runs `if: always()` and its paths are exactly the files
ci/nightly-gpu writes: each path matches one of them, each of them is matched; a job runs on a
one-GPU runner (label gpu-1: ci/nightly-gpu runs on one GPU, its ranks sharing it).
gitlab: the job parses (PyYAML), runs on tagged runners from schedules, its script lines name
existing executable repo scripts, multicast is off, `artifacts: when: always`, its paths are the
nightly's files as above and `reports: junit:` matches exactly the nightly's JUnit files; a job
runs on a one-GPU runner (tag gpu-1).

What ci/nightly-gpu writes is read from the script: its default --out (or the --out the job
passes), every "$out/NAME" it writes and every "$out/NAME" of a repo script it hands "$out" to.

Each mode then runs its negative controls: broken copies of the real file (a misspelled key, a
missing or non-executable script, a wrong artifact or JUnit path, multicast on, ...) that must
each be caught with the expected finding.

Exit 0: pass. 1: a finding or a control not caught. 77 (skipped): the validator or PyYAML is
missing and PEERCONF_REQUIRE_CI_EXAMPLES is not 1 (with it, a missing tool fails the test).
"""

import fnmatch
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile

try:
    import yaml
except ImportError:  # reported in main(): skipped or failed
    yaml = None

SKIP = 77
NIGHTLY = "ci/nightly-gpu"
BUILD = "ci/nightly-build.sh"
GITHUB = "ci/examples/github-actions-nightly-gpu.yml"
GITLAB = "ci/examples/gitlab-ci-nightly-gpu.yml"
# The runner label (GitHub) or tag (GitLab) of a one-GPU runner: the nightly runs there too.
ONE_GPU = "gpu-1"


class Nightly:
    """What ci/nightly-gpu writes and exports, read from the script."""

    def __init__(self, root):
        text = read(os.path.join(root, NIGHTLY))
        default = re.search(r"^out=(\S+)$", text, re.M)
        self.default_out = default.group(1) if default else None
        self.files = set(re.findall(r'"\$out/([\w.-]+)"', text))
        self.junit = set(re.findall(r'--junit "\$out/([\w.-]+)"', text))
        # Repo scripts the nightly hands "$out" to write into it (the benchmark's runner).
        for script in re.findall(r'(ci/[\w./-]+)\s[^\n]*"\$out"', text):
            self.files |= set(re.findall(r'"\$out/([\w.-]+)"', read(os.path.join(root, script))))
        exports = re.search(r"^export ([^\n]*NCCL_NVLS_ENABLE=[^\n]*)$", text, re.M)
        self.multicast = dict(w.split("=", 1) for w in exports.group(1).split()) if exports else {}

    def problems(self):
        """Why what was read cannot be right (the reading itself is checked)."""
        found = []
        if not self.default_out:
            found.append(f"{NIGHTLY}: no default out=DIR line")
        if len(self.junit) < 1 or not self.junit <= self.files:
            found.append(f"{NIGHTLY}: no --junit \"$out/...\" file read ({sorted(self.junit)})")
        if "trace.json" not in self.files or not any(f.endswith(".log") for f in self.files):
            found.append(f"{NIGHTLY}: no trace.json or logs read ({sorted(self.files)})")
        if set(self.multicast) != {"NCCL_NVLS_ENABLE", "TORCH_SYMM_MEM_DISABLE_MULTICAST",
                                   "NVSHMEM_DISABLE_NVLS"}:
            found.append(f"{NIGHTLY}: multicast export line not read ({self.multicast})")
        return found


def read(path):
    with open(path, encoding="utf-8") as f:
        return f.read()


SEPARATORS = {";", "&&", "||", "|", "&", "(", ")", "{", "}", "!", "if", "then", "else", "elif",
              "do", "while", "until", "time"}
PREFIXES = {"env", "sudo", "exec", "nohup", "command"}


def commands(script):
    """The argv of every simple command in shell text (lexed by shlex: words, operators)."""
    script = re.sub(r"\\\n", " ", script)
    found = []
    for line in script.splitlines():
        lexer = shlex.shlex(line, posix=True, punctuation_chars=True)
        lexer.whitespace_split = True
        argv = None
        for word in lexer:
            if word in SEPARATORS or word in ("fi", "done"):
                argv = None
                continue
            if argv is None:
                if re.match(r"^[A-Za-z_]\w*=", word) or word in PREFIXES:
                    continue
                argv = [word]
                found.append(argv)
            else:
                argv.append(word)
    return found


def script_findings(where, lines, root, required):
    """Repo scripts named as commands must exist and be executable; REQUIRED ones must be run."""
    found = []
    called = set()
    for argv in (argv for line in lines for argv in commands(line)):
        word = argv[0]
        if "/" not in word or word.startswith(("/", "$", "~")):
            continue
        path = os.path.normpath(word)
        called.add(path)
        full = os.path.join(root, path)
        if not os.path.isfile(full):
            found.append(f"{where}: script {word} does not exist in the repository")
        elif not os.access(full, os.X_OK):
            found.append(f"{where}: script {word} is not executable")
    for script in required:
        if script not in called:
            found.append(f"{where}: does not run {script}")
    return found


def out_dir(lines, nightly):
    """The --out the job passes to ci/nightly-gpu, else the script's default."""
    for argv in (argv for line in lines for argv in commands(line)):
        if os.path.normpath(argv[0]) == NIGHTLY and "--out" in argv[:-1]:
            return os.path.normpath(argv[argv.index("--out") + 1])
    return nightly.default_out


def artifact_findings(where, globs, out, nightly):
    """Each path matches a file the nightly writes under OUT, and each such file is matched."""
    found = []
    written = {f"{out}/{name}" for name in nightly.files}
    if not globs:
        return [f"{where}: no artifact paths"]
    for pattern in globs:
        if not any(fnmatch.fnmatchcase(path, pattern) for path in written):
            found.append(f"{where}: artifact path {pattern} matches no file ci/nightly-gpu writes "
                         f"(it writes {sorted(written)})")
    for path in sorted(written):
        if not any(fnmatch.fnmatchcase(path, pattern) for pattern in globs):
            found.append(f"{where}: {path} (written by ci/nightly-gpu) is not uploaded")
    return found


def junit_findings(where, globs, out, nightly):
    """The JUnit report paths match exactly the nightly's JUnit files."""
    written = {f"{out}/{name}" for name in nightly.files}
    junit = {f"{out}/{name}" for name in nightly.junit}
    matched = {path for path in written for g in globs if fnmatch.fnmatchcase(path, g)}
    if matched != junit:
        return [f"{where}: JUnit report paths {globs} match {sorted(matched)}, not the nightly's "
                f"JUnit files {sorted(junit)}"]
    return []


def multicast_findings(where, env, nightly):
    found = []
    for name, value in sorted(nightly.multicast.items()):
        if str(env.get(name)) != value:
            found.append(f"{where}: {name} must be {value} (NVLink multicast off), is "
                         f"{env.get(name)!r}")
    return found


def load(path):
    """(document, finding)."""
    try:
        doc = yaml.safe_load(read(path))
    except yaml.YAMLError as e:
        return None, f"{path}: not YAML: {e}"
    if not isinstance(doc, dict):
        return None, f"{path}: not a mapping"
    return doc, None


def check_github(path, root, nightly, validator):
    """Findings: (kind, message), kind 'validator' for the third-party validator's."""
    found = []
    if validator:
        run = subprocess.run([validator, path], capture_output=True, text=True, timeout=60)
        if run.returncode != 0:
            found.append(("validator", f"action-validator rejects {path} (exit {run.returncode}):\n"
                          + run.stdout + run.stderr))
    doc, error = load(path)
    if error:
        return found + [("yaml", error)]
    own = []
    on = doc.get("on", doc.get(True))  # YAML 1.1 reads the key `on` as true
    on = on if isinstance(on, dict) else {}
    if "schedule" not in on or "workflow_dispatch" not in on:
        own.append("not triggered by both schedule and workflow_dispatch")
    for name, job in (doc.get("jobs") or {}).items():
        where = f"job {name}"
        runs_on = job.get("runs-on")
        runs_on = runs_on if isinstance(runs_on, list) else [runs_on]
        if "self-hosted" not in runs_on or "gpu" not in runs_on:
            own.append(f"{where}: runs-on {runs_on} is not a self-hosted GPU runner")
        if not isinstance(job.get("timeout-minutes"), int) or job["timeout-minutes"] <= 0:
            own.append(f"{where}: no timeout-minutes")
        steps = job.get("steps") or []
        runs = [step["run"] for step in steps if "run" in step]
        own += script_findings(where, runs, root, [BUILD, NIGHTLY])
        nightly_steps = [s for s in steps if "run" in s and any(
            os.path.normpath(argv[0]) == NIGHTLY for argv in commands(s["run"]))]
        for step in nightly_steps:
            env = {**(doc.get("env") or {}), **(job.get("env") or {}), **(step.get("env") or {})}
            own += multicast_findings(f"{where}, step {step.get('name')}", env, nightly)
        uploads = [s for s in steps if str(s.get("uses", "")).startswith("actions/upload-artifact@")]
        if not uploads:
            own.append(f"{where}: no actions/upload-artifact step")
        out = out_dir(runs, nightly)
        for step in uploads:
            step_where = f"{where}, step {step.get('name')}"
            if "always()" not in str(step.get("if", "")):
                own.append(f"{step_where}: not `if: always()` (a failed nightly uploads nothing)")
            globs = [line.strip() for line in str((step.get("with") or {}).get("path", ""))
                     .splitlines() if line.strip()]
            own += artifact_findings(step_where, globs, out, nightly)
    if not doc.get("jobs"):
        own.append("no jobs")
    if not any(ONE_GPU in (job.get("runs-on") or []) for job in (doc.get("jobs") or {}).values()):
        own.append(f"no job for a one-GPU runner (runs-on with the label {ONE_GPU})")
    return found + [("check", f"{path}: {message}") for message in own]


GITLAB_KEYWORDS = {"stages", "variables", "default", "include", "workflow", "image", "services",
                   "before_script", "after_script", "cache"}


def check_gitlab(path, root, nightly):
    doc, error = load(path)
    if error:
        return [("yaml", error)]
    own = []
    jobs = {k: v for k, v in doc.items() if k not in GITLAB_KEYWORDS and not str(k).startswith(".")}
    if not jobs:
        own.append("no jobs")
    for name, job in jobs.items():
        where = f"job {name}"
        if not isinstance(job, dict):
            own.append(f"{where}: not a mapping")
            continue
        if not job.get("tags"):
            own.append(f"{where}: no tags (any shared runner, without GPUs, could take it)")
        rules = [str(rule.get("if", "")) for rule in job.get("rules") or [] if isinstance(rule, dict)]
        if not any(re.search(r'\$CI_PIPELINE_SOURCE\s*==\s*"schedule"', r) for r in rules):
            own.append(f"{where}: no rule for pipeline schedules")
        if not job.get("timeout"):
            own.append(f"{where}: no timeout")
        lines = []
        for key in ("before_script", "script", "after_script"):
            value = job.get(key, (doc.get("default") or {}).get(key, doc.get(key, [])))
            lines += value if isinstance(value, list) else [value]
        own += script_findings(where, [str(line) for line in lines], root, [BUILD, NIGHTLY])
        env = {**(doc.get("variables") or {}), **(job.get("variables") or {})}
        own += multicast_findings(where, env, nightly)
        artifacts = job.get("artifacts") or {}
        if artifacts.get("when") != "always":
            own.append(f"{where}: artifacts are not `when: always` (a failed nightly keeps nothing)")
        out = out_dir([str(line) for line in lines], nightly)
        own += artifact_findings(where, list(artifacts.get("paths") or []), out, nightly)
        junit = (artifacts.get("reports") or {}).get("junit")
        junit = junit if isinstance(junit, list) else [junit] if junit else []
        own += junit_findings(where, junit, out, nightly)
    if not any(ONE_GPU in (job.get("tags") or []) for job in jobs.values() if isinstance(job, dict)):
        own.append(f"no job for a one-GPU runner (tags with {ONE_GPU})")
    return [("check", f"{path}: {message}") for message in own]


# Negative controls: (what, text replaced, replacement, kind of finding, text in the finding).
GITHUB_CONTROLS = [
    ("misspelled key", "timeout-minutes: 120", "timeout-minute: 120", "validator",
     "timeout-minute"),
    ("misspelled top-level key", "permissions:", "permission:", "validator", "permission"),
    ("missing script", "run: ci/nightly-gpu --prebuilt", "run: ci/nightly-gpu-missing --prebuilt",
     "check", "ci/nightly-gpu-missing does not exist"),
    ("script not executable", "run: ci/install-deps.sh", "run: ci/nightly-lib.sh", "check",
     "ci/nightly-lib.sh is not executable"),
    ("artifact path the nightly does not write", "out/nightly-gpu/trace*.json",
     "out/nightly-gpu/traces.json", "check", "traces.json matches no file"),
    ("a file the nightly writes not uploaded", "            out/nightly-gpu/*.log\n", "",
     "check", "suite.log (written by ci/nightly-gpu) is not uploaded"),
    ("--out elsewhere", "ci/nightly-gpu --prebuilt", "ci/nightly-gpu --out out/x --prebuilt",
     "check", "out/x/suite.log (written by ci/nightly-gpu) is not uploaded"),
    ("multicast on", 'NVSHMEM_DISABLE_NVLS: "1"', 'NVSHMEM_DISABLE_NVLS: "0"', "check",
     "NVSHMEM_DISABLE_NVLS must be 1"),
    ("upload only on success", "        if: always()\n", "", "check", "not `if: always()`"),
    ("no schedule", '  schedule:\n    - cron: "17 2 * * *"\n', "", "check",
     "not triggered by both schedule and workflow_dispatch"),
    ("no one-GPU job", "runs-on: [self-hosted, linux, gpu, gpu-1]",
     "runs-on: [self-hosted, linux, gpu]", "check", "no job for a one-GPU runner"),
]
GITLAB_CONTROLS = [
    ("not YAML", "tags: [linux, gpu]", "tags: [linux, gpu", "yaml", "not YAML"),
    ("missing script", "- ci/nightly-build.sh --runtime", "- ci/nightly-buld.sh --runtime",
     "check", "ci/nightly-buld.sh does not exist"),
    ("script not executable", "then ci/install-deps.sh;", "then ci/nightly-lib.sh;", "check",
     "ci/nightly-lib.sh is not executable"),
    ("JUnit path the nightly does not write", "junit: out/nightly-gpu/junit-*.xml",
     "junit: out/nightly-gpu/junit.xml", "check", "JUnit report paths"),
    ("JUnit path matching logs", "junit: out/nightly-gpu/junit-*.xml",
     "junit: out/nightly-gpu/*.*", "check", "JUnit report paths"),
    ("artifact path the nightly does not write", "- out/nightly-gpu/bench.md",
     "- out/nightly-gpu/bench.txt", "check", "bench.txt matches no file"),
    ("multicast on", 'NCCL_NVLS_ENABLE: "0"', 'NCCL_NVLS_ENABLE: "1"', "check",
     "NCCL_NVLS_ENABLE must be 0"),
    ("multicast variable missing", '    TORCH_SYMM_MEM_DISABLE_MULTICAST: "1"\n', "", "check",
     "TORCH_SYMM_MEM_DISABLE_MULTICAST must be 1"),
    ("artifacts only on success", "when: always", "when: on_success", "check",
     "not `when: always`"),
    ("no schedule rule", '"schedule"', '"push"', "check", "no rule for pipeline schedules"),
    ("no tags", "  tags: [linux, gpu]\n", "", "check", "no tags"),
    ("no one-GPU job", "tags: [linux, gpu-1]", "tags: [linux, gpu]", "check",
     "no job for a one-GPU runner"),
]


def controls(real_path, checker, table, tmp):
    """Each broken copy of REAL_PATH must give a finding of the expected kind and text."""
    failures = []
    text = read(real_path)
    for what, old, new, kind, expected in table:
        if old not in text:
            failures.append(f"control '{what}': {old!r} is no longer in {real_path}: update it")
            continue
        broken = os.path.join(tmp, "broken-" + os.path.basename(real_path))
        with open(broken, "w", encoding="utf-8") as f:
            f.write(text.replace(old, new, 1))
        found = checker(broken)
        if not any(k == kind and expected in message for k, message in found):
            failures.append(f"control '{what}' NOT caught: expected a {kind} finding with "
                            f"{expected!r}; got {found}")
        else:
            print(f"control '{what}': caught")
    return failures


def find_validator(root):
    for candidate in (os.environ.get("PEERCONF_ACTION_VALIDATOR"),
                      os.path.join(root, "build/tools/node_modules/.bin/action-validator"),
                      shutil.which("action-validator")):
        if candidate and os.access(candidate, os.X_OK):
            return candidate
    return None


def missing_tool(what):
    if os.environ.get("PEERCONF_REQUIRE_CI_EXAMPLES") == "1":
        print(f"FAIL: {what} is missing and PEERCONF_REQUIRE_CI_EXAMPLES=1 (ci/install-deps.sh "
              f"installs it)")
        return 1
    print(f"SKIPPED: {what} is missing (ci/install-deps.sh installs it; "
          f"PEERCONF_REQUIRE_CI_EXAMPLES=1 makes this a failure)")
    return SKIP


def main():
    if len(sys.argv) != 3 or sys.argv[1] not in ("github", "gitlab"):
        print(__doc__, file=sys.stderr)
        return 2
    mode, root = sys.argv[1], os.path.abspath(sys.argv[2])
    if yaml is None:
        return missing_tool("PyYAML (Debian python3-yaml)")
    nightly = Nightly(root)
    failures = nightly.problems()
    print(f"ci/nightly-gpu writes under {nightly.default_out}: {sorted(nightly.files)}; "
          f"JUnit {sorted(nightly.junit)}; exports {nightly.multicast}")
    validator = None
    with tempfile.TemporaryDirectory() as tmp:
        if mode == "github":
            validator = find_validator(root)
            print(f"validator: {validator or 'MISSING'}")

            def checker(path):
                return check_github(path, root, nightly, validator)
            real, table = os.path.join(root, GITHUB), GITHUB_CONTROLS
            if not validator:  # the validator's controls cannot run
                table = [c for c in table if c[3] != "validator"]
        else:
            def checker(path):
                return check_gitlab(path, root, nightly)
            real, table = os.path.join(root, GITLAB), GITLAB_CONTROLS
        failures += [message for _, message in checker(real)]
        if not failures:
            print(f"{os.path.relpath(real, root)}: no findings")
        failures += controls(real, checker, table, tmp)
    for failure in failures:
        print("FAIL:", failure)
    if failures:
        return 1
    if mode == "github" and not validator:
        return missing_tool("action-validator (npm @action-validator/cli)")
    print("PASS")
    return 0


if __name__ == "__main__":
    sys.exit(main())
