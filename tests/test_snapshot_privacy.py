"""Machine snapshots keep other people's command lines out of the evidence folder."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import psutil

from studymon.engine.load.sampler import process_snapshot
from tests.waits import until

SECRET = "--token=s3cr3t-not-for-the-evidence"  # noqa: S105 - a made-up token: the text that must not leak
OTHERS_WORK = "import time; time.sleep(60)"  # the sleep stands in for the work of somebody else's process


def test_other_processes_keep_name_and_usage_but_not_their_arguments() -> None:
    other = subprocess.Popen([sys.executable, "-c", OTHERS_WORK, SECRET])
    # A study's tree: its controller (the shell) and what it started (sleep, standing in for its work).
    mine = subprocess.Popen(["sh", "-c", "sleep 30 & wait", "study-arg"])  # noqa: S607 - the sh on PATH
    try:
        shell = psutil.Process(mine.pid)

        def child_exec_done() -> bool:
            # Forked is not enough: until its exec the child still has the shell's command line.
            try:
                return any(c.cmdline()[:1] == ["sleep"] for c in shell.children())
            except psutil.NoSuchProcess:
                return False

        until(child_exec_done, 10, "the shell's child, sleep, started", seen=shell.children)
        snap = process_snapshot(own=mine.pid)
        text = json.dumps(snap)
        assert SECRET not in text, "another process's arguments were written down"
        by_pid = {p["pid"]: p for p in snap}
        seen = by_pid[other.pid]
        assert seen["name"] and "args" not in seen and seen["rss"] > 0 and seen["cpuSeconds"] is not None
        # The study's own tree keeps its command lines: the controller and what it started.
        assert "study-arg" in by_pid[mine.pid]["args"]
        kids = [p for p in snap if p["ppid"] == mine.pid]
        assert kids and all(p["args"].startswith("sleep 30") for p in kids)
    finally:
        for p in (other, mine):
            p.kill()
            p.wait()


def test_a_whole_study_writes_no_foreign_command_line(tmp_path: Path) -> None:
    from tests.studies import studymon, template

    other = subprocess.Popen([sys.executable, "-c", OTHERS_WORK, SECRET])  # running beside the study
    try:
        t = template(tmp_path, backend="process", budget=20)
        done = studymon("run", "--headless", "--template", str(t), f"a={tmp_path / 'a'}", cwd=tmp_path)
        assert done.returncode == 0, done.stdout + done.stderr
        machine = (tmp_path / "a" / "machine.jsonl").read_text()
        assert SECRET not in machine
        heavy = [json.loads(x) for x in machine.splitlines() if '"processes"' in x]
        assert {h["label"] for h in heavy} >= {"start", "end"}
        assert any(p["pid"] == other.pid and "args" not in p for h in heavy for p in h["processes"])
    finally:
        other.kill()
        other.wait()
