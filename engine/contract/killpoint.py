"""Kill points: the moment a kill names (contract §7), as an operator writes it and as the engine counts it.

Two sources of moments:

* ``after:KIND[/PURPOSE][#N]``: right after the N-th ledger record of
  ``KIND`` (for run records, of a run whose ``runPlanned`` has that
  ``PURPOSE``);
* ``container:ACTION[/PURPOSE][#N]``: right after the runtime's N-th
  ``create``, ``start`` or ``die`` event of a container of the study (of a
  run with that purpose).

Either may be a power loss instead of a kill (contract §9.3):
``power:after:...[@STATE]``, ``power:container:...[@STATE]``, where ``STATE``
is ``synced`` (the default), ``synced+K``, ``torn`` or ``zeros``.

``N`` counts from 1 and defaults to 1.  The seed's point, the first
diagnosis run's start, is ``after:runStarted/diagnosis``.  A point is parsed
once, here; a text that is not one is refused with the grammar
(:class:`BadPoint`), before anything is written.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from studymon.engine.contract.rules import KINDS, RUN_KINDS

AFTER = "after"
CONTAINER = "container"
POWER = "power"
# The crash states a power loss leaves the study's files in (§9.3); synced+K keeps K records written since.
_STATE = re.compile(r"synced(?:\+[1-9][0-9]{0,5})?|torn|zeros")
DEFAULT_STATE = "synced"
# The container actions a point can name: the ones every runtime reports for a run's container.
ACTIONS = ("create", "start", "die")
# Written in a point as it is in the ledger's runPlanned.purpose: letters, digits, '_', '.', '-'.
_PURPOSE = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,62}")
_POINT = re.compile(r"(?P<source>[a-z]+):(?P<what>[A-Za-z]+)(?:/(?P<purpose>[^#]*))?(?:#(?P<nth>[^#]*))?")
NTH_MAX = 1_000_000

GRAMMAR = (
    "a kill point is after:KIND[/PURPOSE][#N] or container:ACTION[/PURPOSE][#N], e.g. after:runStarted/diagnosis, "
    "after:charge/ablation#2, container:die/diagnosis; KIND is one of "
    + ", ".join(KINDS)
    + " (PURPOSE only for the run records "
    + ", ".join(k for k in KINDS if k in RUN_KINDS)
    + "); ACTION is one of "
    + ", ".join(ACTIONS)
    + "; N counts from 1; power:POINT[@STATE] is a power loss there instead of a kill, STATE one of synced "
    "(the default), synced+K, torn, zeros"
)


class BadPoint(ValueError):
    """A text that is not a kill point; the message names what is wrong and gives the grammar."""


@dataclass(frozen=True, slots=True)
class KillPoint:
    """One kill point: where (``after`` a record, or a ``container`` event), of what, for which purpose, which one."""

    source: str  # AFTER or CONTAINER
    what: str  # the record's kind, or the container's action
    purpose: str | None = None
    nth: int = 1
    state: str | None = None  # a power loss's crash state (§9.3); None: a kill

    def __str__(self) -> str:
        purpose = f"/{self.purpose}" if self.purpose is not None else ""
        nth = f"#{self.nth}" if self.nth != 1 else ""
        text = f"{self.source}:{self.what}{purpose}{nth}"
        if self.state is None:
            return text
        return f"{POWER}:{text}" + (f"@{self.state}" if self.state != DEFAULT_STATE else "")

    @property
    def power(self) -> bool:
        """Whether the point is a power loss (the study's files lose what was not durable), not a kill."""
        return self.state is not None

    @property
    def on_record(self) -> bool:
        return self.source == AFTER

    def matches(self, what: str, purpose: str | None) -> bool:
        """Whether a record of kind ``what`` (or a container event of action ``what``), of a run with ``purpose``
        (None: no run, or its purpose not known), is one this point counts."""
        return what == self.what and (self.purpose is None or purpose == self.purpose)

    @classmethod
    def parse(cls, text: str) -> KillPoint:
        """The point ``text`` names; :class:`BadPoint` saying why when it names none."""
        if text.startswith(f"{POWER}:"):
            where, at, state = text[len(POWER) + 1 :].partition("@")
            if at and not _STATE.fullmatch(state):
                raise BadPoint(f"{text!r}: {state!r} is not a crash state (synced, synced+K, torn, zeros): {GRAMMAR}")
            if where.startswith(f"{POWER}:"):
                raise BadPoint(f"{text!r}: one power: is enough: {GRAMMAR}")
            try:
                point = cls.parse(where)
            except BadPoint as exc:
                raise BadPoint(f"{text!r}: after {POWER}:, {exc}") from None
            return cls(point.source, point.what, point.purpose, point.nth, state if at else DEFAULT_STATE)
        m = _POINT.fullmatch(text)
        if m is None:
            raise BadPoint(f"{text!r} is not a kill point: {GRAMMAR}")
        source, what, purpose, nth_text = m["source"], m["what"], m["purpose"], m["nth"]
        if source == AFTER:
            if what not in KINDS:
                raise BadPoint(f"{text!r}: {what!r} is not a kind of record: {GRAMMAR}")
            if purpose is not None and what not in RUN_KINDS:
                raise BadPoint(f"{text!r}: a {what} record has no purpose (only run records do): {GRAMMAR}")
        elif source == CONTAINER:
            if what not in ACTIONS:
                raise BadPoint(f"{text!r}: {what!r} is not a container action a point can name: {GRAMMAR}")
        else:
            raise BadPoint(f"{text!r}: a point begins with {AFTER}: or {CONTAINER}:, not {source}: - {GRAMMAR}")
        if purpose is not None and not _PURPOSE.fullmatch(purpose):
            raise BadPoint(f"{text!r}: {purpose!r} is not a purpose (letters, digits, _ . -): {GRAMMAR}")
        nth = 1
        if nth_text is not None:
            if not nth_text.isdigit() or not nth_text.isascii() or not 1 <= int(nth_text) <= NTH_MAX:
                raise BadPoint(f"{text!r}: #{nth_text} is not a count from 1 to {NTH_MAX}: {GRAMMAR}")
            nth = int(nth_text)
        return cls(source, what, purpose, nth)


# The seed's point: the instant the first diagnosis run starts (--kill-after-first-diagnosis-start).
SEED = KillPoint(AFTER, "runStarted", "diagnosis")


def parse_kill_option(value: str) -> tuple[str, KillPoint]:
    """``--kill ID:POINT``: the study's id and its point (the id is checked where the ids of the command are)."""
    study, sep, point = value.partition(":")
    if not sep or not study:
        raise BadPoint(f"--kill {value!r}: write ID:POINT, e.g. alpha:after:runStarted/diagnosis; {GRAMMAR}")
    try:
        return study, KillPoint.parse(point)
    except BadPoint as exc:
        raise BadPoint(f"--kill {value!r}: {exc}") from None


@dataclass(slots=True)
class ArmedPoint:
    """A point armed on a study, and how far it has counted.

    Counting begins once the point is the study's current one (the first
    armed, or the next once the one before fired or was missed): records of
    seq ``from_seq`` or earlier, and container events before ``from_time``
    (the runtime's clock), are not its moments.  ``from_seq`` is None while
    the point waits behind another.
    """

    point: KillPoint
    from_seq: int | None = None
    from_time: float | None = None
    seen: int = 0

    @property
    def current(self) -> bool:
        return self.from_seq is not None

    def begin(self, from_seq: int, from_time: float) -> None:
        """Become the current point: count the moments after ``from_seq`` (and runtime time ``from_time``)."""
        self.from_seq, self.from_time, self.seen = from_seq, from_time, 0

    def count(self, what: str, purpose: str | None, seq: int | None = None, at: float | None = None) -> bool:
        """Count one moment (a record of kind ``what`` and ``seq``, or a container event of action ``what`` at runtime
        time ``at``); whether it is the point's N-th, the one to kill at."""
        if self.from_seq is None or not self.point.matches(what, purpose):
            return False
        if seq is not None and seq <= self.from_seq:
            return False
        if at is not None and self.from_time is not None and at < self.from_time:
            return False
        self.seen += 1
        return self.seen == self.point.nth


def point_text(value: object) -> KillPoint | None:
    """The point an evidence file names (None when it names none, or not as a point)."""
    if not isinstance(value, str):
        return None
    try:
        return KillPoint.parse(value)
    except BadPoint:
        return None
