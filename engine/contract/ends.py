"""The end of a study's timeline as machines: the record it ends at (§6.7), nothing after it (rule 12), and every
started run's result (rule 14).

Replayed over the ledger's records as they come, by the accounts:

* :data:`ENDS` knows which record the study would end at if the ledger
  stopped here, and whether it is the one the template expects (one machine
  for each end a template may expect: ``halt``, ``export``, ``any``);
* :data:`AFTER` knows whether work was written after that record;
* :data:`RESULT` knows whether a run started has its result.

The timeline's end is an event too: :data:`FINISHED` (the study will not be
resumed) or :data:`PAUSED` (a resume may still write its end).  Each
machine's row on that event says whether the end holds: a row with
``breaks`` fails ``haltedAtExport``, or leaves it ``?`` where ``unknown``
says a resume may still undo it (§6.6).  ``haltedAtExport`` is the view of
the rows the end took in the first two, ``resultsAccounted`` (in part) of the
third; ``docs/contract.md`` ("Per study") says the same in words, and
``tests/test_ends.py`` takes every row.
"""

from __future__ import annotations

from collections.abc import Iterable

from studymon.engine.contract.automata import Machine, Row
from studymon.engine.contract.spec import EXPECT_ENDS

# The accounts' words for a full stop and for the kinds of work (rule 12); kept here so that the accounts can import
# this module, never the other way round.
FULL_STOP = "balance exhausted"
WORK_KINDS = frozenset(
    {"stageOpen", "decision", "runPlanned", "charge", "runStarted", "runResult", "diagnosisSettlement"}
)

# The records the end machines take, by what they mean to the end.
STOP, HALT, EXPORT, WORK = "full stop", "other halt", "export", "work"
# The timeline's end: the study finished (no resume will come) or paused (a resume may still come).
FINISHED, PAUSED = "finished", "paused"
RECORDS = (STOP, HALT, EXPORT, WORK)
TIMELINE_ENDS = (FINISHED, PAUSED)
CHECK = "haltedAtExport"

# The words of a broken end; ``{halt}``, ``{export}``, ``{work}`` are the seqs of the last such record, ``{kind}``
# the last work's kind, ``{what}`` and ``{end}`` the record the study ends at and its seq.
NO_HALT = "no halt in the ledger"
NO_EXPORT = "no export in the ledger"
NEITHER = "neither a full stop nor an export"
NOT_FULL = "the last halt (seq {halt}) is not " + repr(FULL_STOP)
EXPORT_AFTER = "an export (seq {export}) follows the halt (seq {halt})"
WORK_AFTER = "{kind} (seq {work}) comes after the {what} the study ends at (seq {end})"


def _ending(expect: str, state: str, event: str) -> str:
    """The record the study ends at, after ``event``: the state :data:`ENDS` goes to."""
    if event == WORK:
        return state
    if expect == "export":
        return "exported" if event == EXPORT else state
    if event == EXPORT:
        if expect == "any":
            return "exported"
        # Expecting a halt: an export after a full stop breaks the end; after another halt, that halt already does.
        return "export after" if state == "full stop" else state
    return event  # a halt: "full stop" or "other halt"


# What each state of :data:`ENDS` says at the timeline's end: None, the end the template expects.
_ENDING_WORDS: dict[str, dict[str, str | None]] = {
    "halt": {"none": NO_HALT, "full stop": None, "other halt": NOT_FULL, "export after": EXPORT_AFTER},
    "export": {"none": NO_EXPORT, "exported": None},
    "any": {"none": NEITHER, "full stop": None, "other halt": NOT_FULL, "exported": None},
}


def _timeline_end(state: str, event: str, says: str | None) -> Row:
    """The row of the timeline's end from ``state``: a contradiction (``?`` while paused) or none."""
    if says is None:
        return Row(state, event, state)
    return Row(state, event, state, CHECK, says, rule=12 if says is WORK_AFTER else None, unknown=event == PAUSED)


def _ends_machine(expect: str) -> Machine:
    words = _ENDING_WORDS[expect]
    states = tuple(words)
    rows = [Row(s, e, _ending(expect, s, e)) for s in states for e in RECORDS]
    rows += [_timeline_end(s, e, words[s]) for s in states for e in TIMELINE_ENDS]
    return Machine(f"study end ({expect})", states, tuple(rows))


def ends_at(expect: str, event: str) -> bool:
    """Whether a record the end machines call ``event`` is one a study expecting ``expect`` may end at."""
    if expect == "halt":
        return event in (STOP, HALT)
    if expect == "export":
        return event == EXPORT
    return event in (STOP, HALT, EXPORT)


def _after(expect: str, state: str, event: str) -> str:
    if ends_at(expect, event):
        return "ended"
    if event == WORK and state != "open":
        return "worked"
    return state


