"""Crash points from a trace: every step a candidate counted as §7 counts points, what a crash there leaves
behind, and the classes, whose number follows the study's shapes, not its length."""

from __future__ import annotations

from typing import Any

from studymon.engine.contract.killpoint import KillPoint
from studymon.engine.contract.ledger import Record
from studymon.engine.explore.crashpoints import Left, candidates, classes, steps_of
from studymon.engine.io.clock import parse_rfc3339, rfc3339_ms

T0 = 1_800_000_000.0
STEM = "inforsi-s-"


class Trace:
    """A study's ledger and its containers' events, written as the reference study's rounds go."""

    def __init__(self) -> None:
        self.t = T0
        self.records: list[Record] = []
        self.events: list[dict[str, Any]] = []

    def rec(self, kind: str, **content: Any) -> None:
        self.t += 0.01
        seq = len(self.records) + 1
        self.records.append(Record(seq, rfc3339_ms(self.t), kind, content, seq, 0))

    def ev(self, action: str, run: str) -> None:
        self.t += 0.01
        self.events.append({"Type": "container", "Action": action, "Actor": {"ID": "c" + run,
                            "Attributes": {"name": STEM + run}}, "timeNano": int(self.t * 1e9)})

    def run(self, run: str, purpose: str, rnd: int) -> None:
        self.rec("runPlanned", run=run, purpose=purpose, object="c1", round=rnd, experiments=["e1"])
        self.rec("charge", run=run, amount=10, balance=0)
        self.ev("create", run)
        self.ev("start", run)
        self.rec("runStarted", run=run, container=STEM + run)
        self.ev("die", run)
        self.rec("runResult", run=run, exitCode=0, outputs={"e1": 0.5})

    def round(self, rnd: int, ablation: bool = True) -> None:
        self.rec("stageOpen", stage="diagnosis", round=rnd)
        self.run(f"d{rnd}", "diagnosis", rnd)
        self.rec("diagnosisSettlement", round=rnd, run=f"d{rnd}", dropped=[], judged={"experiments": []})
        if ablation:
            self.run(f"a{rnd}", "ablation", rnd)
        self.rec("stageOpen", stage="proposal", round=rnd)

    def steps(self) -> Any:
        return steps_of(self.records, self.events, STEM, _epoch)


def _epoch(value: Any) -> float | None:
    if isinstance(value, str):
        return parse_rfc3339(value)
    return value["timeNano"] / 1e9 if isinstance(value, dict) and "timeNano" in value else None


def study(rounds: int) -> Trace:
    t = Trace()
    t.rec("studyOpen", study="s", budget=10 * 2 * rounds, config={})
    for rnd in range(1, rounds + 1):
        t.round(rnd)
    t.rec("halt", reason="balance exhausted")
    return t


def test_every_step_is_a_candidate_counted_as_points_are() -> None:
    t = study(2)
    found = candidates(t.steps())
    assert len(found) == len(t.records) + len(t.events)
    points = [str(c.point) for c in found]
    assert points[:12] == [
        "after:studyOpen", "after:stageOpen", "after:runPlanned/diagnosis", "after:charge/diagnosis",
        "container:create/diagnosis", "container:start/diagnosis", "after:runStarted/diagnosis",
        "container:die/diagnosis", "after:runResult/diagnosis", "after:diagnosisSettlement/diagnosis",
        "after:runPlanned/ablation", "after:charge/ablation",
    ]
    assert "after:runStarted/diagnosis#2" in points and "container:die/ablation#2" in points
    assert "after:stageOpen#4" in points
    # Each is a point the kill driver takes as written.
    assert all(KillPoint.parse(p) == c.point for p, c in zip(points, found))


def test_what_a_crash_leaves_behind() -> None:
    found = {str(c.point): c.left for c in candidates(study(1).steps())}
    assert found["after:runPlanned/diagnosis"] == Left()
    assert found["after:charge/diagnosis"] == Left(charged=("diagnosis",))
    assert found["container:create/diagnosis"] == Left(charged=("diagnosis",))
    assert found["container:start/diagnosis"] == Left(unrecorded=("diagnosis",))
    assert found["after:runStarted/diagnosis"] == Left(in_flight=("diagnosis",))
    assert found["container:die/diagnosis"] == Left(in_flight=("diagnosis",))
    assert found["after:runResult/diagnosis"] == Left(unsettled=("diagnosis",))
    assert found["after:diagnosisSettlement/diagnosis"] == Left()
    assert found["after:runResult/ablation"] == Left(), "an ablation's result needs no settlement"
    assert str(Left(in_flight=("ablation", "diagnosis"), unsettled=("diagnosis",))) == \
        "inFlight ablation+diagnosis, unsettled diagnosis"
    assert str(Left()) == "nothing unfinished"


