"""The ledger stream of one study: one line per record, bounded, filterable, following the tail.

Records are kept in a deque of at most ``max_records``; older ones fall off and
the status line says how many.  Lines are drawn with Textual's line API (a
``ScrollView`` with ``render_line``) behind an LRU cache of rendered strips, so
a 200 000-record ledger costs no more than the lines on screen: no widget per
line, and a new record repaints only the lines that moved.

Lines are addressed by *ordinal*: the position of a record in everything ever
added (the first kept record has ordinal ``dropped``).  Ordinals never change,
so the cursor and the cache stay valid while records fall off the top.
"""

from __future__ import annotations

import json
import math
import time
from bisect import bisect_left
from collections import deque
from typing import Any, Sequence

import orjson
from rich.cells import cell_len, set_cell_size
from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from textual import events, on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.cache import LRUCache
from textual.containers import Vertical
from textual.geometry import Size
from textual.message import Message
from textual.scroll_view import ScrollView
from textual.strip import Strip
from textual.timer import Timer
from textual.widget import Widget
from textual.widgets import Input

from studymon.engine.ledger import Record

DEFAULT_MAX_RECORDS = 10_000
# The view catches up with the store at most this often while records pour in
# (a record after a quiet spell shows at once).  Each catch-up repaints every line
# in view, since following they all move, and a frame of three such panes costs
# ~13 ms here: three studies at 50 records/s repainting per record took half a
# core, at 2 catch-ups a second ~5 %; at that rate the view still turns over
# about once per catch-up, so every line is on screen for a moment.
DEFAULT_REFRESH_INTERVAL = 0.5
KIND_WIDTH = 10  # most kinds fit; longer ones push their summary right rather than be cut

# Kinds with a colour of their own (a component class each in studymon.tcss).
KNOWN_KINDS = (
    "studyOpen",
    "stageOpen",
    "decision",
    "runPlanned",
    "charge",
    "runStarted",
    "runResult",
    "diagnosisSettlement",
    "serviceError",
    "halt",
    "export",
)


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
    """A one-line summary of a record's content; never raises, whatever the study wrote."""
    try:
        return _summary_of(record.kind, record.content)
    except Exception:  # noqa: BLE001 - a strange record still gets a line
        return compact_json(record.content)


def clock_of(at: str) -> str:
    """``HH:MM:SS.mmm`` from the record's RFC 3339 ``at``."""
    if len(at) >= 23 and at[10] == "T":
        return at[11:23]
    return at[:12].ljust(12)


def plain_line(record: Record, seq_width: int = 0) -> str:
    """The record's line as plain text (what is saved and what the filter reads)."""
    return f"{record.seq:>{seq_width}} {clock_of(record.at)} {record.kind:<{KIND_WIDTH}} {summarize(record)}"