def _after_machine(expect: str) -> Machine:
    states = ("open", "ended", "worked")
    rows = [Row(s, e, _after(expect, s, e)) for s in states for e in RECORDS]
    rows += [_timeline_end(s, e, WORK_AFTER if s == "worked" else None) for s in states for e in TIMELINE_ENDS]
    return Machine(f"after the end ({expect})", states, tuple(rows))


# Which record the study ends at, per expected end: the sound story ends in "full stop" (halt), "exported" (export),
# or either (any).
ENDS = {expect: _ends_machine(expect) for expect in EXPECT_ENDS}
# Nothing after that record (rule 12): the sound story ends "ended" (or "open": no end record, which ENDS fails).
AFTER = {expect: _after_machine(expect) for expect in EXPECT_ENDS}
STUDY_MACHINES = (*ENDS.values(), *AFTER.values())


# What each kind of record is to the end machines (a halt is told by its reason: a full stop or another).
_EVENTS = {**dict.fromkeys(WORK_KINDS, WORK), "export": EXPORT}


class _Steps:
    """The end machines' states together, numbered, and the step from each on each event, worked out from the
    tables the first time it is taken and shared by every replay (a ledger meets a handful of them)."""

    def __init__(self) -> None:
        start = tuple(m.start for m in STUDY_MACHINES)
        self.states: list[tuple[str, ...]] = [start]
        self.numbers: dict[tuple[str, ...], int] = {start: 0}
        self.next: dict[tuple[int, str], int] = {}

    def learn(self, at: int, event: str) -> int:
        after = tuple(m.take(s, event).next for m, s in zip(STUDY_MACHINES, self.states[at], strict=True))
        number = self.numbers.get(after)
        if number is None:
            # Two threads may learn one state at once: each gets a number for it, and both name the same states.
            number = self.numbers[after] = len(self.states)
            self.states.append(after)
        self.next[(at, event)] = number
        return number


_STEPS = _Steps()


class StudyEnd:
    """The end machines of every expected end, replayed record by record: one lookup a record (the accounts take
    one for every record of work, so it is the hot path of judging a long ledger)."""

    __slots__ = ("at",)

    def __init__(self) -> None:
        self.at = 0  # the machines' states together, by their number in _STEPS

    def add(self, kind: str, reason: object = None) -> None:
        event = _EVENTS.get(kind) if kind != "halt" else (STOP if reason == FULL_STOP else HALT)
        if event is None:
            return
        after = _STEPS.next.get((self.at, event))
        self.at = after if after is not None else _STEPS.learn(self.at, event)

    @property
    def states(self) -> tuple[str, ...]:
        return _STEPS.states[self.at]

    def state(self, machine: Machine) -> str:
        return self.states[STUDY_MACHINES.index(machine)]

    def end(self, expect: str, finished: bool) -> list[Row]:
        """The rows the timeline's end takes for a study expecting ``expect``: its end record's, then rule 12's."""
        event = FINISHED if finished else PAUSED
        return [m.take(self.state(m), event) for m in (ENDS[expect], AFTER[expect])]


# --- a run's result (rule 14) -------------------------------------------------------------

STARTED, RESULTED = "runStarted", "runResult"
LOST = "the study finished without {run}'s result"
NO_RESULT_YET = "{run} has no result yet"


def _result_rows() -> tuple[Row, ...]:
    rows = []
    for state in ("unstarted", "started", "resulted"):
        rows.append(Row(state, STARTED, "started" if state == "unstarted" else state))
        # A result before any start breaks rule 3 (contractKept's); to rule 14 the run has its result all the same.
        rows.append(Row(state, RESULTED, "resulted"))
        for event in TIMELINE_ENDS:
            if state == "started":
                says = LOST if event == FINISHED else NO_RESULT_YET
                rows.append(Row(state, event, state, "resultsAccounted", says, rule=14, unknown=event == PAUSED))
            else:
                rows.append(Row(state, event, state))
    return tuple(rows)


# Rule 14 for one run: once started, it has its result by the study's end (lost is lost, whether or not a kill was
# in flight).  A second result is counted by the accounts and fails at once.
RESULT = Machine("run's result", ("unstarted", "started", "resulted"), _result_rows())


def step_result(state: str, kind: str) -> str:
    """A run's :data:`RESULT` state after one of its records (``kind``)."""
    if kind not in (STARTED, RESULTED):
        return state
    return RESULT.take(state, kind).next


def result_end(state: str, finished: bool) -> Row:
    """The row the timeline's end takes for a run in ``state``."""
    return RESULT.take(state, FINISHED if finished else PAUSED)


def broken(rows: Iterable[Row]) -> list[Row]:
    """The rows that break the end (fail, or ``?`` while paused)."""
    return [r for r in rows if r.breaks is not None]


# Every machine of the timeline's end, for the tests that take each row.
MACHINES = (*STUDY_MACHINES, RESULT)
