"""The records of a ledger stream, kept in plain Python: bounded, filterable, each summarised in one line.

A :class:`LedgerStore` holds at most ``max_records`` records; older ones fall
off and are counted.  Records are addressed by *ordinal*: the position of a
record in everything ever added (the first kept record has ordinal
``dropped``).  Ordinals never change, so a view's cursor and cache stay valid
while records fall off the top.  Nothing here draws: the view is
:mod:`studymon.widgets.ledger_lines`.
"""

from __future__ import annotations

import json
from bisect import bisect_left
from collections import deque
from collections.abc import Sequence
from typing import Any

import orjson

from studymon.engine import KINDS, Record, free_text

DEFAULT_MAX_RECORDS = 10_000
KIND_WIDTH = 10  # most kinds fit; longer ones push their summary right rather than be cut
WORD = 64  # characters of a kind shown: the contract's names are shorter
SUMMARY_LIMIT = 1000  # characters of a summary: wider than any terminal, so a huge record costs no more


def kind_class(kind: str) -> str:
    # The contract's kinds have a colour of their own (a component class each, styled in LedgerLines.DEFAULT_CSS).
    return f"ledger--kind-{kind.lower()}" if kind in KINDS else "ledger--kind-other"


def compact_json(value: Any) -> str:
    """One-line JSON; anything JSON cannot say is shown with ``str``."""
    try:
        # orjson: the filter serialises every kept record on each keystroke.
        return orjson.dumps(value).decode()
    except TypeError:
        return json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)


def _num(value: Any) -> str:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return str(value)
    return f"{value:g}"


def _cell(value: Any) -> str:
    return value if isinstance(value, str) else compact_json(value)


def _summary_of(kind: str, c: dict[str, Any]) -> str:
    if kind == "runPlanned":
        return f"{c.get('run')} {c.get('purpose')} cell {_cell(c.get('object'))} round {c.get('round')}"
    if kind == "charge":
        return f"{c.get('run')} {_num(c.get('amount'))} → {_num(c.get('balance'))}"
    if kind == "runStarted":
        return f"{c.get('run')} in {c.get('container')}"
    if kind == "runResult":
        outputs = c.get("outputs")
        n = len(outputs) if isinstance(outputs, (dict, list)) else 0
        return f"{c.get('run')} exit {c.get('exitCode')}, {n} output{'' if n == 1 else 's'}"
    if kind == "diagnosisSettlement":
        judged = c.get("judged")
        experiments = judged.get("experiments") if isinstance(judged, dict) else None
        dropped = c.get("dropped")
        j = len(experiments) if isinstance(experiments, list) else 0
        d = len(dropped) if isinstance(dropped, list) else 0
        return f"round {c.get('round')} {c.get('run')}: {j} judged, {d} dropped"
    if kind == "stageOpen":
        return f"{c.get('stage')} round {c.get('round')}"
    if kind == "decision":
        text = f"{c.get('name')} round {c.get('round')}"
        output = c.get("output")
        chosen = output.get("chosen") if isinstance(output, dict) else None
        if isinstance(chosen, list):
            text += f" chose {len(chosen)}"
        return text
    if kind == "halt":
        return str(c.get("reason"))
    if kind == "serviceError":
        return str(c.get("message"))
    if kind == "studyOpen":
        return f"{c.get('study')} budget {_num(c.get('budget'))}"
    if kind == "export":
        return str(c.get("path"))
    return compact_json(c)


def summarize(record: Record) -> str:
    """A one-line summary of a record's content; never raises, whatever the study wrote.

    Quoted (:func:`~studymon.engine.io.quoting.free_text`): the ledger is the study's, and a control character
    in it (an escape sequence) would otherwise reach the terminal; newlines read as spaces first."""
    try:
        said = _summary_of(record.kind, record.content)
    except Exception:  # noqa: BLE001 - a strange record still gets a line
        said = compact_json(record.content)
    return free_text(said.replace("\n", " "), SUMMARY_LIMIT)


def kind_text(kind: str) -> str:
    """A record's kind as its line shows it: quoted, cut at a run id's length."""
    return free_text(kind, WORD)


def clock_of(at: str) -> str:
    """``HH:MM:SS.mmm`` from the record's RFC 3339 ``at`` (any string the study wrote: quoted)."""
    if len(at) >= 23 and at[10] == "T":
        return free_text(at[11:23])
    return free_text(at[:12]).ljust(12)