class LedgerLines(ScrollView, can_focus=True):
    """The scrolling lines of a :class:`LedgerStream`; keys act on its cursor record."""

    COMPONENT_CLASSES = {
        "ledger--seq",
        "ledger--time",
        "ledger--cursor",
        "ledger--failed",
        "ledger--kind-other",
        *(_kind_class(k) for k in KNOWN_KINDS),
    }

    BINDINGS = [
        Binding("up", "cursor(-1)", "Up", show=False),
        Binding("down", "cursor(1)", "Down", show=False),
        Binding("pageup", "page(-1)", "Page up", show=False),
        Binding("pagedown", "page(1)", "Page down", show=False),
        Binding("home", "home", "First", show=False),
        Binding("end", "follow", "Follow"),
        Binding("enter", "open_record", "Open"),
        Binding("slash", "filter", "Filter", key_display="/"),
        Binding("c", "copy_record", "Copy"),
        Binding("w", "save", "Save"),
    ]

    def __init__(self, stream: LedgerStream, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.stream = stream
        # (ordinal, width, is cursor) -> strip; the screen needs a few dozen, scrolling a few hundred.
        self._strips: LRUCache[tuple[int, int, bool], Strip] = LRUCache(512)
        self._programmatic = False
        self._styles: dict[str, Style] = {}

    # --- drawing -------------------------------------------------------------
    def notify_style_update(self) -> None:
        super().notify_style_update()
        self._strips.clear()  # a theme change recolours every line
        self._styles.clear()

    def clear_cache(self) -> None:
        self._strips.clear()

    def render_line(self, y: int) -> Strip:
        stream = self.stream
        index = y + self.scroll_offset.y
        width = self.scrollable_content_region.width
        ordinal = stream._ordinal_at(index)
        if ordinal is None or width <= 0:
            return Strip.blank(max(width, 0), self.rich_style)
        is_cursor = ordinal == stream._cursor and not stream.following
        key = (ordinal, width, is_cursor)
        strip = self._strips.get(key)
        if strip is None:
            strip = self._render_record(stream._record(ordinal), width, is_cursor)
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
            (f"{record.seq:>{self.stream._seq_width}} ", self._style("ledger--seq")),
            (f"{clock_of(record.at)} ", self._style("ledger--time")),
            (f"{record.kind:<{KIND_WIDTH}} ", kind_style),
            (summarize(record).replace("\n", " "), summary_style),
        )
        segments: list[Segment] = []
        room = width
        for text, style in parts:
            if room <= 0:
                break
            size = cell_len(text)
            if size > room:
                text = set_cell_size(text, room - 1) + "…"
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
            self.virtual_size = Size(0, count)
            return
        # Setting ``virtual_size`` plainly re-lays-out the whole screen: at 150 records a
        # second that was most of the console's CPU, for a change only this widget shows.
        self.set_reactive(LedgerLines.virtual_size, Size(0, count))
        self._scroll_update(self.virtual_size)

    def scroll_programmatically(self, y: float) -> None:
        """Scroll without it counting as the operator's scroll."""
        self._programmatic = True
        try:
            self.scroll_to(y=y, animate=False, force=True)
        finally:
            self._programmatic = False

    def watch_scroll_y(self, old_value: float, new_value: float) -> None:
        super().watch_scroll_y(old_value, new_value)
        if self._programmatic or not self.stream.following:
            return
        # Upwards and not merely clamped to a new bottom: the operator is reading back.
        if new_value < old_value and round(new_value) < self.max_scroll_y:
            self.stream._pause_at_view()

    def on_resize(self, event: events.Resize) -> None:
        self._strips.clear()
        if self.stream.following:
            self.scroll_programmatically(self.max_scroll_y)

    def on_click(self, event: events.Click) -> None:
        y = int(event.y + self.scroll_offset.y)
        if 0 <= y < self.stream.line_count:
            self.stream._move_cursor_to(y)

    # --- keys ----------------------------------------------------------------
    def action_cursor(self, delta: int) -> None:
        self.stream._move_cursor_by(delta)

    def action_page(self, direction: int) -> None:
        self.stream._move_cursor_by(direction * max(1, self.scrollable_content_region.height - 1))

    def action_home(self) -> None:
        self.stream._move_cursor_to(0)

    def action_follow(self) -> None:
        self.stream.follow()

    def action_open_record(self) -> None:
        self.stream.open_cursor_record()

    def action_filter(self) -> None:
        self.stream.open_filter()

    def action_copy_record(self) -> None:
        self.stream.copy_cursor_record()

    def action_save(self) -> None:
        self.stream.request_save()


