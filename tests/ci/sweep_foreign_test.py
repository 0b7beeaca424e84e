#!/usr/bin/env python3
"""The crash sweep (ci/sweep.py) judges and removes only its own job's segments: a segment of
another job in /dev/shm (another run, user, container or pid namespace: its pid means nothing
here) is neither reported as a leak nor removed, even when no process of that pid lives here;
this job's segment of a dead creator is reported and removed (the control); this job's segment of
a live creator is reported but kept. Usage: sweep_foreign_test.py PATH/TO/ci/sweep.py"""
import importlib.util
import os
import subprocess
import sys


def load(path):
    spec = importlib.util.spec_from_file_location("sweep", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def plant(name, mode=0o600):
    path = f"/dev/shm/{name}"
    fd = os.open(path, os.O_CREAT | os.O_EXCL | os.O_RDWR, mode)
    os.fchmod(fd, mode)
    os.write(fd, b"planted")
    os.close(fd)
    return path


def main():
    if not os.path.isdir("/dev/shm"):
        print("no /dev/shm: skipped")
        return 77
    sweep = load(sys.argv[1])
    job = sweep.new_job()
    foreign_job = f"{int(job, 16) ^ 0xa5a5a5a5a5a5a5a5:016x}"
    child = subprocess.Popen(["true"])
    child.wait()
    dead = child.pid  # reaped: not alive in this pid namespace
    names = {
        "foreign": f"peerconf.{foreign_job}.{dead}.1.1111111111111111",
        "ours_dead": f"peerconf.{job}.{dead}.2.2222222222222222",
        "ours_live": f"peerconf.{job}.{os.getpid()}.3.3333333333333333",
        "ours_other_mode": f"peerconf.{job}.{dead}.4.4444444444444444",
    }
    paths = {k: plant(v, 0o644 if k == "ours_other_mode" else 0o600) for k, v in names.items()}
    failures = []
    try:
        listed = {name for name, _ in sweep.job_segments(job)}
        want = {names["ours_dead"], names["ours_live"], names["ours_other_mode"]}
        if listed != want:
            failures.append(f"job_segments listed {sorted(listed)}, want {sorted(want)}")
        removed = sweep.remove_dead_segments(job)
        if removed != [names["ours_dead"]]:
            failures.append(f"removed {removed}, want only {names['ours_dead']}")
        for key, should_exist in (("foreign", True), ("ours_dead", False), ("ours_live", True),
                                  ("ours_other_mode", True)):
            if os.path.exists(paths[key]) != should_exist:
                failures.append(f"{key} ({names[key]}) "
                                + ("was removed" if should_exist else "was left"))
        # The foreign job's own sweep would take it: the job id is what decides.
        if sweep.remove_dead_segments(foreign_job) != [names["foreign"]]:
            failures.append("the foreign job's sweep did not remove its own dead segment")
    finally:
        for path in paths.values():
            try:
                os.unlink(path)
            except FileNotFoundError:
                pass
    for f in failures:
        print("FAIL " + f, file=sys.stderr)
    if not failures:
        print("sweep: a foreign segment is left alone; this job's dead segment is removed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
