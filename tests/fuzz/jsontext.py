"""The evidence files' JSON as text: read a file or a line, write it back byte for byte as it was written.

A mutant must differ from its seed in the one thing a mutator changed, so a
line or file is written back in the layout it came in: ``.jsonl`` lines as
``json.dumps`` writes them (``ensure_ascii`` off or on, as the line was),
JSON files indented by two or compact, with or without a final newline.
:func:`dumps` also writes an object that repeats a key (:class:`Repeated`),
which ``json`` cannot, and the times helpers move an RFC 3339 time or an epoch
by a number of seconds, keeping its shape.
"""

from __future__ import annotations

import datetime as dt
import json
import math
import re
from dataclasses import dataclass
from typing import Any

Path_ = list[str | int]  # a path into a JSON value: keys and list indices


@dataclass(frozen=True)
class Layout:
    """How a JSON text was written: indent (None: one line), ensure_ascii, and a final newline."""

    indent: int | None = None
    ascii: bool = False
    newline: bool = False


LINE = Layout()
LAYOUTS = (
    Layout(2, False, True),
    Layout(2, True, True),
    Layout(2, False, False),
    Layout(None, False, True),
    Layout(None, False, False),
    Layout(None, True, True),
    Layout(None, True, False),
)


class Repeated(dict[str, Any]):
    """An object whose key ``key`` is written twice: ``first`` where it stands, then its own value."""

    def __init__(self, items: dict[str, Any], key: str, first: Any) -> None:
        super().__init__(items)
        self.key = key
        self.first = first


def _scalar(value: Any, layout: Layout) -> str:
    return json.dumps(value, ensure_ascii=layout.ascii)


def dumps(value: Any, layout: Layout = LINE, depth: int = 0) -> str:
    """``json.dumps(value, indent=..., ensure_ascii=...)``, except that a :class:`Repeated` repeats its key."""
    ind = layout.indent
    if isinstance(value, dict):
        pairs = list(value.items())
        if isinstance(value, Repeated):
            at = [k for k, _ in pairs].index(value.key)
            pairs.insert(at, (value.key, value.first))
        if not pairs:
            return "{}"
        items = [f"{_scalar(str(k), layout)}: {dumps(v, layout, depth + 1)}" for k, v in pairs]
        return _join("{", items, "}", ind, depth)
    if isinstance(value, list):
        if not value:
            return "[]"
        return _join("[", [dumps(v, layout, depth + 1) for v in value], "]", ind, depth)
    return _scalar(value, layout)


def _join(opening: str, items: list[str], closing: str, indent: int | None, depth: int) -> str:
    if indent is None:
        return opening + ", ".join(items) + closing
    inner = "\n" + " " * (indent * (depth + 1))
    return opening + inner + ("," + inner).join(items) + "\n" + " " * (indent * depth) + closing


def file_text(value: Any, layout: Layout) -> str:
    return dumps(value, layout) + ("\n" if layout.newline else "")


def layout_of(text: str) -> Layout | None:
    """The layout a whole JSON file was written in, or None when none writes it back exactly."""
    try:
        value = json.loads(text)
    except ValueError:
        return None
    return next((lay for lay in LAYOUTS if file_text(value, lay) == text), None)


def line_layout(line: str) -> Layout | None:
    """The layout of one ``.jsonl`` line (without its newline), or None."""
    try:
        value = json.loads(line)
    except ValueError:
        return None
    return next((lay for lay in (LINE, Layout(None, True)) if dumps(value, lay) == line), None)


# --- paths into a value -------------------------------------------------------------------


def get(value: Any, path: Path_) -> Any:
    for step in path:
        value = value[step]
    return value


def has(value: Any, path: Path_) -> bool:
    try:
        get(value, path)
    except (KeyError, IndexError, TypeError):
        return False
    return True


def paths(value: Any, limit: int = 5000) -> list[Path_]:
    """Every path below the root (objects and lists too, not only leaves), depth first, at most ``limit``."""
    found: list[Path_] = []
    stack: list[tuple[Path_, Any]] = [([], value)]
    while stack and len(found) < limit:
        path, v = stack.pop()
        if path:
            found.append(path)
        if isinstance(v, dict):
            stack.extend(([*path, k], v[k]) for k in reversed(list(v)))
        elif isinstance(v, list):
            stack.extend(([*path, i], v[i]) for i in reversed(range(len(v))))
    return found


def key_of(path: Path_) -> str:
    """The name a path ends at: its last key (an index names what holds it)."""
    keys = [p for p in path if isinstance(p, str)]
    return keys[-1] if keys else ""


# --- times --------------------------------------------------------------------------------

RFC3339 = re.compile(r"^(\d{4}-\d{2}-\d{2})([Tt])(\d{2}:\d{2}:\d{2})(?:\.(\d+))?([Zz]|[+-]\d{2}:\d{2})$")
TIME_KEYS = frozenset(
    {
        "at",
        "seenAt",
        "time",
        "timeNano",
        "since",
        "until",
        "from",
        "to",
        "Created",
        "StartedAt",
        "FinishedAt",
        "startTime",
        "started",
    }
)


def is_time_key(key: str) -> bool:
    return key in TIME_KEYS or key.endswith(("At", "Epoch"))


def is_time_value(value: Any) -> bool:
    if isinstance(value, bool):
        return False
    if isinstance(value, int | float):
        return True
    return isinstance(value, str) and RFC3339.match(value) is not None


def shift_time(value: Any, key: str, seconds: float) -> Any:
    """``value`` moved by ``seconds``, in its own shape: an RFC 3339 string keeps its fraction digits and
    offset, ``timeNano`` stays integer nanoseconds, an integer stays whole seconds, a float stays a float."""
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, int):
        if key == "timeNano":
            return value + round(seconds * 1e9)
        # Whole seconds: a move of a fraction of one is still a move, of one second, the same way.
        return value + (math.ceil(seconds) if seconds > 0 else math.floor(seconds))
    if isinstance(value, float):
        return value + seconds
    if isinstance(value, str):
        return _shift_rfc3339(value, seconds)
    return value


def _shift_rfc3339(text: str, seconds: float) -> str:
    m = RFC3339.match(text)
    if not m:
        return text
    day, t, clock, frac, offset = m.groups()
    digits = len(frac or "")
    base = dt.datetime.fromisoformat(f"{day}T{clock}+00:00")
    ns = int((frac or "0").ljust(9, "0")[:9]) if digits else 0
    total = round(base.timestamp()) * 10**9 + ns + round(seconds * 1e9)
    whole, rest = divmod(total, 10**9)
    try:
        moved = dt.datetime.fromtimestamp(whole, dt.UTC)
    except (OverflowError, OSError, ValueError):
        return text
    out = moved.strftime("%Y-%m-%d") + t + moved.strftime("%H:%M:%S")
    if digits:
        out += "." + str(rest).rjust(9, "0")[:digits].ljust(digits, "0")
    return out + offset
