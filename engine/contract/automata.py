"""The contract's entities as state machines, written as data, and one step of a replay through them.

A :class:`Machine` is a table of :class:`Row`: from a state, on an event,
to the next state.  A row either is part of the story sound evidence tells
(``breaks`` is None) or names the check a contradiction fails and how to say
it (``breaks``): the replay takes that row too, so that one wrong event does
not hide every later one.  An event that meets a state no row names is a
contradiction of its own (:meth:`Machine.step` gives None): the replay says
which event met which state.  A new rule of the contract is a new row.

The machines are replayed over the one timeline of :mod:`.judge.timeline` by the
modules that own each entity (:mod:`.judge.controllers`, :mod:`.contract`); a check is a view of
what the replay rejected.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field


@dataclass(frozen=True, slots=True)
class Row:
    """From ``state``, ``event`` leads to ``next``; ``breaks`` names the check a contradiction fails, ``rule``
    the contract's rule (§2a, §6.2) where one is numbered, and ``says`` the rule in words (``{...}`` filled
    from the event's facts).  ``unknown``: what the row names may still be undone (a study that can be resumed
    may still write its end, §6.6): the check is ``?``, not ``✗``.  ``then``: the rule as a proof states it."""

    state: str
    event: str
    next: str
    breaks: str | None = None
    says: str = ""
    rule: int | None = None
    unknown: bool = False
    then: str = ""  # what the contract makes of the event, for the proof (where the row's words are not enough)


@dataclass(frozen=True)
class Machine:
    """One entity's story: its states, in order, and the table of its transitions."""

    name: str
    states: tuple[str, ...]
    rows: tuple[Row, ...]
    _table: dict[tuple[str, str], Row] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        table: dict[tuple[str, str], Row] = {}
        for row in self.rows:
            if row.state not in self.states or row.next not in self.states:
                raise ValueError(f"{self.name}: row {row} names a state the machine does not have")
            if (row.state, row.event) in table:
                raise ValueError(f"{self.name}: two rows from {row.state!r} on {row.event!r}")
            table[(row.state, row.event)] = row
        object.__setattr__(self, "_table", table)

    @property
    def start(self) -> str:
        return self.states[0]

    @property
    def events(self) -> frozenset[str]:
        return frozenset(row.event for row in self.rows)

    def step(self, state: str, event: str) -> Row | None:
        """The row ``event`` takes from ``state``, or None: no row, a contradiction of its own."""
        return self._table.get((state, event))

    def take(self, state: str, event: str) -> Row:
        """The row ``event`` takes from ``state``, of a machine whose table names one for it (a whole table, or a
        state and event its replay can only meet so): no row is this code's fault, not the evidence's."""
        row = self._table.get((state, event))
        if row is None:
            raise LookupError(f"{self.name}: no row from {state!r} on {event!r}")
        return row

    def replay(self, events: Iterable[str], end: str, start: str | None = None) -> list[Row]:
        """The rows ``events`` take one after another from ``start`` (the machine's first state), then the row the
        timeline's ``end`` takes from where they left it: one row an event, the end's last."""
        state = self.start if start is None else start
        taken = []
        for event in events:
            row = self.take(state, event)
            taken.append(row)
            state = row.next
        taken.append(self.take(state, end))
        return taken


@dataclass(frozen=True, slots=True)
class Where:
    """A line of a file of the evidence folder: where an event came from, for a proof."""

    file: str
    line: int

    def __str__(self) -> str:
        return f"{self.file} line {self.line}" if self.line > 0 else self.file  # 0: the file as a whole


@dataclass(frozen=True, slots=True)
class Proof:
    """Why a check fails, stated as Elle states an anomaly: *let* the events (each with its file and line, and what
    it says), *then* what the contract makes of them, which contradicts what the evidence says.

    The short text fits a table cell; :meth:`as_json` is whole, for ``report.json``.
    """

    let: tuple[tuple[Where, str], ...]  # (where, what it says)
    then: str

    @property
    def text(self) -> str:
        lets = "; ".join(f"{where}: {what}" for where, what in self.let)
        return f"Let {lets}. Then {self.then}: a contradiction."

    def as_json(self) -> dict[str, object]:
        return {
            "let": [{"file": where.file, "line": where.line, "says": what} for where, what in self.let],
            "then": self.then,
            "text": self.text,
        }


def unexpected(machine: Machine, state: str, event: str) -> str:
    """The words of an event no row takes: which event met which state."""
    return f"the {machine.name} was {state} and no {event} can follow that"


def proof(where: Where, says: str, then: str, *more: tuple[Where, str]) -> Proof:
    """A proof from one event (and any more it contradicts): what it says, and what the contract makes of it."""
    return Proof(((where, says), *more), then)
