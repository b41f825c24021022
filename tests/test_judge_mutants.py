"""Clauses of the judge that mutation testing found untested (docs/mutation.md): each test kills its mutants.

Fast and pure where the clause is pure; the two that read a kill folder
(``report._read_events``) write a one-kill folder to ``tmp_path`` and judge it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from studymon.engine.judge import judge
from studymon.engine.judge.events import EventTally, TargetTally
from studymon.engine.judge.facts import LedgerFacts
from studymon.engine.judge.kill import kill_checks
from tests.corpus import COST, derive, experiments, find, run_entries, sound, write
from tests.test_checks import NAME, SCOPE, STUDY, ev_at, evidence, one_kill, resumable, tally


def _without_since(files: dict[str, Any]) -> dict[str, Any]:
    """kill.json without ``since``/``sinceEpoch``: v2 left them optional; v3 requires them (``killEvidence`` ✗, §6.5),
    and the checks that can go by the window file's start still do."""
    kill = files["kills/1/kill.json"]
    del kill["since"], kill["sinceEpoch"]
    return files


def _target_checks(out: Path) -> dict[str, tuple[bool | None, str]]:
    return {c.name: (c.ok, c.detail) for c in judge(out).checks if c.scope == SCOPE}


def _kill_checks(out: Path) -> dict[str, tuple[bool | None, str]]:
    return {c.name: (c.ok, c.detail) for c in judge(out).checks if c.scope == "kill 1"}


# --- report._read_events: where the window starts ------------------------------------------------------


def test_a_kill_json_without_since_is_judged_from_the_windows_start(tmp_path: Path) -> None:
    """The window file gives the start: the events are judged, and a sound folder holds.

    Kills ``engine.report.x__read_events__mutmut_5`` (kill.json's since taken even when the window gives one).
    """
    out = write(_without_since(one_kill()), tmp_path / "s")
    ok, detail = _target_checks(out)["sameContainerNoRerun"]
    assert ok is True, detail
    assert detail.startswith(f"{NAME}: one Id (")
    assert _kill_checks(out)["killEvidence"] == (
        False, "kill.json has no since and sinceEpoch, two times, to open the window at")


def test_an_open_window_without_any_start_leaves_the_events_unjudged(tmp_path: Path) -> None:
    """No window file yet and no since in kill.json: nothing says where the window opens, so the
    events are not judged (unknown); counted from the beginning of the recording, the target's own
    create and start, just before the kill, would fail it.

    Kills ``engine.report.x__read_events__mutmut_8`` (``or`` made ``and``: tallied with no start).
    """
    # The study may still be resumed (its last controller was killed): an open window is not lost yet (§6.6).
    files = resumable(_without_since(one_kill()))
    for file in ("container-events-window.json", "container-events.jsonl"):
        del files[f"kills/1/{file}"]
    ok, detail = _target_checks(write(files, tmp_path / "s"))["sameContainerNoRerun"]
    assert ok is None, detail
    assert detail.endswith("the lifecycle events were not judged")


# --- kill_checks: a kill.json without a usable beforeKillSeq --------------------------------------------


def test_a_kill_without_a_before_kill_seq_tells_no_target_s_story() -> None:
    """kill.json's beforeKillSeq unusable (parse_kill leaves it None) while it lists targets: what the kill left
    unfinished is told from its moment, so no target is judged (killEvidence fails on the kill.json), and nothing
    raises (``plans_after(acc, None)`` would).  The same kill with its seq judges its target."""
    ev, acc = evidence(one_kill())
    assert {c.scope for c in kill_checks(ev, acc, STUDY, LedgerFacts())} >= {SCOPE}
    ev.kill.before_kill_seq = None  # type: ignore[union-attr]
    checks = kill_checks(ev, acc, STUDY, LedgerFacts())
    assert {c.scope for c in checks} == {ev.scope}
    assert [c.name for c in checks] == ["killDelivered", "killEvidence"]


# --- EventTally.add: Ids and names as the runtime wrote them --------------------------------------------


