"""The ledger stream of one study: one line per record, bounded, filterable, following the tail.

Records are kept in a :class:`LedgerStore` (plain Python) of at most
``max_records``; older ones fall off and the status line says how many.
Lines are drawn with Textual's line API (a ``ScrollView`` with
``render_line``) behind an LRU cache of rendered strips, so a 200 000-record
ledger costs no more than the lines on screen: no widget per line, and a new
record repaints only the lines that moved.

Lines are addressed by *ordinal*: the position of a record in everything ever
added (the first kept record has ordinal ``dropped``).  Ordinals never change,
so the cursor and the cache stay valid while records fall off the top.

:class:`LedgerStream` owns the store and the view's state, ``following`` and
``cursor``, as reactives bound down to :class:`LedgerLines` and
:class:`LedgerStatus`, which only draw; what the operator does on the lines
comes back up as messages.  The keys are the stream's, from the table of
actions (:mod:`studymon.widgets.keys`).
"""

from __future__ import annotations

import json
import math
import time
from bisect import bisect_left
from collections import deque
from collections.abc import Callable, Sequence
from typing import Any, ClassVar

import orjson
from rich.cells import cell_len, set_cell_size
from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from textual import events, on
from textual.app import ComposeResult
from textual.binding import BindingType
from textual.cache import LRUCache
from textual.containers import Vertical
from textual.geometry import Region, Size
from textual.message import Message
from textual.reactive import reactive, var
from textual.scroll_view import ScrollView
from textual.scrollbar import ScrollBar
from textual.strip import Strip
from textual.timer import Timer
from textual.widget import Widget
from textual.widgets import Input

from studymon.engine import KINDS, Pace, Record, free_text
from studymon.widgets import keys
from studymon.widgets.keys import Scope

DEFAULT_MAX_RECORDS = 10_000
# A busy stream's view catches up with the store at most this often.  Each catch-up
# repaints every line in view, since following they all move, and Textual composes
# every widget of the screen again for it: a frame of three such panes costs ~20 ms
# of CPU here.  Three studies at 50 records/s repainting per record took half a core,
# at 2 catch-ups a second ~5 %; at that rate the view still turns over about once per
# catch-up, so every line is on screen for a moment.
DEFAULT_REFRESH_INTERVAL = 0.5
# A stream that brought at most this many records in the last second is slow: each
# record is shown at once, in the next frame (a study's run starting must not wait for
# a timer).  A frame of one pane costs ~6 ms, so a slow stream costs at most ~5 % of a
# core.  Beyond, the stream is busy and catches up on the refresh grid.
SHOWN_AT_ONCE_PER_SECOND = 8
FOLLOW_KEY = keys.shown_key("follow")  # the status line names it while paused
KIND_WIDTH = 10  # most kinds fit; longer ones push their summary right rather than be cut
WORD = 64  # characters of a kind shown: the contract's names are shorter
SUMMARY_LIMIT = 1000  # characters of a summary: wider than any terminal, so a huge record costs no more

# Kinds with a colour of their own (a component class each in studymon.tcss): the contract's.
KNOWN_KINDS = KINDS


def _kind_class(kind: str) -> str:
    return f"ledger--kind-{kind.lower()}" if kind in KNOWN_KINDS else "ledger--kind-other"


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


