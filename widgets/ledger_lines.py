"""The lines of a ledger stream, drawn with Textual's line API: one line per record of a :class:`LedgerStore`.

A ``ScrollView`` with ``render_line`` behind an LRU cache of rendered strips,
so a 200 000-record ledger costs no more than the lines on screen: no widget
per line, and a new record repaints only the lines that moved.  It only
draws: following and the cursor are its stream's reactives, bound down to
it, and what the operator does on the lines comes back up as messages.
"""

from __future__ import annotations

import math
from typing import ClassVar

from rich.cells import cell_len, set_cell_size
from rich.segment import Segment
from rich.style import Style
from textual import events
from textual.cache import LRUCache
from textual.geometry import Region, Size
from textual.message import Message
from textual.reactive import var
from textual.scroll_view import ScrollView
from textual.scrollbar import ScrollBar
from textual.strip import Strip
from textual.widget import Widget

from studymon.engine import KINDS, Record
from studymon.widgets.ledger_store import KIND_WIDTH, LedgerStore, clock_of, kind_class, kind_text, summarize


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

    DEFAULT_CSS = """
    LedgerLines {
        height: 1fr;
        overflow-x: hidden;
        overflow-y: auto;
        scrollbar-size-vertical: 1;
        background: $surface;
    }

    LedgerLines > .ledger--seq    { color: $text-muted; }
    LedgerLines > .ledger--time   { color: $text-muted; }
    LedgerLines > .ledger--cursor { background: $accent 35%; }
    LedgerLines:focus > .ledger--cursor { background: $accent 60%; }
    LedgerLines > .ledger--failed { color: $text-error; }

    LedgerLines > .ledger--kind-studyopen          { color: $text-primary; text-style: bold; }
    LedgerLines > .ledger--kind-stageopen          { color: $text-accent; text-style: bold; }
    LedgerLines > .ledger--kind-decision           { color: $text-secondary; }
    LedgerLines > .ledger--kind-runplanned         { color: $text-primary; }
    LedgerLines > .ledger--kind-charge             { color: $text-warning; }
    LedgerLines > .ledger--kind-runstarted         { color: $text-accent; }
    LedgerLines > .ledger--kind-runresult          { color: $text-success; }
    LedgerLines > .ledger--kind-diagnosissettlement { color: $text-success; text-style: bold; }
    LedgerLines > .ledger--kind-serviceerror       { color: $text-error; text-style: bold; }
    LedgerLines > .ledger--kind-halt               { color: $text-warning; text-style: bold; }
    LedgerLines > .ledger--kind-export             { color: $text-primary; text-style: bold; }
    LedgerLines > .ledger--kind-other              { color: $text-muted; }
    """

    COMPONENT_CLASSES: ClassVar[set[str]] = {
        "ledger--seq",
        "ledger--time",
        "ledger--cursor",
        "ledger--failed",
        "ledger--kind-other",
        *(kind_class(k) for k in KINDS),
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
        kind_style = self._style(kind_class(record.kind))
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
