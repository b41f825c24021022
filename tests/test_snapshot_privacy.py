"""Machine snapshots keep other people's command lines out of the evidence folder."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from studymon.engine.sampler import process_snapshot

SECRET = "--token=s3cr3t-not-for-the-evidence"


def test_other_processes_keep_name_and_usage_but_not_their_arguments() -> None:
    other = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)", SECRET])
    mine = subprocess.Popen(["sh", "-c", "sleep 30 & wait", "study-arg"])
    try:
        import time

        time.sleep(0.2)  # the shell has started its child
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

    other = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)", SECRET])
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