class LedgerScrollBar(ScrollBar):
    """The stream's scrollbar, drawn again only when its thumb moves by a part of a cell.

    Following a busy stream, the length and the position change at every
    catch-up while the thumb stays in the bottom cell: Textual's scrollbar
    draws itself again each time, ~1 ms a pane (through rich), in every frame
    of a catch-up.  This one keeps its last drawing for as long as the thumb
    covers the same eighths of cells (what Textual's drawing resolves) in
    the same colours and state.
    """

    EIGHTHS = 8  # Textual draws a thumb's ends in eighths of a cell

    def __init__(self, *, thickness: int) -> None:
        super().__init__(vertical=True, name="vertical", thickness=thickness)
        self._drawn: tuple[tuple[object, ...], list[Strip]] | None = None
        self.draws = 0  # drawings made, not taken from the last one

    def notify_style_update(self) -> None:
        super().notify_style_update()
        self._drawn = None  # a theme change: Textual tells the scrollbar itself

    def thumb(self) -> tuple[int, int] | None:
        """The thumb's first and last eighth of a cell, as Textual's drawing places it; None: no thumb."""
        size = self.size.height
        virtual = math.ceil(self.window_virtual_size)
        window = math.ceil(self.window_size) if self.window_size < self.window_virtual_size else 0
        if not (window and size and virtual) or size == virtual:
            return None
        thumb_size = max(1.0, window / (virtual / size))
        offset = (size - thumb_size) * (self.position / (virtual - window))
        start = int(offset * self.EIGHTHS)
        return start, start + math.ceil(thumb_size * self.EIGHTHS)

    def _key(self, crop: Region) -> tuple[object, ...]:
        parent = self.parent
        assert isinstance(parent, Widget)
        styles = parent.styles
        if self.grabbed:
            colours = (styles.scrollbar_background_active, styles.scrollbar_color_active)
        elif self.mouse_over:
            colours = (styles.scrollbar_background_hover, styles.scrollbar_color_hover)
        else:
            colours = (styles.scrollbar_background, styles.scrollbar_color)
        return (crop, self.size, self.thickness, self.thumb(), colours, self.screen.styles.scrollbar_color.a == 0)

    def render_lines(self, crop: Region) -> list[Strip]:
        key = self._key(crop)
        if self._drawn is not None and self._drawn[0] == key:
            return list(self._drawn[1])
        strips = super().render_lines(crop)
        self.draws += 1
        self._drawn = (key, list(strips))
        return strips


