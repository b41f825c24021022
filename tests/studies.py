"""Helpers for tests that run whole studies through the real ``studymon`` command."""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent
REFSTUDY_TEMPLATE = ROOT / "refstudy" / "research.json"
BROKEN = ROOT / "tests" / "doubles" / "broken_study.py"

# Small studies: a handful of rounds of short runs keep a test to seconds.
FAST = {"budget": 40, "runCost": 10, "diagnosisSeconds": 2, "samples": 2000}

SECTION5_FILES = [
    "research.json", "study.log", "launches.jsonl", "machine.jsonl", "timeline.jsonl",
    "outcome.json", "accounts.json", "report.json", "report.svg",
]
KILL_FILES = [
    "kill.json", "ledger-at-kill.json", "container-before.json", "container-after-kill.json",
    "container-before-resume.json", "container-events.jsonl", "container-events-window.json",
]


def unique_sid() -> str:
    """A study id no other test uses: a container labelled studymon.study=<ID> is that study's whatever its name
    (docs/contract.md, "Whose a container is"), so two tests' studies of one id on one engine take each other's."""
    return "x" + uuid.uuid4().hex[:6]


def template(tmp: Path, name: str = "t.json", **overrides: Any) -> Path:
    data = json.loads(REFSTUDY_TEMPLATE.read_text())
    data.update(FAST)
    data.update(overrides)
    path = tmp / name
    path.write_text(json.dumps(data))
    return path


def broken_template(tmp: Path, fault: str, **overrides: Any) -> Path:
    return template(tmp, f"broken-{fault}.json", command=[sys.executable, str(BROKEN)], fault=fault, **overrides)


def studymon(
    *args: str, cwd: Path, timeout: float = 300, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, PYTHONPATH=str(ROOT), COLUMNS="200", **(env or {}))
    return subprocess.run(
        [sys.executable, "-m", "studymon.tui.cli", *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout
    )


@contextlib.contextmanager
def own_runtime_state(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """The per-test process-runtime root and lock folder of tests/conftest.py, for a module's fixture.

    A module-scoped fixture is set up before those per-test ones: without this, the studies it runs
    would share the machine's own process-runtime state and study locks.
    """
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("STUDYMON_PROCESS_RUNTIME", str(tmp_path_factory.mktemp("procrt")))
        locks = tmp_path_factory.mktemp("locks")
        locks.chmod(0o700)
        mp.setenv("STUDYMON_LOCK_DIR", str(locks))
        yield


def jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def launches(out: Path) -> list[dict[str, Any]]:
    """``OUT/launches.jsonl``: every controller start and end the keeper wrote."""
    return jsonl(out / "launches.jsonl")


def report(out: Path) -> dict[str, Any]:
    return json.loads((out / "report.json").read_text())


def verdicts(out: Path) -> dict[tuple[str, str], bool | None]:
    return {(c["scope"], c["name"]): c["ok"] for c in report(out)["checks"]}


def failing(out: Path) -> set[str]:
    return {c["name"] for c in report(out)["checks"] if c["ok"] is not True}


def assert_evidence_complete(out: Path, killed: bool) -> None:
    for name in SECTION5_FILES:
        assert (out / name).is_file(), f"{out.name}: {name} missing"
    for name in ("outcome.json", "accounts.json", "report.json"):
        json.loads((out / name).read_text())
    for name in ("launches.jsonl", "machine.jsonl", "timeline.jsonl"):
        lines = (out / name).read_text().splitlines()
        assert lines, f"{name} is empty"
        for line in lines:
            json.loads(line)
    labels = {json.loads(l)["label"] for l in (out / "machine.jsonl").read_text().splitlines()}
    assert {"start", "end"} <= labels
    assert "Traceback" not in (out / "study.log").read_text()
    assert not list(out.rglob(".*.tmp")), "temporary files left behind"
    if killed:
        assert (out / "kill-report.json").is_file()
        assert {"after-kill", "resume"} <= labels
        folder = out / "kills" / "1"
        for name in KILL_FILES:
            assert (folder / name).is_file(), f"kills/1/{name} missing"
        kill = json.loads((folder / "kill.json").read_text())
        assert kill["trigger"] in ("auto", "manual")
        for key in ("at", "pid", "beforeKillSeq", "targets"):
            assert key in kill
        for t in kill["targets"]:
            assert set(t) >= {"run", "cell", "round", "planSeq", "startSeq", "container"}
