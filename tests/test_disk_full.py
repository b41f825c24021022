"""A disk that fills up while a study runs: the study is stopped, nothing is torn, and the printed command finishes it."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.studies import ROOT, template
from tests.waits import until

pytestmark = pytest.mark.slow


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    where = tmp_path / "disk"
    where.mkdir()
    if os.geteuid() != 0 or shutil.which("mount") is None:
        pytest.skip("mounting a tmpfs needs root and mount(8)")
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=4m,mode=0755", "tmpfs", str(where)],
                          capture_output=True, text=True)
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.strip()}")
    try:
        yield where
    finally:
        subprocess.run(["umount", "-l", str(where)], capture_output=True)


def going(proc: subprocess.Popen[str], timeline: Path) -> None:
    """Wait until the console has seen three records of the study it runs (and is still running)."""

    def seen() -> bool:
        assert proc.poll() is None, "the console ended before the study got going"
        return timeline.exists() and len(timeline.read_bytes().splitlines()) >= 3

    until(seen, 60, "the study to get going")


def _whole_lines(path: Path) -> int:
    data = path.read_bytes()
    assert not data or data.endswith(b"\n"), f"{path.name} ends in a torn line"
    lines = data.splitlines()
    for number, line in enumerate(lines, 1):
        json.loads(line)  # a glued or torn line does not parse
    return len(lines)


def test_a_full_disk_stops_the_study_whole_and_the_printed_command_finishes_it(tmp_path: Path, small_disk: Path) -> None:
    t = template(tmp_path, backend="process", budget=60, diagnosisSeconds=2)
    out = small_disk / "a"
    env = dict(os.environ, PYTHONPATH=str(ROOT), COLUMNS="200")
    proc = subprocess.Popen(
        [sys.executable, "-m", "studymon.tui.cli", "run", f"a={out}", "--template", str(t), "--headless"],
        cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
    )
    try:
        going(proc, out / "timeline.jsonl")
        filler = small_disk / "filler"
        fd = os.open(filler, os.O_WRONLY | os.O_CREAT, 0o644)
        try:
            for chunk in (65536, 4096, 1):  # to the last byte: a page left free would take a few more lines
                try:
                    while True:
                        os.write(fd, b"\0" * chunk)
                except OSError:
                    pass
        finally:
            os.close(fd)
        output, _ = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 3, output
    # Whoever meets the full disk first says so: the console (naming its file) or the study (its log's last line).
    said = "No space left on device" in output or "the disk may be full" in output
    assert said and (str(out) in output or "study.log: " in output), output
    assert "Traceback" not in output, output
    hint = re.search(r"^\s*(studymon run --resume \S+)\s*$", output, re.M)
    assert hint is not None, output
    for name in ("timeline.jsonl", "machine.jsonl", "load.jsonl", "launches.jsonl"):
        if (out / name).exists():
            _whole_lines(out / name)
    assert not list(out.rglob("*.tmp")), "a temporary file was left behind"
    launches = [json.loads(x) for x in (out / "launches.jsonl").read_text().splitlines()]
    assert launches[-1]["event"] == "end", "the keeper recorded how the stopped controller ended"

    filler.unlink()
    argv = hint.group(1).split()[1:]
    done = subprocess.run([sys.executable, "-m", "studymon.tui.cli", *argv, "--headless"], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=180)
    assert done.returncode == 0, done.stdout + done.stderr
    report = json.loads((out / "report.json").read_text())
    assert all(c["ok"] is True for c in report["checks"]), report["checks"]
    for name in ("timeline.jsonl", "machine.jsonl", "load.jsonl", "launches.jsonl"):
        _whole_lines(out / name)


def test_a_write_the_console_alone_cannot_make_stops_the_study_and_names_the_file(tmp_path: Path) -> None:
    """The console meets the failure first (a file-size limit set on it mid-study): it names its file and stops the study."""
    import resource

    t = template(tmp_path, backend="process", budget=60, diagnosisSeconds=2)
    out = tmp_path / "a"
    env = dict(os.environ, PYTHONPATH=str(ROOT), COLUMNS="200")
    proc = subprocess.Popen(
        [sys.executable, "-m", "studymon.tui.cli", "run", f"a={out}", "--template", str(t), "--headless"],
        cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
    )
    try:
        timeline = out / "timeline.jsonl"
        going(proc, timeline)
        # The console's own files may now grow by a line or two; the study (other processes) is not limited.
        limit = timeline.stat().st_size + 300
        resource.prlimit(proc.pid, resource.RLIMIT_FSIZE, (limit, limit))
        output, _ = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 3, output
    assert "Traceback" not in output, output
    assert re.search(r"cannot append to \S+(timeline|machine|load)\.jsonl: File too large", output), output
    assert "the study was stopped" in output, output
    for name in ("timeline.jsonl", "machine.jsonl", "load.jsonl", "launches.jsonl"):
        if name != "load.jsonl" or (out / name).exists():  # stopped before its first sample, it has none
            _whole_lines(out / name)
    assert not list(out.rglob("*.tmp"))
    launches = [json.loads(x) for x in (out / "launches.jsonl").read_text().splitlines()]
    log = (out / "study.log").read_text(errors="replace") if (out / "study.log").exists() else "(no study.log)"
    assert launches[-1]["event"] == "end" and launches[-1]["code"] == 130, f"stopped with SIGINT, at a safe point:\n{log}"
    hint = re.search(r"^\s*(studymon run --resume \S+)\s*$", output, re.M)
    assert hint is not None, output
    again = subprocess.run([sys.executable, "-m", "studymon.tui.cli", *hint.group(1).split()[1:], "--headless"], cwd=tmp_path,
                           env=env, capture_output=True, text=True, timeout=180)
    assert again.returncode == 0, again.stdout + again.stderr
    report = json.loads((out / "report.json").read_text())
    assert all(c["ok"] is True for c in report["checks"]), report["checks"]