class LedgerLines(ScrollView, can_focus=True, inherit_bindings=False):
    """The scrolling lines of a :class:`LedgerStream`: a view of its store, its cursor and whether it follows.

    It decides nothing: ``following`` and ``cursor`` are bound from the
    stream, and what the operator does here (scrolling back, a click) is
    posted to the stream as a message.  Its keys are the stream's (no
    bindings of its own, not even the scroll keys it would inherit).
    """

    COMPONENT_CLASSES: ClassVar[set[str]] = {
        "ledger--seq",
        "ledger--time",
        "ledger--cursor",
        "ledger--failed",
        "ledger--kind-other",
        *(_kind_class(k) for k in KNOWN_KINDS),
    }

    following: var[bool] = var(True)
    cursor: var[int | None] = var(None)  # an ordinal

    class ScrolledBack(Message):
        """The operator scrolled up from the tail: the stream stops following."""

    class Clicked(Message):
        """The operator clicked ``line``."""

        def __init__(self, line: int) -> None:
            super().__init__()
            self.line = line

    def __init__(self, store: LedgerStore, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.store = store
        # (ordinal, width, is cursor) -> strip; the screen needs a few dozen, scrolling a few hundred.
        self._strips: LRUCache[tuple[int, int, bool], Strip] = LRUCache(512)
        self._programmatic = False
        self._styles: dict[str, Style] = {}

    @property
    def cached_lines(self) -> int:
        """How many drawn lines are cached (lines are drawn only when on screen)."""
        return len(self._strips)

    @property
    def vertical_scrollbar(self) -> ScrollBar:
        # Textual makes its own on first use; this one keeps its drawing while the thumb stays put.
        bar = self._vertical_scrollbar
        if bar is None:
            bar = self._vertical_scrollbar = LedgerScrollBar(thickness=self.scrollbar_size_vertical)
            bar.display = False
            self.app._start_widget(self, bar)  # how Textual starts a scrollbar
        return bar

    # --- the stream's state --------------------------------------------------
    def watch_cursor(self, old: int | None, new: int | None) -> None:
        for ordinal in (old, new):
            self.refresh_ordinal(ordinal)

    def watch_following(self) -> None:
        # The cursor line is highlighted only while paused.
        self.refresh_ordinal(self.cursor)

    def refresh_ordinal(self, ordinal: int | None) -> None:
        """Repaint the line of ``ordinal``, if it has one."""
        line = None if ordinal is None else self.store.line_of(ordinal)
        if line is not None:
            self.refresh_line(line)

    # --- drawing -------------------------------------------------------------
    def notify_style_update(self) -> None:
        super().notify_style_update()
        self._strips.clear()  # a theme change recolours every line
        self._styles.clear()

    def clear_cache(self) -> None:
        self._strips.clear()

    def render_line(self, y: int) -> Strip:
        store = self.store
        index = y + self.scroll_offset.y
        width = self.scrollable_content_region.width
        ordinal = store.ordinal_at(index)
        if ordinal is None or width <= 0:
            return Strip.blank(max(width, 0), self.rich_style)
        is_cursor = ordinal == self.cursor and not self.following
        key = (ordinal, width, is_cursor)
        strip = self._strips.get(key)
        if strip is None:
            strip = self._render_record(store.record(ordinal), width, is_cursor)
            self._strips[key] = strip
        return strip

    def _style(self, name: str) -> Style:
        # Resolving a component style walks the ancestors; a stream asks for the same few per line.
        style = self._styles.get(name)
        if style is None:
            style = self._styles[name] = self.get_component_rich_style(name)
        return style

    def _render_record(self, record: Record, width: int, is_cursor: bool) -> Strip:
        kind_style = self._style(_kind_class(record.kind))
        summary_style = kind_style
        if record.kind == "runResult" and record.content.get("exitCode") not in (0, None):
            summary_style = self._style("ledger--failed")
        base = self._styles.get("")
        if base is None:
            base = self._styles[""] = self.rich_style
        if is_cursor:
            base = base + self._style("ledger--cursor")
        # Segments are built by hand: rich's Text machinery cost more than the rest of a frame.
        parts = (
            (f"{record.seq:>{self.store.seq_width}} ", self._style("ledger--seq")),
            (f"{clock_of(record.at)} ", self._style("ledger--time")),
            (f"{kind_text(record.kind):<{KIND_WIDTH}} ", kind_style),
            (summarize(record), summary_style),
        )
        segments: list[Segment] = []
        room = width
        for part, style in parts:
            if room <= 0:
                break
            text, size = part, cell_len(part)
            if size > room:
                text = set_cell_size(part, room - 1) + "…"
                size = room
            segments.append(Segment(text, base + style))
            room -= size
        if room > 0:
            segments.append(Segment(" " * room, base))
        return Strip(segments, width)

    # --- scrolling -----------------------------------------------------------
    def set_line_count(self, count: int) -> None:
        """Resize the virtual area, without a layout of the screen when the scrollbar stays as it is."""
        if self.virtual_size.height == count:
            return
        height = self.container_size.height
        if not height or (count > height) != self.show_vertical_scrollbar:
            self.virtual_size = Size(0, count)  # the scrollbar comes or goes at the next layout
            return
        # Setting ``virtual_size`` plainly re-lays-out the whole screen: at 150 records a
        # second that was most of the console's CPU, for a change only this widget shows.
        self.set_reactive(LedgerLines.virtual_size, Size(0, count))
        self._scroll_update(self.virtual_size)

    def watch_show_vertical_scrollbar(self, shown: bool) -> None:
        # A hidden scrollbar is not told about scrolls: one that comes after the view was
        # scrolled (following the tail) would draw its thumb at the top until the next scroll.
        if shown:
            self.vertical_scrollbar.position = self.scroll_y

    def scroll_programmatically(self, y: float) -> None:
        """Scroll without it counting as the operator's scroll."""
        self._programmatic = True
        try:
            self.scroll_to(y=y, animate=False, force=True)
        finally:
            self._programmatic = False

    def scroll_to_bottom(self) -> None:
        self.scroll_programmatically(self.max_scroll_y)

    def scroll_to_line(self, line: int) -> None:
        """Scroll just enough for ``line`` to be in view."""
        top = int(self.scroll_offset.y)
        height = max(1, self.scrollable_content_region.height)
        if line < top:
            self.scroll_programmatically(line)
        elif line >= top + height:
            self.scroll_programmatically(line - height + 1)

    @property
    def bottom_line(self) -> int:
        """The last line in view."""
        return int(self.scroll_offset.y) + self.scrollable_content_region.height - 1

    @property
    def page(self) -> int:
        """Lines a page key moves the cursor by."""
        return max(1, self.scrollable_content_region.height - 1)

    def watch_scroll_y(self, old_value: float, new_value: float) -> None:
        super().watch_scroll_y(old_value, new_value)
        if self._programmatic or not self.following:
            return
        # Upwards and not merely clamped to a new bottom: the operator is reading back.
        if new_value < old_value and round(new_value) < self.max_scroll_y:
            self.post_message(self.ScrolledBack())

    def on_resize(self) -> None:
        self._strips.clear()
        if self.following:
            self.scroll_to_bottom()

    def on_click(self, event: events.Click) -> None:
        y = int(event.y + self.scroll_offset.y)
        if 0 <= y < self.store.line_count:
            self.post_message(self.Clicked(y))


class LedgerStatus(Widget):
    """One line above the stream: what is kept and filtered, and whether it follows."""

    COMPONENT_CLASSES: ClassVar[set[str]] = {"status--paused", "status--following", "status--info"}

    following: reactive[bool] = reactive(True)  # bound from the stream; a change repaints the line

    def __init__(self, store: LedgerStore, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.store = store
        self._styles: dict[str, Style] = {}

    def notify_style_update(self) -> None:
        super().notify_style_update()
        self._styles.clear()

    def _style(self, name: str) -> Style:
        style = self._styles.get(name)
        if style is None:
            style = self._styles[name] = self.get_component_rich_style(name)
        return style

    def render(self) -> Text:
        s = self.store
        width = self.size.width
        if self.following:
            right = Text("following", style=self._style("status--following"))
        else:
            right = Text(f"paused — {FOLLOW_KEY} to follow", style=self._style("status--paused"))
        shown = s.line_count
        kept = s.kept
        parts: list[str] = []
        short: list[str] = []
        if s.filter_text:
            parts.append(f"/{s.filter_text}: {shown} of {kept}")
            short.append(f"/{s.filter_text} {shown}/{kept}")
        else:
            parts.append(f"{kept} records")
            short.append(f"{kept}")
        if s.dropped:
            parts.insert(0, f"… {s.dropped} earlier records not kept")
            short.insert(0, f"…{s.dropped} not kept")
        info_style = self._style("status--info")
        for candidate in (" · ".join(parts), " · ".join(short)):
            if len(candidate) + 1 + right.cell_len <= width:
                break
        left = Text(candidate, style=info_style)
        gap = max(1, width - left.cell_len - right.cell_len)
        line = Text.assemble(left, " " * gap, right, no_wrap=True, end="")
        line.truncate(width, overflow="ellipsis")
        return line


class LedgerStream(Vertical):
    """A study's ledger, one line per record; bounded, filterable, following the tail.

    It owns the store and two pieces of state, ``following`` and ``cursor``
    (an ordinal), bound down to its lines and status line.  Its keys (from
    :mod:`studymon.widgets.keys`) act while its lines have the focus:
    up/down/pgup/pgdn/home move the cursor and stop following; End follows
    again; Enter posts :class:`OpenRecord`; ``/`` opens the filter (Enter
    keeps it, Escape clears it); ``c`` copies the cursor record's JSON; ``w``
    posts :class:`SaveRequested` with the visible lines.
    """

    BINDINGS: ClassVar[list[BindingType]] = keys.bindings(Scope.LEDGER)

    following: var[bool] = var(True)
    cursor: var[int | None] = var(None)  # an ordinal; None while following

    class OpenRecord(Message):
        """The operator asked to see one record whole."""

        def __init__(self, stream: LedgerStream, record: Record) -> None:
            super().__init__()
            self.stream = stream
            self.record = record

        @property
        def control(self) -> LedgerStream:
            return self.stream

    class SaveRequested(Message):
        """The operator asked to save the visible (filtered) lines; the screen writes the file."""

        def __init__(self, stream: LedgerStream, lines: list[str]) -> None:
            super().__init__()
            self.stream = stream
            self.lines = lines

        @property
        def control(self) -> LedgerStream:
            return self.stream

    def __init__(
        self,
        max_records: int = DEFAULT_MAX_RECORDS,
        *,
        refresh_interval: float = DEFAULT_REFRESH_INTERVAL,
        clock: Callable[[], float] = time.monotonic,
        name: str | None = None,
        id: str | None = None,
        classes: str | None = None,
    ) -> None:
        """``refresh_interval``: how often a busy stream catches up (0: every record at once);
        ``clock`` tells a slow stream from a busy one (injectable for tests)."""
        super().__init__(name=name, id=id, classes=classes)
        self.store = LedgerStore(max_records)
        self.refresh_interval = refresh_interval
        self._pace = Pace(SHOWN_AT_ONCE_PER_SECOND, clock)
        # What changed since the view last caught up with the store (see flush).
        self._view_lines = 0
        self._view_removed = 0
        self._view_top_changed = False
        self._view_pending = False
        self._view_timer: Timer | None = None
        self._view_at = -math.inf
        self.lines = LedgerLines(self.store, id="ledger-lines")
        self.status = LedgerStatus(self.store, id="ledger-status")
        self.filter_input = Input(
            placeholder="filter: kind or any text — Enter keeps, Escape clears", id="ledger-filter"
        )

    def compose(self) -> ComposeResult:
        yield self.status.data_bind(LedgerStream.following)
        yield self.lines.data_bind(LedgerStream.following, LedgerStream.cursor)
        yield self.filter_input

    def focus(self, scroll_visible: bool = True) -> LedgerStream:
        """Focusing the stream focuses its lines, where its keys are."""
        self.lines.focus(scroll_visible)
        return self

    def watch_following(self, following: bool) -> None:
        self.set_class(not following, "-paused")

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:  # noqa: ARG002 - Textual's
        # The keys are the lines' keys: typing in the filter moves no cursor.
        return not self.filter_input.has_focus

    # --- the store -----------------------------------------------------------
    @property
    def line_count(self) -> int:
        return self.store.line_count

    @property
    def kept(self) -> int:
        return self.store.kept

    @property
    def dropped(self) -> int:
        return self.store.dropped

    @property
    def filter_text(self) -> str:
        return self.store.filter_text

    def add_records(self, records: Sequence[Record], skipped: int = 0) -> None:
        """Append records in ledger order; the oldest fall off beyond the store's ``max_records``.

        ``skipped``: records before these that were never sent (the backlog of
        a long ledger); they count as not kept.  Only meaningful on an empty stream.
        """
        store = self.store
        before_lines, before_dropped = store.line_count, store.dropped
        removed, widened = store.add(records, skipped)
        if store.dropped == before_dropped and not records:
            return
        if widened:
            self.lines.clear_cache()
        if self.cursor is not None and self.cursor < store.dropped:
            self.cursor = store.ordinal_at(0)
        if not self._view_pending:
            self._view_lines = before_lines
            self._view_pending = True
        self._view_removed += removed
        self._view_top_changed |= store.dropped != before_dropped
        self._pace.note(len(records))
        self._schedule_view()

    @property
    def busy(self) -> bool:
        """Whether records come faster than the stream shows each at once (it catches up on a grid)."""
        return self.refresh_interval > 0 and self._pace.busy

    def _schedule_view(self) -> None:
        # A slow stream shows each record at once, and so does a busy one after a
        # quiet interval (the first of a burst); otherwise a busy stream is caught up
        # on a timer, so a burst costs one repaint per interval.
        if not self.is_mounted:
            return
        now = time.monotonic()
        if not self.busy or now - self._view_at >= self.refresh_interval:
            self.flush()
        elif self._view_timer is None:
            # Catch-ups fall on a grid of the monotonic clock, so that busy streams
            # in several panes are repainted in the same frame, not one frame each.
            wait = self.refresh_interval - (now % self.refresh_interval)
            self._view_timer = self.set_timer(wait, self._timer_flush)

    def _timer_flush(self) -> None:
        self._view_timer = None
        self.flush()

    def on_mount(self) -> None:
        self.filter_input.display = False
        if self._view_pending:
            self.flush()

    def flush(self) -> None:
        """Bring the view up to date with the records added so far (also done on a timer)."""
        if self._view_timer is not None:
            self._view_timer.stop()
            self._view_timer = None
        if not self._view_pending:
            return
        self._view_pending = False
        self._view_at = time.monotonic()
        before_lines, removed, changed_top = self._view_lines, self._view_removed, self._view_top_changed
        self._view_removed, self._view_top_changed = 0, False
        lines = self.lines
        count = self.store.line_count
        lines.set_line_count(count)
        if self.following:
            lines.scroll_to_bottom()
            # Again once the new line count is laid out: the bottom may not be known yet (a
            # loaded machine showed the view short of the tail).
            lines.call_after_refresh(self._keep_at_bottom)
        elif removed:
            # Keep the operator's place: the lines under the view moved up by `removed`.
            lines.scroll_programmatically(max(0.0, lines.scroll_y - removed))
        if changed_top:
            # Records fell off the top: every line in view now shows another record.
            lines.refresh()
        else:
            start = max(0, before_lines - removed)
            if count > start:
                lines.refresh_lines(start, count - start)
        self.status.refresh()

    def _keep_at_bottom(self) -> None:
        if self.following:
            self.lines.scroll_to_bottom()

    # --- following and the cursor ---------------------------------------------
    def follow(self) -> None:
        """Follow the tail again (End)."""
        self.flush()
        self.cursor = None
        self.following = True
        self.lines.scroll_to_bottom()

    def pause(self) -> None:
        """Stop following; the cursor is placed on the last line in view."""
        if not self.following:
            return
        self.flush()
        if self.store.line_count:
            self.cursor = self.store.ordinal_at(max(0, min(self.store.line_count - 1, self.lines.bottom_line)))
        self.following = False

    @property
    def cursor_line(self) -> int | None:
        """The cursor's line in the visible (filtered) lines, or None while following."""
        if self.following or self.cursor is None:
            return None
        return self.store.line_of(self.cursor)

    @property
    def cursor_record(self) -> Record | None:
        """The record under the cursor; while following, the last visible record."""
        store = self.store
        ordinal = store.ordinal_at(store.line_count - 1) if self.following or self.cursor is None else self.cursor
        if ordinal is None or ordinal < store.dropped:
            return None
        return store.record(ordinal)

    def move_cursor_by(self, delta: int) -> None:
        """Move the cursor ``delta`` lines (from the last line while following); following stops."""
        if not self.store.line_count:
            return
        current = self.cursor_line
        base = self.store.line_count - 1 if current is None else current
        self.move_cursor_to(base + delta)

    def move_cursor_to(self, line: int) -> None:
        """Put the cursor on ``line`` (clamped) and scroll it into view; following stops."""
        self.flush()
        count = self.store.line_count
        if not count:
            return
        line = max(0, min(count - 1, line))
        self.following = False
        self.cursor = self.store.ordinal_at(line)
        self.lines.scroll_to_line(line)

    @on(LedgerLines.ScrolledBack)
    def _scrolled_back(self, event: LedgerLines.ScrolledBack) -> None:
        event.stop()
        self.pause()

    @on(LedgerLines.Clicked)
    def _clicked(self, event: LedgerLines.Clicked) -> None:
        event.stop()
        self.move_cursor_to(event.line)

    # --- keys ----------------------------------------------------------------
    def action_cursor(self, delta: int) -> None:
        self.move_cursor_by(delta)

    def action_page(self, direction: int) -> None:
        self.move_cursor_by(direction * self.lines.page)

    def action_home(self) -> None:
        self.move_cursor_to(0)

    def action_follow(self) -> None:
        self.follow()

    def action_open_record(self) -> None:
        record = self.cursor_record
        if record is not None:
            self.post_message(self.OpenRecord(self, record))

    def action_filter(self) -> None:
        self.filter_input.display = True
        self.filter_input.value = self.filter_text
        self.filter_input.focus()

    def action_copy_record(self) -> None:
        record = self.cursor_record
        if record is None:
            return
        self.app.copy_to_clipboard(compact_json(record.as_json()))
        self.notify(f"record {record.seq} copied", timeout=2)

    def action_save(self) -> None:
        self.post_message(self.SaveRequested(self, self.visible_lines()))

    # --- the filter ----------------------------------------------------------
    def set_filter(self, text: str) -> None:
        """Show only records whose line or content contains ``text`` (any case); "" shows all."""
        self.flush()
        text = text.strip()
        store = self.store
        if text == store.filter_text:
            return
        store.set_filter(text)
        lines = self.lines
        lines.clear_cache()
        lines.set_line_count(store.line_count)
        if self.following:
            lines.scroll_to_bottom()
        elif self.cursor is not None and store.line_count:
            # Stay on the same record when it still shows, else on the nearest line.
            line = store.nearest_line(self.cursor)
            self.cursor = store.ordinal_at(line)
            lines.scroll_to_line(line)
        else:
            self.cursor = store.ordinal_at(max(0, store.line_count - 1))
        lines.refresh()
        self.status.refresh()

    @on(Input.Changed, "#ledger-filter")
    def _filter_changed(self, event: Input.Changed) -> None:
        event.stop()
        self.set_filter(event.value)

    @on(Input.Submitted, "#ledger-filter")
    def _filter_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.set_filter(event.value)
        self.filter_input.display = False
        self.lines.focus()

    def on_key(self, event: events.Key) -> None:
        if event.key == "escape" and self.filter_input.has_focus:
            event.stop()
            event.prevent_default()
            self.filter_input.value = ""
            self.set_filter("")
            self.filter_input.display = False
            self.lines.focus()

    def visible_lines(self) -> list[str]:
        """Every line the (filtered) stream shows, as plain text."""
        return self.store.visible_lines()