class LedgerStatus(Widget):
    """One line above the stream: what is kept and filtered, and whether it follows."""

    COMPONENT_CLASSES = {"status--paused", "status--following", "status--info"}

    def __init__(self, stream: LedgerStream, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.stream = stream
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
        s = self.stream
        width = self.size.width
        if s.following:
            right = Text("following", style=self._style("status--following"))
        else:
            right = Text("paused — End to follow", style=self._style("status--paused"))
        shown = s.line_count
        kept = len(s._records)
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

    Keys (on its lines): up/down/pgup/pgdn/home move the cursor and stop
    following; End follows again; Enter posts :class:`OpenRecord`; ``/`` opens
    the filter (Enter keeps it, Escape clears it); ``c`` copies the cursor
    record's JSON; ``w`` posts :class:`SaveRequested` with the visible lines.
    """

    class OpenRecord(Message):
        """The operator asked to see one record whole."""

        def __init__(self, record: Record) -> None:
            super().__init__()
            self.record = record

    class SaveRequested(Message):
        """The operator asked to save the visible (filtered) lines; the app writes the file."""

        def __init__(self, lines: list[str]) -> None:
            super().__init__()
            self.lines = lines

    def __init__(
        self,
        max_records: int = DEFAULT_MAX_RECORDS,
        *,
        refresh_interval: float = DEFAULT_REFRESH_INTERVAL,
        name: str | None = None,
        id: str | None = None,
        classes: str | None = None,
    ) -> None:
        super().__init__(name=name, id=id, classes=classes)
        if max_records < 1:
            raise ValueError("max_records must be at least 1")
        self.max_records = max_records
        self._records: deque[Record] = deque(maxlen=max_records)
        self.dropped = 0  # records that fell off the top
        self.following = True
        self.filter_text = ""
        self._matches: deque[int] | None = None  # ordinals that pass the filter, when one is set
        self._cursor: int | None = None  # an ordinal; None while following
        self._seq_width = 3
        self.refresh_interval = refresh_interval
        # What changed since the view last caught up with the store (see flush).
        self._view_lines = 0
        self._view_removed = 0
        self._view_top_changed = False
        self._view_pending = False
        self._view_timer: Timer | None = None
        self._view_at = -math.inf
        self.lines = LedgerLines(self, id="ledger-lines")
        self.status = LedgerStatus(self, id="ledger-status")
        self.filter_input = Input(placeholder="filter: kind or any text — Enter keeps, Escape clears", id="ledger-filter")

    def compose(self) -> ComposeResult:
        yield self.status
        yield self.lines
        yield self.filter_input

    def focus(self, scroll_visible: bool = True) -> LedgerStream:
        """Focusing the stream focuses its lines, where its keys are."""
        self.lines.focus(scroll_visible)
        return self

    # --- the store -----------------------------------------------------------
    @property
    def line_count(self) -> int:
        return len(self._matches) if self._matches is not None else len(self._records)

    @property
    def kept(self) -> int:
        return len(self._records)

    def _record(self, ordinal: int) -> Record:
        return self._records[ordinal - self.dropped]

    def _ordinal_at(self, line: int) -> int | None:
        if line < 0 or line >= self.line_count:
            return None
        if self._matches is not None:
            return self._matches[line]
        return self.dropped + line

    def _line_of(self, ordinal: int) -> int | None:
        if self._matches is None:
            line = ordinal - self.dropped
            return line if 0 <= line < len(self._records) else None
        i = bisect_left(self._matches, ordinal)
        return i if i < len(self._matches) and self._matches[i] == ordinal else None

    def _matches_filter(self, record: Record, needle: str) -> bool:
        if needle in record.kind.lower() or needle in compact_json(record.content).lower():
            return True
        return needle in plain_line(record).lower()

    def add_records(self, records: Sequence[Record], skipped: int = 0) -> None:
        """Append records in ledger order; the oldest fall off beyond ``max_records``.

        ``skipped``: records before these that were never sent (the backlog of
        a long ledger); they count as not kept.  Only meaningful on an empty stream.
        """
        if skipped and not self._records:
            self.dropped += skipped
            self._view_top_changed = True
            if not records:
                self._view_pending = True
                self._schedule_view()
        if not records:
            return
        before_lines = self.line_count
        before_dropped = self.dropped
        overflow = max(0, len(self._records) + len(records) - self.max_records)
        first_new = self.dropped + len(self._records)
        self._records.extend(records)
        self.dropped += overflow
        # Only the records that are still kept can be lines.
        skipped = max(0, len(records) - self.max_records)
        removed = 0
        if self._matches is not None:
            needle = self.filter_text.lower()
            for i, record in enumerate(records[skipped:], start=first_new + skipped):
                if self._matches_filter(record, needle):
                    self._matches.append(i)
            # Only matches from before this batch can fall off: every new one kept is newer.
            while self._matches and self._matches[0] < self.dropped:
                self._matches.popleft()
                removed += 1
        else:
            removed = min(overflow, before_lines)
        width = max(3, len(str(self._records[-1].seq)))
        if width != self._seq_width:
            self._seq_width = width
            self.lines.clear_cache()
        if self._cursor is not None and self._cursor < self.dropped:
            self._cursor = self._ordinal_at(0)
        if not self._view_pending:
            self._view_lines = before_lines
            self._view_pending = True
        self._view_removed += removed
        self._view_top_changed |= self.dropped != before_dropped
        self._schedule_view()

    def _schedule_view(self) -> None:
        # Leading edge: a quiet stream shows a new record at once; a busy one is
        # caught up on a timer, so a burst costs one repaint per interval.
        if self._view_timer is not None or not self.is_mounted:
            return
        now = time.monotonic()
        if now - self._view_at >= self.refresh_interval:
            self.flush()
        else:
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
        count = self.line_count
        lines.set_line_count(count)
        if self.following:
            lines.scroll_programmatically(lines.max_scroll_y)
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

    # --- following and the cursor ---------------------------------------------
    def follow(self) -> None:
        """Follow the tail again (End)."""
        self.flush()
        old = self._cursor
        self._cursor = None
        self.following = True
        self.remove_class("-paused")
        if old is not None:
            self._refresh_ordinal(old)
        self.lines.scroll_programmatically(self.lines.max_scroll_y)
        self.status.refresh()

    def pause(self) -> None:
        """Stop following; the cursor is placed on the last line in view."""
        if self.following:
            self._pause_at_view()

    def _pause_at_view(self) -> None:
        self.flush()
        self.following = False
        self.add_class("-paused")
        if self.line_count:
            bottom = int(self.lines.scroll_offset.y) + self.lines.scrollable_content_region.height - 1
            self._cursor = self._ordinal_at(max(0, min(self.line_count - 1, bottom)))
            if self._cursor is not None:
                self._refresh_ordinal(self._cursor)
        self.status.refresh()

    def _refresh_ordinal(self, ordinal: int) -> None:
        line = self._line_of(ordinal)
        if line is not None:
            self.lines.refresh_line(line)

    @property
    def cursor_line(self) -> int | None:
        """The cursor's line in the visible (filtered) lines, or None while following."""
        if self.following or self._cursor is None:
            return None
        return self._line_of(self._cursor)

    @property
    def cursor_record(self) -> Record | None:
        """The record under the cursor; while following, the last visible record."""
        if self.following or self._cursor is None:
            ordinal = self._ordinal_at(self.line_count - 1)
        else:
            ordinal = self._cursor
        if ordinal is None or ordinal < self.dropped:
            return None
        return self._record(ordinal)

    def _move_cursor_by(self, delta: int) -> None:
        if not self.line_count:
            return
        current = self.cursor_line
        base = self.line_count - 1 if current is None else current
        self._move_cursor_to(base + delta)

    def _move_cursor_to(self, line: int) -> None:
        self.flush()
        count = self.line_count
        if not count:
            return
        line = max(0, min(count - 1, line))
        old = None if self.following else self._cursor
        if self.following:
            self.following = False
            self.add_class("-paused")
            self.status.refresh()
        self._cursor = self._ordinal_at(line)
        if old is not None:
            self._refresh_ordinal(old)
        self.lines.refresh_line(line)
        self._scroll_to_line(line)

    def _scroll_to_line(self, line: int) -> None:
        lines = self.lines
        top = int(lines.scroll_offset.y)
        height = max(1, lines.scrollable_content_region.height)
        if line < top:
            lines.scroll_programmatically(line)
        elif line >= top + height:
            lines.scroll_programmatically(line - height + 1)

    # --- the filter ----------------------------------------------------------
    def open_filter(self) -> None:
        self.filter_input.display = True
        self.filter_input.value = self.filter_text
        self.filter_input.focus()

    def set_filter(self, text: str) -> None:
        """Show only records whose line or content contains ``text`` (any case); "" shows all."""
        self.flush()
        text = text.strip()
        if text == self.filter_text:
            return
        keep = self.cursor_record if not self.following else None
        self.filter_text = text
        if text:
            needle = text.lower()
            self._matches = deque(
                i for i, record in enumerate(self._records, start=self.dropped) if self._matches_filter(record, needle)
            )
        else:
            self._matches = None
        self.lines.clear_cache()
        self.lines.set_line_count(self.line_count)
        if self.following:
            self.lines.scroll_programmatically(self.lines.max_scroll_y)
        else:
            # Stay on the same record when it still shows, else on the nearest line.
            line = None
            if keep is not None and self._cursor is not None:
                line = self._line_of(self._cursor)
                if line is None and self._matches is not None:
                    line = min(bisect_left(self._matches, self._cursor), max(0, self.line_count - 1))
            if line is not None and self.line_count:
                self._cursor = self._ordinal_at(line)
                self._scroll_to_line(line)
            else:
                self._cursor = self._ordinal_at(max(0, self.line_count - 1))
        self.lines.refresh()
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

    # --- asking the app ------------------------------------------------------
    def open_cursor_record(self) -> None:
        record = self.cursor_record
        if record is not None:
            self.post_message(self.OpenRecord(record))

    def copy_cursor_record(self) -> None:
        record = self.cursor_record
        if record is None:
            return
        self.app.copy_to_clipboard(compact_json(record.as_json()))
        self.notify(f"record {record.seq} copied", timeout=2)

    def visible_lines(self) -> list[str]:
        """Every line the (filtered) stream shows, as plain text."""
        out: list[str] = []
        for line in range(self.line_count):
            ordinal = self._ordinal_at(line)
            assert ordinal is not None
            out.append(plain_line(self._record(ordinal), self._seq_width))
        return out

    def request_save(self) -> None:
        self.post_message(self.SaveRequested(self.visible_lines()))
