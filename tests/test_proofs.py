"""Every ✗ of every corpus case states its proofs, and they are the ones kept in ``tests/corpus_proofs.json``;
every check of a case that does not hold says the details kept in ``tests/corpus_details.json``.

A proof is what a reader of the report is given to see why a check failed (§6.8.3: each contradicting
event with its file and line, "Let … Then … a contradiction"), and a detail is what the table's cell says:
their words are output.  A change to a proof's or a detail's words, or to the lines they name, fails this
test; when the change is meant, ``STUDYMON_WRITE_PROOFS=1 python3 -m pytest tests/test_proofs.py`` writes
the files again, and their diff is the change to read.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from studymon.engine.judge import judge
from studymon.engine.judge.facts import LedgerFacts
from studymon.engine.judge.study import kill_triggered
from tests.corpus import CORPUS, derive, sound, write
from tests.test_checks import STUDY, _at_container, _die_of, armed, evidence, fired_line, one_kill

# A kill at a container point, each way it can be wrong (tests/test_checks.py holds their details): the proofs
# killTriggered states for each.  (point, its triggerEvent, the fired line's run)
CONTAINER_POINTS = {
    "no triggerEvent": ("container:die/diagnosis", None, "d1"),
    "an event of another action": ("container:die", _die_of("d1", action="start"), "d1"),
    "not a run container of the study": ("container:die", _die_of("d1", name="other-d1"), "d1"),
    "the fired line names another run": ("container:die", _die_of("d1"), "d2"),
    "a run of another purpose": ("container:die/ablation", _die_of("d1"), "d1"),
    "the point had passed": ("container:start", _die_of("d1", action="start"), "d1"),
    "no such event": ("container:die", {"Type": "container", "Action": "die"}, "d1"),
    "a run the ledger holds no record of": ("container:die", _die_of("zz9"), "zz9"),
    "a run the ledger never planned, at a point of a purpose": ("container:die/diagnosis", _die_of("d1"), "d1"),
}
# The ledger a point is judged against, where it is not one_kill()'s own.
UNPLANNED = {"a run the ledger never planned, at a point of a purpose"}


def _without_d1_s_plan(files: dict[str, Any]) -> dict[str, Any]:
    files["study/ledger.jsonl"] = [
        r for r in files["study/ledger.jsonl"] if not (r["kind"] == "runPlanned" and r["content"].get("run") == "d1")
    ]
    return files

KEPT = Path(__file__).with_name("corpus_proofs.json")
KEPT_DETAILS = Path(__file__).with_name("corpus_details.json")


def proofs(tmp: Path) -> dict[str, dict[str, list[str]]]:
    """Per corpus case, per check that does not hold, the texts of its proofs; then each wrong container point's."""
    said: dict[str, dict[str, list[str]]] = {}
    for n, case in enumerate(CORPUS):
        out = write(case.build(), tmp / f"c{n}")
        said[case.name] = {
            f"{c.scope} · {c.name}": [p.text for p in c.proofs] for c in judge(out).checks if c.ok is False
        }
    for name, (point, event, run) in CONTAINER_POINTS.items():
        files = _without_d1_s_plan(one_kill()) if name in UNPLANNED else one_kill()
        ev, acc = evidence(files)
        _at_container(ev, fired_line(files), point, event, run)
        c = kill_triggered(armed(files), [ev], acc, LedgerFacts(), True, STUDY)
        assert c is not None and c.ok is False, name
        said[f"container point: {name}"] = {f"{c.scope} · {c.name}": [p.text for p in c.proofs]}
    return said


def assert_kept(got: dict[str, Any], kept_in: Path) -> None:
    """``got`` is what ``kept_in`` holds, case by case (``STUDYMON_WRITE_PROOFS=1``: written there first)."""
    if os.environ.get("STUDYMON_WRITE_PROOFS") == "1":
        kept_in.write_text(json.dumps(got, indent=1, ensure_ascii=False, sort_keys=True) + "\n", encoding="utf-8")
    kept = json.loads(kept_in.read_text(encoding="utf-8"))
    assert set(got) == set(kept), "corpus cases added or gone: write the file again (see the docstring)"
    for case in got:
        assert got[case] == kept[case], case


def test_every_failed_check_of_the_corpus_states_its_kept_proofs(tmp_path: Path) -> None:
    got = proofs(tmp_path)
    # Every ✗ is proven (a check that fails says why, with the lines), and as kept.
    unproven = [(case, check) for case, checks in got.items() for check, texts in checks.items() if not texts]
    assert not unproven, f"checks that fail without a proof: {unproven[:10]}"
    assert_kept(got, KEPT)


def details(tmp: Path) -> dict[str, dict[str, str]]:
    """Per corpus case, the detail of each check that does not hold (✗ or ?); and of every check of the sound folder."""
    said = {"the sound folder": {f"{c.scope} · {c.name}": c.detail for c in judge(write(derive(sound()), tmp / "s")).checks}}
    for n, case in enumerate(CORPUS):
        checks = judge(write(case.build(), tmp / f"c{n}")).checks
        said[case.name] = {f"{c.scope} · {c.name}": c.detail for c in checks if c.ok is not True}
    return said


def test_every_check_of_the_corpus_that_does_not_hold_says_its_kept_detail(tmp_path: Path) -> None:
    assert_kept(details(tmp_path), KEPT_DETAILS)


def test_a_proof_in_report_json_lets_its_events_by_file_and_line_then_says_why() -> None:
    """The whole proof as report.json writes it: ``let`` (each event's file, line and what it says), ``then``,
    and the short ``text`` of the table's cell."""
    from studymon.engine.contract.automata import Proof, Where

    p = Proof(((Where("study/ledger.jsonl", 7), "runStarted d1"), (Where("kills/1/kill.json", 0), "target d1")),
              "a run in flight at the kill is a target")
    body = p.as_json()
    assert body["let"] == [{"file": "study/ledger.jsonl", "line": 7, "says": "runStarted d1"},
                           {"file": "kills/1/kill.json", "line": 0, "says": "target d1"}]
    assert body["then"] == "a run in flight at the kill is a target" and body["text"] == p.text


def test_kill_json_s_moments_each_held_to_its_text() -> None:
    """``triggerSeenAt``, ``frozenAt`` and ``at`` are their epochs to the millisecond: one a second off is said."""
    from studymon.engine.io.clock import rfc3339_ms
    from studymon.engine.judge.twice import kill_moment

    t = 1_800_000_000.2345
    obj = {"at": rfc3339_ms(t + 0.002), "killSentEpoch": t + 0.002, "frozenAt": rfc3339_ms(t + 0.001),
           "frozenEpoch": t + 0.001, "triggerSeenAt": rfc3339_ms(t), "triggerSeenEpoch": t, "sinceEpoch": t + 0.0005,
           "killReturnedEpoch": t + 0.003}
    assert kill_moment(obj) == []
    for text, number in (("at", "killSentEpoch"), ("frozenAt", "frozenEpoch"), ("triggerSeenAt", "triggerSeenEpoch")):
        off = {**obj, number: obj[number] + 1}
        assert any(f"{text} and {number} are not one time" in said for said in kill_moment(off)), (text, kill_moment(off))
