"""The verdict functions on hand-made evidence: each lifecycle fact can fail on its own."""

from __future__ import annotations

import json
from pathlib import Path

from engine.accounts import Accounts
from engine.checks import lifecycle_checks, overall, Check
from engine.ledger import Record
from engine.report import judge_kill

NAME = "inforsi-s-d1"


def inspect(id_: str = "abc", started: str = "2026-11-30T05:00:00.000000000Z", running: bool = True) -> dict:
    return {"Id": id_, "Name": "/" + NAME, "State": {"Running": running, "StartedAt": started, "Status": "running"}}


def event(action: str, ns: int = 10) -> dict:
    return {"Type": "container", "Action": action, "Actor": {"ID": "abc", "Attributes": {"name": NAME}}, "timeNano": ns}


def snaps(**override: dict | None) -> dict:
    base = {"before": inspect(), "after-kill": inspect(), "before-resume": inspect()}
    base.update(override)
    return base


def test_clean_lifecycle_holds() -> None:
    facts = lifecycle_checks(NAME, snaps(), [event("die")], None)
    assert all(facts.values()), facts


def test_each_lifecycle_fact_fails_alone() -> None:
    cases = {
        "sameId": snaps(**{"before-resume": inspect(id_="other")}),
        "sameStartedAt": snaps(**{"after-kill": inspect(started="2026-11-30T06:00:00Z")}),
        "runningBeforeKill": snaps(before=inspect(running=False)),
        "runningAfterKill": snaps(**{"after-kill": inspect(running=False)}),
        "snapshotsPresent": snaps(**{"after-kill": None}),
    }
    for fact, s in cases.items():
        facts = lifecycle_checks(NAME, s, [event("die")], None)
        assert facts[fact] is False, (fact, facts)
    assert lifecycle_checks(NAME, snaps(), [event("create"), event("die")], None)["noCreateInWindow"] is False
    assert lifecycle_checks(NAME, snaps(), [event("start"), event("die")], None)["noStartInWindow"] is False
    assert lifecycle_checks(NAME, snaps(), [], None)["oneDieInWindow"] is False
    assert lifecycle_checks(NAME, snaps(), [event("die"), event("die")], None)["oneDieInWindow"] is False
    # Another container's events do not count.
    other = dict(event("start"), Actor={"ID": "x", "Attributes": {"name": "inforsi-s-d2"}})
    assert lifecycle_checks(NAME, snaps(), [other, event("die")], None)["noStartInWindow"] is True


def test_overall_false_beats_unknown_beats_pass() -> None:
    ok, unknown, bad = Check("a", True, ""), Check("b", None, ""), Check("c", False, "")
    assert overall([ok, ok]) is True
    assert overall([ok, unknown]) is None
    assert overall([unknown, bad, ok]) is False


def test_missing_kill_evidence_fails(tmp_path: Path) -> None:
    folder = tmp_path / "kills" / "1"
    folder.mkdir(parents=True)
    (folder / "kill.json").write_text(json.dumps({"trigger": "manual", "targets": [], "beforeKillSeq": 3}))
    checks, report = judge_kill(folder, Accounts())
    assert [(c.name, c.ok) for c in checks][0] == ("killEvidence", False)
    assert "container-before.json" in report["missingFiles"]


def test_target_missing_from_evidence_is_not_a_pass(tmp_path: Path) -> None:
    folder = tmp_path / "kills" / "1"
    folder.mkdir(parents=True)
    target = {"run": "d1", "cell": "c", "round": 1, "planSeq": 1, "startSeq": 3, "container": NAME}
    (folder / "kill.json").write_text(json.dumps({"trigger": "auto", "targets": [target], "beforeKillSeq": 3}))
    acc = Accounts().extend([
        Record(1, "t", "runPlanned", {"run": "d1", "purpose": "diagnosis", "object": "c", "round": 1}, 1, 0),
        Record(2, "t", "charge", {"run": "d1", "amount": 1, "balance": 0}, 2, 0),
        Record(3, "t", "runStarted", {"run": "d1", "container": NAME}, 3, 0),
    ])
    checks, _ = judge_kill(folder, acc)
    verdicts = {c.name: c.ok for c in checks}
    assert verdicts["sameContainerNoRerun"] is not True
    assert verdicts["resultSettledAndFinished"] is False
    assert verdicts["chargedOnce"] is True
