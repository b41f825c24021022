"""Values from evidence files as they may be shown: validated, or said of, never echoed.

The evidence may have been written by an adversary; a detail quotes a value
only once it was validated (run ids and container names that match their
patterns, integers, times), and any other text passes the one quoting
function, :func:`studymon.engine.io.quoting.free_text` (cut short, each
character that is not printable shown as ``?``).
"""

from __future__ import annotations

import re
from typing import Any

from studymon.engine.contract.rules import valid_container_name, valid_id
from studymon.engine.io.clock import rfc3339_ms
from studymon.engine.io.quoting import free_text

# free_text is the one quoting function (engine/io/quoting.py); the judge's modules take it from here.
__all__ = ["action_text", "free_text", "name_text", "ns_text", "run_text", "short_id", "time_text"]

# --- showing values from files --------------------------------------------------

SIGNAL = re.compile(r"SIG[A-Z0-9]{1,12}")
TIME = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{1,9})?Z")


def run_text(value: Any) -> str:
    """A run id for a detail, if it is one (rule 1); the accounts keep any string a ledger gives."""
    return value if valid_id(value) else "a run with an invalid id"


def name_text(value: Any) -> str:
    """A container name for a detail, if it is one; never arbitrary bytes."""
    return value if valid_container_name(value) else "a container"


def short_id(value: Any) -> str:
    if isinstance(value, str) and re.fullmatch(r"[A-Za-z0-9_.:-]{1,128}", value):
        return value.split(":")[-1][:12]
    return "an unreadable Id"


def action_text(value: Any) -> str:
    """A container event's action for a detail, if it reads as one (``exec_start``, ``archive-path``)."""
    return value if isinstance(value, str) and re.fullmatch(r"[a-z][a-z_-]{0,31}", value) else "an unknown action"


def time_text(value: Any) -> str:
    return value if isinstance(value, str) and TIME.fullmatch(value) else "an unreadable time"


def ns_text(ns: int) -> str:
    return rfc3339_ms(ns / 1e9)
