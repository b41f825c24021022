"""The controllers of a study, from ``launches.jsonl``: who ran when, and whether the study finished.

A controller is a ``start`` line and the first ``end`` of its pid after it.
The lines are replayed **by their times** (docs/contract.md, "Controllers":
the lines of one millisecond in the file's order) as a small automaton
(nothing running, or one controller running); a line with no transition
from the state it meets is a violation of "one controller at a time", which
``exitedCleanly`` reports, and so is a line earlier than the line before it
in the file by more than ``KEEPER_SLACK`` (``exitedCleanly`` alone: the story is still told by time).
An ``end`` of a pid that no start left running says nothing; one of a pid that no start launched is a
contradiction.  A line that is not a launch (``evidence.load_launches``) leaves the file unreadable:
``exitedCleanly`` and every kill's ``killDelivered``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction
from itertools import pairwise

from tests.oracle.evidence import Launch, Launches
from tests.oracle.times import KEEPER_SLACK, MS_SLACK, RECORD_LAG, SEEN_SLACK, show


@dataclass
class Controller:
    start: Launch
    end: Launch | None = None

    @property
    def pid(self) -> int:
        return self.start.pid

    @property
    def clean(self) -> bool:
        return self.end is not None and self.end.code == 0 and self.end.signal is None

    def lived_at(self, t: Fraction) -> bool:
        """Whether a record dated t (its own ``at``, the writer's clock) lies in this controller's life:
        from ``RECORD_LAG`` before its ``start`` to ``RECORD_LAG`` after its ``end``; a controller with no
        end has none yet (docs/contract.md, "Records are written while a controller runs": ``at`` may have
        a single fraction digit)."""
        return self.start.at - RECORD_LAG <= t and (self.end is None or t <= self.end.at + RECORD_LAG)


@dataclass
class Controllers:
    readable: bool
    reason: str | None = None
    items: list[Controller] = field(default_factory=list)
    violations: list[str] = field(default_factory=list)  # one-at-a-time and order breaks, each with its line
    # Lines earlier than the line before them by more than KEEPER_SLACK; each is among the violations too
    # (exitedCleanly's: README.md, open question 27).
    order_breaks: list[str] = field(default_factory=list)
    # launches.jsonl's start lines (line, pid, at), read even when a line is not a launch; None when the file
    # could not be read at all (evidence.Launches.starts).
    starts: list[tuple[int, int, Fraction]] | None = None
    # Every end line, by time (the lines of one millisecond in the file's order): a killed controller's end is
    # "the first end of kill.json's pid at or after the kill's at" (docs/contract.md, killDelivered), even one
    # the replay gave no controller (a controller started over the killed one took its place).
    ends: list[Launch] = field(default_factory=list)

    @property
    def final(self) -> Controller | None:
        return self.items[-1] if self.items else None

    @property
    def finished(self) -> bool:
        """The final controller ended with exit 0 (docs/contract.md, "Controllers").  A file that cannot be
        read whole cannot tell, and counts as finished (its row in "Which check a file fails"): nothing is
        then left "to come", so nothing missing can hide behind a ``?``.  A file read whole with no
        controller at all (empty, or only an end line) has not finished: the study can still be started
        with ``--resume`` (README.md, open question 40; ``outcome.json`` decides otherwise, in study.py)."""
        if not self.readable:
            return True
        return self.final is not None and self.final.clean

    def first_start_after(self, t: Fraction) -> Controller | None:
        for c in self.items:
            if c.start.at >= t - SEEN_SLACK:
                return c
        return None

    def end_after(self, pid: int, t: Fraction) -> Launch | None:
        """The first end of pid at or after t (KEEPER_SLACK: the keeper's end and kill.json's at both round to
        the millisecond), by time."""
        return next((e for e in self.ends if e.pid == pid and e.at >= t - KEEPER_SLACK), None)

    def lived_at(self, t: Fraction) -> Controller | None:
        """The first controller in whose life a record dated t lies, if any."""
        for c in self.items:
            if c.lived_at(t):
                return c
        return None


def _ms(t: Fraction) -> int:
    """The millisecond a time falls in: the lines of one millisecond keep the file's order."""
    return int(t * 1000 // 1)


def replay(launches: Launches) -> Controllers:
    if not launches.readable:
        return Controllers(readable=False, reason=launches.reason, starts=launches.starts)
    cs = Controllers(readable=True, starts=launches.starts)
    running: Controller | None = None
    previous_end: Launch | None = None
    for before, line in pairwise(launches.lines):
        # docs/contract.md: a line earlier than the one before it by more than KEEPER_SLACK breaks the order.
        if line.at < before.at - KEEPER_SLACK:
            cs.order_breaks.append(f"launches.jsonl line {line.line} is earlier than line {before.line}")
    cs.violations += cs.order_breaks
    launched = {line.pid for line in launches.lines if line.event == "start"}
    by_time = sorted(launches.lines, key=lambda x: (_ms(x.at), x.line))
    cs.ends = [line for line in by_time if line.event == "end"]
    for line in by_time:
        where = f"launches.jsonl line {line.line}"
        if line.event == "start":
            if running is not None:
                cs.violations.append(
                    f"{where}: pid {line.pid} starts while pid {running.pid} (line {running.start.line}) has no end"
                )
            # docs/contract.md, "Then resumes": every start after the first says resume: true; the first
            # may say either (a folder made and never started is started by --resume).
            if cs.items and not line.resume:
                cs.violations.append(f"{where}: resume is false for a later start")
            if previous_end is not None and line.at < previous_end.at - MS_SLACK:
                cs.violations.append(
                    f"{where}: starts at {show(line.at)}, before the previous end at {show(previous_end.at)}"
                )
            running = Controller(line)
            cs.items.append(running)
        else:
            if running is None or running.pid != line.pid:
                if line.pid not in launched:
                    cs.violations.append(f"{where}: an end of pid {line.pid}, which no start launched")
                # Else a pid no start left running: it says nothing (a slow keeper may write its own
                # end after the console wrote the status as lost).
                continue
            if line.at < running.start.at - MS_SLACK:
                cs.violations.append(f"{where}: pid {line.pid} ends at {show(line.at)}, before its start")
            running.end = line
            previous_end = line
            running = None
    if not cs.items:
        cs.violations.append("launches.jsonl: no controller start")
    return cs
