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

import math
import time
from collections.abc import Callable, Sequence
from typing import ClassVar

from rich.style import Style
from rich.text import Text
from textual import events, on
from textual.app import ComposeResult
from textual.binding import BindingType
from textual.containers import Vertical
from textual.message import Message
from textual.reactive import reactive, var
from textual.timer import Timer
from textual.widget import Widget
from textual.widgets import Input

from studymon.engine import Pace, Record
from studymon.widgets import keys
from studymon.widgets.keys import Scope
from studymon.widgets.ledger_lines import LedgerLines
from studymon.widgets.ledger_store import DEFAULT_MAX_RECORDS, LedgerStore, compact_json

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


class LedgerStatus(Widget):
    """One line above the stream: what is kept and filtered, and whether it follows."""

    DEFAULT_CSS = """
    LedgerStatus {
        height: 1;
        width: 1fr;
        padding: 0 1;
        background: $boost;
    }

    LedgerStatus > .status--info      { color: $text-muted; }
    LedgerStatus > .status--following { color: $text-success; }
    LedgerStatus > .status--paused    { color: $text-warning; text-style: bold; }
    """

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

    DEFAULT_CSS = """
    LedgerStream {
        height: 1fr;
        min-height: 5;
    }

    LedgerStream.-paused LedgerStatus {
        background: $warning-muted;
    }

    #ledger-filter {
        height: 1;
        border: none;
        padding: 0 1;
        background: $boost;
    }

    #ledger-filter:focus {
        border: none;
        background: $accent 20%;
    }
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
