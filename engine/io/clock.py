"""Time formats shared by the ledger, the evidence and the runtimes."""

from __future__ import annotations

import re
import time
from datetime import UTC, datetime


def rfc3339_ms(t: float | None = None) -> str:
    """UTC time as RFC 3339 with milliseconds and ``Z`` (the ledger's ``at``)."""
    if t is None:
        t = time.time()
    dt = datetime.fromtimestamp(t, tz=UTC)
    return dt.strftime("%Y-%m-%dT%H:%M:%S.") + f"{dt.microsecond // 1000:03d}Z"


def rfc3339_ns(ns: int | None = None) -> str:
    """UTC time as RFC 3339 with nanoseconds, the way Docker writes ``StartedAt``."""
    if ns is None:
        ns = time.time_ns()
    sec, frac = divmod(ns, 1_000_000_000)
    dt = datetime.fromtimestamp(sec, tz=UTC)
    return dt.strftime("%Y-%m-%dT%H:%M:%S.") + f"{frac:09d}Z"


_UTC = re.compile(r"((\d{4})-(\d\d)-(\d\d))T(\d\d):(\d\d):(\d\d)(\.\d{1,9})?(?:Z|\+00:00)")
_DAYS: dict[str, int] = {}  # date ("2026-11-30") -> days since 1970-01-01, of the dates seen lately
_DAYS_KEPT = 4096
_MINUTES: dict[str, int] = {}  # "2026-11-30T05:32" -> epoch seconds of that minute, of the minutes seen lately
_DAYS_BEFORE = (0, 31, 59, 90, 120, 151, 181, 212, 243, 273, 304, 334)  # of each month, in a common year
_MONTH_DAYS = (31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)


def utc_epoch(value: object) -> float | None:
    """Epoch seconds of an RFC 3339 UTC time (``Z`` or ``+00:00``, any fraction digits), or None if it is not one.

    A real date and time is asked for (no 13th month, no 30 February).
    Worked out by arithmetic rather than ``strptime``: a judgement reads a
    time on every line of several files, and ``strptime`` was most of it
    (8 us against 2.7 us here); the days of each date are kept once worked
    out (a ledger's records share a few dates: 1.3 us a time).
    """
    if not isinstance(value, str):
        return None
    # The form the console and the reference study write ("2026-11-30T05:32:38.123Z"), of a minute seen before:
    # the seconds and milliseconds added to that minute's count, the same sums in the same order as below.
    if len(value) == 24 and value[16] == ":" and value[19] == "." and value[23] == "Z":
        minute = _MINUTES.get(value[:16])
        sec, ms = value[17:19], value[20:23]
        if minute is not None and sec.isdigit() and ms.isdigit() and sec.isascii() and ms.isascii() and sec < "61":
            return minute + int(sec) + float("." + ms)
    m = _UTC.fullmatch(value)
    if m is None:
        return None
    days = _DAYS.get(m[1])
    if days is None:
        days = _days(int(m[2]), int(m[3]), int(m[4]))
        if days is None:
            return None
        if len(_DAYS) >= _DAYS_KEPT:
            _DAYS.clear()  # times of many dates (a hostile file): worked out again, never wrong
        _DAYS[m[1]] = days
    h, mi, s = int(m[5]), int(m[6]), int(m[7])
    if not (h < 24 and mi < 60 and s < 61):
        return None
    minute = days * 86400 + h * 3600 + mi * 60
    if len(value) == 24 and value[23] == "Z":
        if len(_MINUTES) >= _DAYS_KEPT:
            _MINUTES.clear()
        _MINUTES[value[:16]] = minute
    return minute + s + (float(m[8]) if m[8] else 0.0)


def _days(y: int, mo: int, d: int) -> int | None:
    """Days since 1970-01-01 in the proleptic Gregorian calendar, as datetime counts them; None if no such date."""
    leap = y % 4 == 0 and (y % 100 != 0 or y % 400 == 0)
    if not 1 <= mo <= 12 or not 1 <= d <= (29 if leap and mo == 2 else _MONTH_DAYS[mo - 1]):
        return None
    yy = y - 1
    days = 365 * (y - 1970) + (yy // 4 - yy // 100 + yy // 400) - 477 + _DAYS_BEFORE[mo - 1] + d - 1
    return days + 1 if leap and mo > 2 else days


def parse_rfc3339(text: str) -> float:
    """Epoch seconds from an RFC 3339 UTC time with any number of fraction digits.

    Docker writes nine fraction digits, which ``datetime`` cannot parse, so the
    fraction is handled apart.  Docker's zero time (``0001-01-01T00:00:00Z``)
    gives a negative number.
    """
    if not text:
        raise ValueError("empty time")
    body = text.removesuffix("Z")
    offset = 0.0
    if not text.endswith("Z"):
        # +HH:MM or -HH:MM suffix
        sign_pos = max(body.rfind("+"), body.rfind("-"))
        if sign_pos > 10:
            tz = body[sign_pos:]
            body = body[:sign_pos]
            hours, minutes = tz[1:].split(":")
            offset = (int(hours) * 3600 + int(minutes) * 60) * (1 if tz[0] == "+" else -1)
    if "." in body:
        whole, frac = body.split(".", 1)
        fraction = float("0." + frac) if frac else 0.0
    else:
        whole, fraction = body, 0.0
    dt = datetime.strptime(whole, "%Y-%m-%dT%H:%M:%S").replace(tzinfo=UTC)
    return dt.timestamp() + fraction - offset
