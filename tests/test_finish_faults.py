"""A write that fails after ``outcome.json`` leaves a folder that ``--resume`` completes and ``report`` judges.

The study is real (the reference study on the process runtime); the fault is
a full disk at the moment one report is published, injected at the evidence
writer the session's finish calls (:mod:`studymon.engine.live.finish`).
"""

from __future__ import annotations

import asyncio
import errno
import json
from pathlib import Path
from typing import Any

import pytest

import studymon.engine.live.finish as finish_mod
from studymon.engine.evidence.writer import EvidenceWriteError
from studymon.engine.launch.prepare import create_fresh, plan_fresh
from studymon.engine.live.supervisor import Supervisor
from tests.studies import studymon, template

pytestmark = pytest.mark.slow


def test_a_full_disk_after_outcome_is_completed_by_resume(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    t = template(tmp_path, backend="process", budget=20)
    out = tmp_path / "o"
    specs, tpl, backend = plan_fresh([f"o={out}"], t, [], "process")
    create_fresh(specs, tpl, backend)
    real = finish_mod.write_json

    def full_disk(path: Path, obj: Any) -> Path:
        if Path(path).name == "accounts.json":
            raise EvidenceWriteError(errno.ENOSPC, f"cannot write {path}: No space left on device")
        return real(path, obj)

    monkeypatch.setattr(finish_mod, "write_json", full_disk)

    async def scenario() -> Any:
        sup = Supervisor(lambda _event: None)
        sup.add(specs[0], resume=False, armed=False)
        return (await asyncio.wait_for(sup.run(), 120))[0]

    result = asyncio.run(scenario())
    monkeypatch.setattr(finish_mod, "write_json", real)
    assert result.exit_status == 3
    assert "accounts.json" in result.message and "No space left" in result.message
    assert (out / "outcome.json").is_file()
    assert not (out / "accounts.json").exists() and not (out / "report.json").exists()
    assert not list(out.glob(".*.tmp"))
    outcome = (out / "outcome.json").read_bytes()
    starts = (out / "launches.jsonl").read_text().count('"event": "start"')

    resumed = studymon("run", "--resume", "--headless", f"o={out}", cwd=tmp_path)
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    assert (out / "launches.jsonl").read_text().count('"event": "start"') == starts, "the study is not run again"
    assert (out / "outcome.json").read_bytes() == outcome, "what was written stays as it was"
    for name in ("accounts.json", "report.json", "report.svg"):
        assert (out / name).is_file(), name
    assert json.loads((out / "report.json").read_text())["ok"] is True
    again = studymon("report", str(out), cwd=tmp_path)
    assert again.returncode == 0, again.stdout + again.stderr
    refused = studymon("run", "--resume", "--headless", f"o={out}", cwd=tmp_path)
    assert refused.returncode == 2 and "nothing to resume" in refused.stdout + refused.stderr