def plain_line(record: Record, seq_width: int = 0) -> str:
    """The record's line as plain text (what is saved and what the filter reads)."""
    return f"{record.seq:>{seq_width}} {clock_of(record.at)} {kind_text(record.kind):<{KIND_WIDTH}} {summarize(record)}"


def _matches_filter(record: Record, needle: str) -> bool:
    if needle in record.kind.lower() or needle in compact_json(record.content).lower():
        return True
    return needle in plain_line(record).lower()


class LedgerStore:
    """The records a stream keeps, and which of them the filter lets through.  Plain Python, no Textual.

    Records are addressed by ordinal (see the module's docstring); *lines* are
    the positions of the records that pass the filter (all of them with none).
    """

    def __init__(self, max_records: int = DEFAULT_MAX_RECORDS) -> None:
        if max_records < 1:
            raise ValueError("max_records must be at least 1")
        self.max_records = max_records
        self.records: deque[Record] = deque(maxlen=max_records)
        self.dropped = 0  # records that fell off the top, or were never sent
        self.filter_text = ""
        self.seq_width = 3  # the seq column's width: the widest seq kept
        self._matches: deque[int] | None = None  # ordinals that pass the filter, when one is set

    @property
    def line_count(self) -> int:
        return len(self._matches) if self._matches is not None else len(self.records)

    @property
    def kept(self) -> int:
        return len(self.records)

    def record(self, ordinal: int) -> Record:
        return self.records[ordinal - self.dropped]

    def ordinal_at(self, line: int) -> int | None:
        """The ordinal of the record on ``line``, or None past the lines."""
        if line < 0 or line >= self.line_count:
            return None
        if self._matches is not None:
            return self._matches[line]
        return self.dropped + line

    def line_of(self, ordinal: int) -> int | None:
        """The line that shows ``ordinal``, or None when it is not kept or filtered out."""
        if self._matches is None:
            line = ordinal - self.dropped
            return line if 0 <= line < len(self.records) else None
        i = bisect_left(self._matches, ordinal)
        return i if i < len(self._matches) and self._matches[i] == ordinal else None

    def nearest_line(self, ordinal: int) -> int:
        """The line of ``ordinal``, or of the first record after it that passes the filter (or the last line)."""
        line = self.line_of(ordinal)
        if line is not None:
            return line
        if self._matches is None:
            return max(0, min(ordinal - self.dropped, self.line_count - 1))
        return min(bisect_left(self._matches, ordinal), max(0, self.line_count - 1))

    def add(self, records: Sequence[Record], skipped: int = 0) -> tuple[int, bool]:
        """Append records in ledger order; the oldest fall off beyond ``max_records``.

        ``skipped``: records before these that were never sent (the backlog of
        a long ledger); they count as not kept.  Only meaningful on an empty store.
        Returns how many lines fell off the top, and whether the seq column widened.
        """
        if skipped and not self.records:
            self.dropped += skipped
        if not records:
            return 0, False
        before_lines = self.line_count
        overflow = max(0, len(self.records) + len(records) - self.max_records)
        first_new = self.dropped + len(self.records)
        self.records.extend(records)
        self.dropped += overflow
        # Only the records that are still kept can be lines.
        skip = max(0, len(records) - self.max_records)
        removed = 0
        if self._matches is not None:
            needle = self.filter_text.lower()
            for i, record in enumerate(records[skip:], start=first_new + skip):
                if _matches_filter(record, needle):
                    self._matches.append(i)
            # Only matches from before this batch can fall off: every new one kept is newer.
            while self._matches and self._matches[0] < self.dropped:
                self._matches.popleft()
                removed += 1
        else:
            removed = min(overflow, before_lines)
        width = max(3, len(str(self.records[-1].seq)))
        widened = width != self.seq_width
        self.seq_width = width
        return removed, widened

    def set_filter(self, text: str) -> None:
        """Let through only records whose line or content contains ``text`` (any case); "" lets all through."""
        self.filter_text = text
        if text:
            needle = text.lower()
            self._matches = deque(
                i for i, record in enumerate(self.records, start=self.dropped) if _matches_filter(record, needle)
            )
        else:
            self._matches = None

    def plain(self, ordinal: int) -> str:
        return plain_line(self.record(ordinal), self.seq_width)

    def visible_lines(self) -> list[str]:
        """Every line the filter lets through, as plain text."""
        out: list[str] = []
        for line in range(self.line_count):
            ordinal = self.ordinal_at(line)
            assert ordinal is not None
            out.append(self.plain(ordinal))
        return out
