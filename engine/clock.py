"""Time formats shared by the ledger, the evidence and the runtimes."""

from __future__ import annotations

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
