"""The study's file system when things die around it: the console, the keeper, the study inside a held write.

Each time the study's files are whole, the evidence is kept, no mount is left in any mount namespace once the
study has ended, and the command that goes on is printed (or, for an ended study, writes its reports).  A full
disk under the mount: tests/test_disk_full.py, which now runs through it.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from studymon.engine.fs.mount import StudyMount, home_of, mounted, mounted_anywhere
from tests.studies import ROOT, template
from tests.waits import until

pytestmark = pytest.mark.slow

ENV = dict(os.environ, PYTHONPATH=str(ROOT), COLUMNS="200")


def _console(tmp: Path, out: Path, **overrides: object) -> subprocess.Popen[str]:
    t = template(tmp, backend="process", **overrides)
    return subprocess.Popen(
        [sys.executable, "-m", "studymon.tui.cli", "run", "--headless", "--template", str(t), f"s={out}"],
        cwd=tmp, env=ENV, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True,
    )


def _launches(out: Path) -> list[dict[str, object]]:
    path = out / "launches.jsonl"
    return [json.loads(x) for x in path.read_text().splitlines()] if path.exists() else []


def server_pids(study: Path) -> list[int]:
    """The processes serving ``study``'s mount, found by their command line."""
    found = []
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            try:
                argv = Path(f"/proc/{entry.name}/cmdline").read_bytes().split(b"\0")
            except OSError:
                continue
            if b"serve" in argv and str(study).encode() in argv and b"fs" in argv:
                found.append(int(entry.name))
    return found


def _whole_ledger(study: Path) -> list[dict[str, object]]:
    data = (study / "ledger.jsonl").read_bytes()
    assert data.endswith(b"\n"), "the ledger ends in a torn line"
    return [json.loads(line) for line in data.splitlines()]


def _no_mount_left(study: Path) -> None:
    until(lambda: not server_pids(study) and not mounted_anywhere(study), 30, "the mount to go with the study")


def _started(out: Path) -> dict[str, object]:
    until(lambda: any(x.get("event") == "start" for x in _launches(out)) and (out / "study" / "ledger.jsonl")
          .exists() and len((out / "study" / "ledger.jsonl").read_bytes().splitlines()) >= 3, 60,
          "the study to get going")
    return next(x for x in _launches(out) if x.get("event") == "start")


def _ended(out: Path, pid: object) -> dict[str, object]:
    until(lambda: any(x.get("event") == "end" and x.get("pid") == pid for x in _launches(out)), 180,
          "the controller's end line")
    return next(x for x in _launches(out) if x.get("event") == "end" and x.get("pid") == pid)


def _finish(tmp: Path, out: Path) -> None:
    """The printed way on, for a study that ended while nobody watched: its reports, every check ✓."""
    done = subprocess.run([sys.executable, "-m", "studymon.tui.cli", "run", "--resume", "--headless", f"s={out}"],
                          cwd=tmp, env=ENV, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    report = json.loads((out / "report.json").read_text())
    assert all(c["ok"] is True for c in report["checks"]), report["checks"]


def test_a_console_killed_mid_study_leaves_the_study_writing_and_no_mount_after_it(tmp_path: Path) -> None:
    out = tmp_path / "s"
    console = _console(tmp_path, out, budget=60, diagnosisSeconds=2)
    start = _started(out)
    assert server_pids(out / "study"), "the study writes through its file system"
    assert not mounted(out / "study"), "the mount is the study's alone: the machine's own mounts never show it"
    assert mounted_anywhere(out / "study"), "it is there, in the study's mount namespace"
    os.killpg(console.pid, signal.SIGKILL)
    console.wait()
    end = _ended(out, start["pid"])
    assert end["code"] == 0, end
    _no_mount_left(out / "study")
    assert _whole_ledger(out / "study")[-1]["kind"] == "halt"
    _finish(tmp_path, out)


def test_a_keeper_killed_mid_study_leaves_the_study_writing_and_no_mount_after_it(tmp_path: Path) -> None:
    """The keeper gone, the server serves the controller to its end (its own watch), then unmounts; the console
    waits for the controller itself, records that the exit status was lost, and prints the way on."""
    out = tmp_path / "s"
    console = _console(tmp_path, out, budget=60, diagnosisSeconds=2)
    start = _started(out)
    keeper = start["keeper"]
    assert isinstance(keeper, int)
    os.kill(keeper, signal.SIGKILL)
    output, _ = console.communicate(timeout=300)
    end = _ended(out, start["pid"])
    assert end.get("note") == "exit status lost: its keeper is gone", end
    assert _whole_ledger(out / "study")[-1]["kind"] == "halt", "the study went on to its end"
    _no_mount_left(out / "study")
    assert "Traceback" not in output, output
    assert f"studymon run --resume s={out}" in output or "studymon run --resume" in output, output


def test_a_study_killed_inside_a_held_write_leaves_its_ledger_at_the_point_and_the_mount_goes(tmp_path: Path) -> None:
    """Nobody releases the held write: the study is SIGKILLed in it (the kernel gives up the request), and the
    mount's end lets the server's waiting thread go at once, not after its limit."""
    study = tmp_path / "study"
    study.mkdir()
    ledger = study / "ledger.jsonl"
    records = [{"seq": n, "at": "2026-12-07T00:00:00.000Z", "kind": "decision", "content": {"n": n}}
               for n in range(1, 6)]
    data = b"".join(json.dumps(r).encode() + b"\n" for r in records)
    with StudyMount.start(study, hold=("after:decision#2", 0)) as mount:
        writer = subprocess.Popen([sys.executable, "-c", "import os, sys; fd = os.open(sys.argv[1], os.O_WRONLY | "
                                   "os.O_CREAT | os.O_APPEND, 0o644); os.write(fd, bytes.fromhex(sys.argv[2]))",
                                   str(ledger), data.hex()], start_new_session=True)
        assert mount.ask("held", wait=20, timeout=30)["seq"] == 2
        writer.kill()
        assert writer.wait(20) == -signal.SIGKILL
        began = time.monotonic()
    assert time.monotonic() - began < 10, "the unmount let the held write go"
    assert mount.process.poll() is not None
    assert [r["seq"] for r in _whole_ledger(study)] == [1, 2]
    assert mounted_anywhere(study) == [] and not (home_of(study) / "control").exists()
