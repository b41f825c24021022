"""The judge compares what a folder holds twice (contract §6.9): each copy sound alone, the two disagreeing, is ✗.

The folders are ``tests/corpus.py``'s sound folder, changed in one copy of one
fact; the expected check is the one ``engine/judge/twice.py`` names for the row.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from studymon.engine.evidence.heldtwice import HELD_TWICE
from studymon.engine.evidence.records import KillRecord
from studymon.engine.io.clock import rfc3339_ms
from studymon.engine.judge import judge
from studymon.engine.judge.twice import COMPARED, NOT_YET, kill_moment
from tests.corpus import derive, sound, write

Files = dict[str, Any]
KILL = "kills/1/kill.json"


def _not_holding(out: Path) -> dict[tuple[str, str], tuple[bool | None, str]]:
    return {(c.scope, c.name): (c.ok, c.detail) for c in judge(out).checks if c.ok is not True}


def _kill(f: Files) -> dict[str, Any]:
    return f[KILL]  # type: ignore[no-any-return]


def _sent_later(f: Files) -> None:
    _kill(f)["killSentEpoch"] += 2.0


def _sent_at_text(f: Files) -> None:
    _kill(f)["killSentAt"] = rfc3339_ms(_kill(f)["killSentEpoch"] + 1)


def _frozen_after_the_kill(f: Files) -> None:
    _kill(f)["frozenEpoch"] = _kill(f)["killSentEpoch"] + 0.5


def _frozen_length(f: Files) -> None:
    _kill(f)["frozenMs"] = 999.0


def _returned_before_sent(f: Files) -> None:
    _kill(f)["killReturnedEpoch"] = _kill(f)["killSentEpoch"] - 0.5


def _frozen_text(f: Files) -> None:
    _kill(f)["frozenAt"] = rfc3339_ms(_kill(f)["frozenEpoch"] - 3)


def _result_seen_earlier(f: Files) -> None:
    window = f["kills/1/container-events-window.json"]
    entry = next(e for e in window["targets"].values() if e.get("resultSeq") is not None)
    entry["resultSeenEpoch"] -= 0.05


CASES: list[tuple[str, Callable[[Files], None], str]] = [
    ("kill-sent", _sent_later, "kill.json: at and killSentEpoch are not one time (the kill)"),
    ("kill-sent", _sent_at_text, "kill.json: killSentAt is not at: one moment, written twice"),
    ("kill-order", _frozen_after_the_kill, "kill.json: killSentEpoch comes before frozenEpoch"),
    ("kill-order", _returned_before_sent, "kill.json: killReturnedEpoch comes before killSentEpoch"),
    ("frozen", _frozen_length, "kill.json: frozenMs is not killSentEpoch - frozenEpoch"),
    ("frozen", _frozen_text, "kill.json: frozenAt and frozenEpoch are not one time (the freeze)"),
    ("result-seen", _result_seen_earlier, "resultSeenEpoch is not when timeline.jsonl saw seq"),
]


@pytest.mark.parametrize("row, change, reason", CASES, ids=[f"{c[0]}-{c[1].__name__}" for c in CASES])
def test_a_kill_s_moment_written_twice_disagrees(
    tmp_path: Path, row: str, change: Callable[[Files], None], reason: str
) -> None:
    assert row in COMPARED and "killEvidence" in COMPARED[row]
    assert _not_holding(write(derive(sound()), tmp_path / "sound")) == {}
    files = derive(sound())
    change(files)
    got = _not_holding(write(files, tmp_path / "s"))
    assert list(got) == [("kill 1", "killEvidence")]
    ok, detail = got[("kill 1", "killEvidence")]
    assert ok is False and reason in detail


def test_the_console_s_own_kill_json_agrees_with_itself() -> None:
    """What the writer puts in kill.json passes, a kill the console made and an end it did not make alike."""
    made = KillRecord("auto", at_epoch=1_780_000_010.1234, pid=7, before_kill_seq=3, since_epoch=1_780_000_010.1201)
    made.trigger_seen, made.frozen, made.kill_returned = 1_780_000_010.12, 1_780_000_010.1202, 1_780_000_010.125
    assert kill_moment(made.to_json()) == []
    manual = KillRecord("manual", at_epoch=1_780_000_010.5, pid=7, before_kill_seq=3, since_epoch=1_780_000_010.4)
    manual.frozen, manual.kill_returned = 1_780_000_010.4, 1_780_000_010.5  # nobody saw a trigger: 0
    assert kill_moment(manual.to_json()) == []
    broken = made.to_json() | {"frozenEpoch": "soon"}
    assert kill_moment(broken) == ["kill.json: frozenEpoch or frozenAt is not a time"]


def test_every_fact_held_twice_is_compared_by_the_judge_or_said_not_yet() -> None:
    """engine/evidence/heldtwice.py lists the facts; engine/judge/twice.py says where each is compared, or why not yet.
    A row added to the table without either fails here."""
    rows = {row.name for row in HELD_TWICE}
    assert set(COMPARED) & set(NOT_YET) == set()
    assert rows - set(COMPARED) - set(NOT_YET) == set(), "a fact held twice that the judge does not place"
    assert (set(COMPARED) | set(NOT_YET)) - rows == set(), "a row the table does not have"
