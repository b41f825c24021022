"""Text from an evidence folder, or from a study, as it may be shown: one quoting function for every front end.

An evidence folder may be written by an adversary, and a study is one too:
whatever it wrote reaches a terminal only through :func:`free_text`, which
turns every character that is not printable (C0 and C1 controls, so ESC and
every sequence it would start; bidi overrides and isolates; line and
paragraph separators; lone surrogates, which would not even encode) into a
visible ``?`` and cuts the text short.  The judge quotes its details with it,
the headless printer and the check table their cells, the console's widgets
their lines.  Where the text goes to rich or Textual it also goes as
:class:`~rich.text.Text` (:func:`shown`), never as a ``str``: a string is
read as markup there, and ``[bold]`` or ``[link=...]`` in a value would take
effect.  JSON for a terminal (``studymon report --json``, the record view)
keeps every value exact and escapes the same characters (:func:`json_text`).

Plain Python (rich only for :func:`shown`); no Textual: the engine, the judge, the keeper and the
widgets all import it.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from studymon.engine.io.safefile import type_name

if TYPE_CHECKING:
    from rich.text import Text

LIMIT = 120  # characters of a value said in a line (a missed kill's detail, a cell)
DETAIL_LIMIT = 2000  # of a judge's detail or a message: whole, unless an attacker made it long
UNPRINTABLE = "?"


def free_text(value: Any, limit: int = LIMIT) -> str:
    """``value`` safe to print: each character that is not printable shown as ``?``, at most ``limit``
    characters (a longer one cut, with ``…``); a value that is not a string is named by its type only."""
    if not isinstance(value, str):
        return type_name(value)
    if len(value) <= limit and value.isprintable():
        return value  # the usual case, at the cost of one scan in C
    # Cut first: the replacement keeps the length, and a long hostile value costs only what is shown.
    cut = value if len(value) <= limit else value[: max(0, limit - 1)]
    if not cut.isprintable():
        cut = "".join(ch if ch.isprintable() else UNPRINTABLE for ch in cut)
    return cut if len(value) <= limit else cut + "…"


def shown(value: Any, limit: int = LIMIT, style: str = "") -> Text:
    """:func:`free_text` as rich :class:`Text`: shown as it reads, never taken for markup."""
    # rich only when text is drawn: the keeper and the engine's workers quote without it.
    from rich.text import Text

    return Text(free_text(value, limit), style=style)


def _escaped(ch: str) -> str:
    code = ord(ch)
    if code <= 0xFFFF:
        return f"\\u{code:04x}"
    code -= 0x10000  # JSON says a character beyond the first plane as its surrogate pair
    return f"\\u{0xD800 + (code >> 10):04x}\\u{0xDC00 + (code & 0x3FF):04x}"


def json_text(value: Any, indent: int | None = 2) -> str:
    """``value`` as JSON for a terminal: every value kept exact, and each character that is not printable
    (which JSON leaves raw when not ASCII-only: C1 controls, bidi overrides, lone surrogates) escaped as
    ``\\uXXXX``.  Outside strings JSON holds only printable characters, spaces and newlines."""
    text = json.dumps(value, indent=indent, ensure_ascii=False, default=str)
    if text.isprintable():
        return text
    return "".join(ch if ch.isprintable() or ch == "\n" else _escaped(ch) for ch in text)