def test_the_classes_follow_the_study_s_shapes_not_its_length() -> None:
    sizes = {rounds: len(classes(candidates(study(rounds).steps()))) for rounds in (1, 10, 100)}
    assert sizes[1] == sizes[10] == sizes[100], sizes
    by_class = classes(candidates(study(3).steps()))
    # One class per kind of step and what it leaves; its first candidate is the trial's point.
    first = {name: members[0] for name, members in by_class.items()}
    assert str(first["after:charge · charged diagnosis"].point) == "after:charge/diagnosis"
    assert len(by_class["after:charge · charged diagnosis"]) == 3
    # Runs in flight together are another shape: a study that overlaps them has classes the other has not.
    t = study(1)
    t.rec("runPlanned", run="x1", purpose="ablation", object="c1", round=1, experiments=[])
    t.rec("charge", run="x1", amount=0, balance=0)
    t.ev("create", "x1")
    t.ev("start", "x1")
    t.rec("runStarted", run="x1", container=STEM + "x1")
    t.rec("runPlanned", run="d9", purpose="diagnosis", object="c1", round=9, experiments=[])
    t.rec("charge", run="d9", amount=0, balance=0)
    names = set(classes(candidates(t.steps())))
    assert "after:charge · inFlight ablation, charged diagnosis" in names


def test_events_of_other_containers_and_other_actions_are_not_steps() -> None:
    t = study(1)
    t.events.append({"Action": "start", "Actor": {"Attributes": {"name": "inforsi-other-d1"}}, "timeNano": 1})
    t.events.append({"Action": "exec_start", "Actor": {"Attributes": {"name": STEM + "d1"}}, "timeNano": 2})
    t.events.append({"Action": "die", "Actor": {"Attributes": {"name": STEM + "d1"}}})  # no time
    assert len(t.steps()) == len(t.records) + len(t.events) - 3
    assert steps_of(t.records, t.events, None, _epoch) == steps_of(t.records, [], STEM, _epoch)


# --- from a real trace ----------------------------------------------------------------------


import json  # noqa: E402
from pathlib import Path  # noqa: E402

import pytest  # noqa: E402

from studymon.engine.contract.folder import EvidenceFolder  # noqa: E402
from studymon.engine.kill.recording import event_time  # noqa: E402
from tests.studies import jsonl, studymon, template  # noqa: E402


@pytest.mark.slow
def test_a_traced_run_records_every_container_event_of_the_study(tmp_path: Path) -> None:
    """`studymon run --trace`: every create, start and die of each run's container, as received, beside the
    ledger; from them the candidates of every run, container points included."""
    t = template(tmp_path, budget=20, runCost=10, diagnosisSeconds=1, backend="process", containerPrefix="smx")
    proc = studymon("run", "--headless", "--trace", "--template", str(t), "tr=tr", cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    out = tmp_path / "tr"
    trace = jsonl(out / EvidenceFolder.TRACE)
    ledger = jsonl(out / "study" / "ledger.jsonl")
    runs = [r["content"]["run"] for r in ledger if r["kind"] == "runStarted"]
    assert runs, ledger
    for run in runs:
        actions = [e["Action"] for e in trace if e["Actor"]["Attributes"]["name"] == f"smx-tr-{run}"]
        assert {"create", "start", "die"} <= set(actions), (run, actions)
    assert all("seenAt" in e for e in trace) and not any("gap" in e for e in trace)
    # Without --trace, no such file.
    proc = studymon("run", "--headless", "--template", str(t), "plain=plain", cwd=tmp_path)
    assert proc.returncode == 0 and not (tmp_path / "plain" / EvidenceFolder.TRACE).exists()
    from studymon.engine.contract.ledger import Record
    from studymon.engine.explore.crashpoints import candidates, classes, steps_of

    records = [Record(r["seq"], r["at"], r["kind"], r["content"], r["seq"], 0) for r in ledger]

    def epoch(value: object) -> float | None:
        from studymon.engine.io.clock import parse_rfc3339

        return parse_rfc3339(value) if isinstance(value, str) else event_time(value)  # type: ignore[arg-type]

    found = candidates(steps_of(records, trace, "smx-tr-", epoch))
    points = {str(c.point) for c in found}
    assert {"container:start/diagnosis", "container:die/diagnosis", "after:runStarted/diagnosis"} <= points
    assert "container:start · unrecorded diagnosis" in classes(found)
    assert json.loads((out / "report.json").read_text())["ok"] is True
