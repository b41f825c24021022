"""The checks the ledger alone decides, each made to fail by a study wrong in that one way."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from tests.studies import ROOT, failing, studymon

TINY = ROOT / "tests" / "doubles" / "tiny_study.py"


def tiny_template(tmp: Path, fault: str) -> Path:
    path = tmp / f"tiny-{fault}.json"
    path.write_text(json.dumps({"command": [sys.executable, str(TINY)], "backend": "process", "fault": fault}))
    return path


@pytest.mark.parametrize(
    "fault, broken",
    [
        ("none", set()),
        ("gap", {"ledgerWellFormed"}),
        ("garbage", {"ledgerWellFormed"}),
        ("export", {"haltedAtExport"}),
        ("otherhalt", {"haltedAtExport"}),
    ],
)
def test_each_ledger_check_can_fail(tmp_path: Path, fault: str, broken: set[str]) -> None:
    proc = studymon("run", "--headless", "--template", str(tiny_template(tmp_path, fault)), "t=t", cwd=tmp_path)
    assert proc.returncode == (1 if broken else 0), proc.stdout + proc.stderr
    assert failing(tmp_path / "t") == broken


@pytest.mark.parametrize("fault, event", [("replace", "replaced"), ("truncate", "truncated")])
def test_a_ledger_replaced_or_truncated_while_watched_fails_live_and_in_report_alike(
    tmp_path: Path, fault: str, event: str
) -> None:
    """The ledger ends well-formed on disk; only the live watch saw it change under it, and wrote that down."""
    proc = studymon("run", "--headless", "--template", str(tiny_template(tmp_path, fault)), "t=t", cwd=tmp_path)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    out = tmp_path / "t"
    assert failing(out) == {"ledgerWellFormed"}
    watch = [json.loads(line) for line in (out / "ledger-watch.jsonl").read_text().splitlines()]
    assert [w["event"] for w in watch] == [event]
    # The file that took the ledger's place was followed: what the study wrote into it was seen live.
    seen = [json.loads(line)["kind"] for line in (out / "timeline.jsonl").read_text().splitlines()]
    assert seen[-1] == "halt", seen
    rep = studymon("report", "--json", "t", cwd=tmp_path)
    assert rep.returncode == 1
    checks = {c["name"]: c["ok"] for c in json.loads(rep.stdout)[0]["checks"]}
    assert checks["ledgerWellFormed"] is False
    # Without the record of what was seen live: a ledger replaced by the same records would pass (the record is
    # what fails it); one truncated still fails, for timeline.jsonl holds the records it lost (§6.9).
    (out / "ledger-watch.jsonl").rename(out / "ledger-watch.jsonl.aside")
    rep = studymon("report", "--json", "t", cwd=tmp_path)
    check = next(c for c in json.loads(rep.stdout)[0]["checks"] if c["name"] == "ledgerWellFormed")
    if event == "replaced":
        assert check["ok"] is True, check
    else:
        assert check["ok"] is False and "timeline.jsonl" in check["detail"], check


def test_a_crash_is_unfinished_with_the_resume_command_then_resumes(tmp_path: Path) -> None:
    proc = studymon("run", "--headless", "--template", str(tiny_template(tmp_path, "crash")), "t=t", cwd=tmp_path)
    assert proc.returncode == 3, proc.stdout + proc.stderr
    assert "exitedCleanly" in proc.stdout and "crashed with exit 1" in proc.stdout
    assert f"studymon run --resume t={tmp_path / 't'}" in proc.stdout
    out = tmp_path / "t"
    assert not (out / "report.json").exists() and not (out / "outcome.json").exists()
    # report judges the unfinished folder without writing anything.
    before = sorted(p.name for p in out.iterdir())
    rep = studymon("report", "t", cwd=tmp_path)
    # Nothing failed: what has not happened yet may still come (§6.6), and the resume continues it.
    assert rep.returncode == 3 and "✗" not in rep.stdout and "?" in rep.stdout, rep.stdout
    assert f"studymon run --resume t={out}" in rep.stdout
    assert sorted(p.name for p in out.iterdir()) == before
    again = studymon("run", "--resume", "--headless", "t=t", cwd=tmp_path)
    assert again.returncode == 0, again.stdout + again.stderr
    assert failing(out) == set()


def test_resume_of_a_finished_study_is_refused(tmp_path: Path) -> None:
    proc = studymon("run", "--headless", "--template", str(tiny_template(tmp_path, "none")), "t=t", cwd=tmp_path)
    assert proc.returncode == 0
    again = studymon("run", "--resume", "--headless", "t=t", cwd=tmp_path)
    assert again.returncode == 2 and "has finished" in again.stderr
