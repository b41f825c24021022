"""Times as exact numbers of seconds since the epoch (``Fraction``), and the tolerances used.

An RFC 3339 string is read by hand (the standard library accepts more than
the contract does); an epoch number (``sinceEpoch``, a float) and Docker's
``time`` / ``timeNano`` are turned into the same exact kind, so that every
comparison is of one kind of number and no rounding decides a verdict.
"""

from __future__ import annotations

import calendar
import re
import time
from fractions import Fraction
from typing import Any

from tests.oracle.reading import is_int

# The console stamps its times with milliseconds, truncated: two stamps of one moment may
# differ by one.
MS = Fraction(1, 1000)
MS_SLACK = Fraction(2, 1000)
# docs/contract.md ("Controllers"): kill.json's at and the keeper's end both round to the millisecond,
# so the killed controller's end may read a millisecond before the kill; a start is stamped before the
# spawn and a record's seenAt when the console read it, both to the millisecond.
KEEPER_SLACK = Fraction(1, 1000)
SEEN_SLACK = Fraction(2, 1000)
# docs/contract.md ("Controllers", RECORD_LAG; "Records are written while a controller runs"): a record's
# at may have one fraction digit: a record dated up to this before a start or after an end was that
# controller's.
RECORD_LAG = Fraction(1)
# docs/contract.md ("Controllers", RESUMED_OVER): "a `start` of another pid less than this before the kill,
# while the killed controller still ran, was started over it (a line repeating the killed controller's own
# start is no other controller: `exitedCleanly`'s)" (killDelivered, "One at a time").
RESUMED_OVER = Fraction(1)
# docs/contract.md (killEvidence): the window's resultSeenEpoch is timeline.jsonl's seenAt of its
# resultSeq to the millisecond: one console's clock wrote both.
WRITTEN_MS = Fraction(1, 1000)
# docs/contract.md (killEvidence): a time's text and its epoch number (since/sinceEpoch, until/untilEpoch)
# agree to the microsecond: 2 µs, as a float's rounding may move an epoch past one.
TEXT_SLACK = Fraction(2, 10**6)
# docs/contract.md (killEvidence, "kill.json's moment, written twice"): each time's text is its epoch truncated
# to the millisecond, the epoch in [text, text + 1 ms) "within a float's rounding": this much either side.
FLOAT_SLACK = Fraction(1, 10**6)
# "within a second": the contract's tolerance between two clocks (the runtime's and the
# console's) and between a die and what it is compared with.
SECOND = Fraction(1)
# The largest time a date can have: the end of the year 9999.
LAST = Fraction(calendar.timegm((9999, 12, 31, 23, 59, 59, 0, 0, 0)) + 1)

_RFC3339 = re.compile(
    r"(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(?:\.(\d+))?([Zz]|\+00:00)",
    re.ASCII,
)


def parse_time(value: Any) -> Fraction | None:
    """An RFC 3339 UTC time (``Z``, ``z`` or ``+00:00``; any number of fraction digits), else None."""
    if not isinstance(value, str):
        return None
    m = _RFC3339.fullmatch(value)
    if m is None:
        return None
    year, month, day, hour, minute, second = (int(m.group(i)) for i in range(1, 7))
    if not (1 <= month <= 12 and 1 <= day <= calendar.monthrange(year if year > 0 else 4, month)[1]):
        return None
    # A leap second (:60) cannot be placed on the epoch's line: refused (README.md, open questions).
    if hour > 23 or minute > 59 or second > 59 or year == 0:
        return None
    whole = calendar.timegm((year, month, day, hour, minute, second, 0, 0, 0))
    frac = m.group(7)
    return Fraction(whole) + (Fraction(int(frac), 10 ** len(frac)) if frac else Fraction(0))


def epoch(value: Any) -> Fraction | None:
    """An epoch number of seconds (int or float), a time, else None.

    docs/contract.md ("Hostile evidence"): "A time written as epoch seconds (`sinceEpoch`, `untilEpoch`,
    `resultSeenEpoch`, an event's `time` and `timeNano`, ...) is a finite number greater than 0 and before the
    year 10 000: 0 is no time (it is what a clock never read holds), and a field that holds it is not of its
    type."  So 0 (0.0, -0.0), anything below it and anything from 10000-01-01T00:00:00Z on is None (README.md,
    open question 82).  Where a field may hold a time not taken, its 0 is ``not_taken`` first."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    try:
        f = Fraction(value)
    except (ValueError, OverflowError):
        return None
    return f if 0 < f < LAST else None


def not_taken(value: Any) -> bool:
    """A number written 0 (0, 0.0, -0.0) in a field that holds a time that may not have been taken.

    docs/contract.md ("Hostile evidence"): "Where a field holds a time that may not have been taken, 0 says so
    and that time is not compared: `kill.json`'s `triggerSeenEpoch`, `frozenEpoch`, `killSentEpoch` and
    `killReturnedEpoch` (below), and `launches.jsonl`'s `startTime`" (README.md, open question 82).  Such a 0 is
    of its field's type, and is no time: the caller does not compare it."""
    return not isinstance(value, bool) and isinstance(value, (int, float)) and value == 0


def event_time(event: dict[str, Any]) -> tuple[Fraction | None, Fraction | None, str | None]:
    """(start, end, problem) of a runtime event: ``timeNano`` is a point; ``time`` alone is its whole second."""
    t = event.get("time")
    tn = event.get("timeNano")
    if t is None and tn is None:
        return None, None, "neither time nor timeNano"
    # Docker's time (epoch seconds) and timeNano (the same in nanoseconds) are times as epoch numbers too: 0 is
    # no time, "a field that holds it is not of its type" (docs/contract.md, "Hostile evidence"; README.md, open
    # question 82), and the line is not an event.
    if t is not None and not (is_int(t) and isinstance(t, int) and 0 < t < LAST):
        return None, None, "time is not a date"
    if tn is not None and not (is_int(tn) and isinstance(tn, int) and 0 < tn < LAST * 10**9):
        return None, None, "timeNano is not a date"
    if tn is not None:
        point = Fraction(tn, 10**9)
        if t is not None and abs(point - t) > SECOND:
            return None, None, "time and timeNano disagree by more than a second"
        return point, point, None
    assert isinstance(t, int)
    return Fraction(t), Fraction(t + 1), None


def show(t: Fraction | None) -> str:
    """A time for a reason: RFC 3339 with milliseconds."""
    if t is None:
        return "?"
    whole = int(t)
    ms = int((t - whole) * 1000)
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(whole)) + f".{ms:03d}Z"