def test_an_event_id_that_is_not_a_string_is_no_id() -> None:
    """An event whose Actor has no string ID (an ``id`` of another type beside it) is not an event the runtime
    wrote: a line that is not an event, never a key, never shown, never a crash (§6.9).

    Kills ``engine.checks.xǁEventTallyǁadd__mutmut_108`` (any ``id`` kept: an unhashable one raises,
    an integer one reaches the die's Id).
    """
    t = tally()
    for ns, cid in ((1500, {"x": 1}), (1600, ["ID1"]), (1700, 7)):
        e = {"Type": "container", "Action": "die", "timeNano": ns, "id": cid,
             "Actor": {"Attributes": {"name": NAME, "exitCode": "0"}}}
        t.add(e, "x")
    assert list(t.targets[0].dies.values()) == []
    assert t.malformed_count == 3


def test_only_dockers_leading_slash_is_dropped_from_a_name() -> None:
    """A container name is compared as written but for Docker's leading ``/``: a study whose container
    prefix begins with another character (here ``X``, which Docker names allow) is matched by name,
    by old name, and its other containers are seen.

    Kills ``engine.checks.xǁEventTallyǁadd__mutmut_118`` (``name.lstrip("XX/XX")``) and ``_129`` (the same on ``oldName``).
    """
    name = "Xp-s-d1"
    t = EventTally(1000, 3000, "Xp-s-", frozenset(), [TargetTally("d1", name, frozenset({"ID1"}), 2000)])
    t.add(ev_at("stop", 1100, name="/" + name, cid="ID9"), "x")  # by name, Docker's slash dropped
    t.add(ev_at("rename", 1200, name="Xp-s-new", cid="ID9", oldName="/" + name), "x")  # renamed away from its name
    t.add(ev_at("create", 1300, name="Xp-s-zz", cid="ID8"), "x")  # another container of the study
    assert t.targets[0].forbidden == [("stop", 1100), ("rename", 1200)]
    assert t.foreign == [("Xp-s-zz", "create", 1300)]


# --- details quote only validated run ids ----------------------------------------------------------------

HOSTILE_RUN = "\x1b[2Jd9"  # clears an operator's terminal if a detail quoted it


def _renamed(s: Any, old: str, new: str) -> Any:
    for entry in s.entries:
        for key in ("run", "container"):
            value = entry.content.get(key)
            if isinstance(value, str) and (value == old or value.endswith(f"-{old}")):
                entry.content[key] = value[: len(value) - len(old)] + new
    for spec in s.kills:
        if spec.run == old:
            spec.run = new
    return s


def _repeated(s: Any) -> Any:
    """d1's work planned again after the kill, under a run id the contract forbids."""
    i = find(s, "runStarted", run="d1")
    again = run_entries(HOSTILE_RUN, "diagnosis", "c1", 1, experiments(1))
    s.entries[i + 1:i + 1] = [again["plan"], again["charge"], again["start"], again["result"]]
    s.budget += COST
    s.entries[0].content["budget"] = s.budget
    return s


def test_run_ids_from_the_ledger_reach_no_detail_unvalidated(tmp_path: Path) -> None:
    """A run id breaking rule 1 (an escape sequence) is never quoted: the checks fail, naming no such id.

    Where: ``killEvidence`` (a run in flight that kill.json omits), ``killTriggered`` (the run the point
    fired at), ``chargedOnce`` (a run repeating the target).
    """
    folders = {
        "renamed": _renamed(sound(), "d1", HOSTILE_RUN),
        "repeated": _repeated(sound()),
    }
    failing = {}
    for name, scenario in folders.items():
        judgement = judge(write(derive(scenario), tmp_path / name))
        for check in judgement.checks:
            assert not any(ord(ch) < 32 or ord(ch) == 127 for ch in check.detail), (name, check.name, check.detail)
            assert "[2J" not in check.detail, (name, check.name, check.detail)
        failing[name] = {(c.scope, c.name) for c in judgement.checks if c.ok is False}
    assert {("study", "killTriggered"), ("kill 1", "killEvidence"), ("study", "contractKept")} <= failing["renamed"]
    said = {name: [c.detail for c in judge(tmp_path / name).checks] for name in folders}
    assert any("arms.jsonl's fired line for kill 1 names no run" in d for d in said["renamed"]), said
    assert any("run a run with an invalid id (planned at seq" in d for d in said["repeated"]), said
    assert ("kill 1 · d1", "chargedOnce") in failing["repeated"], failing["repeated"]
