"""The overview: one row per study, when more studies run than fit side by side.

As k9s, lazydocker and htop show many things at once: a list with the
state of each, sorted and filtered, and the detail of the selected one a
key away.  Each row is a :class:`~studymon.widgets.summary.StudySummary`,
folded from the study's events by the screen; the rows are drawn line by
line (a row that did not change is not drawn again), so a frame costs the
rows that moved, whatever the number of studies, and many events between
two frames cost one frame.

Keys (from :mod:`studymon.widgets.keys`): the arrows, PgUp/PgDn, Home and
End move the selection; Enter posts :class:`Overview.OpenStudy`; ``/``
opens the filter (:class:`~studymon.widgets.summary.Query`; Enter keeps
it, Escape clears it); S, N, A, V and O sort by state, id, the last
record's age, verdict and the command's order (the same key again
reverses); Z freezes the order while you move, as htop's Z does.  The
study actions (kill, arm, resume, stop) act on the selected row's study:
the screen asks :attr:`Overview.selected`.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from typing import ClassVar

from rich.cells import cell_len, set_cell_size
from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from textual import events, on
from textual.app import ComposeResult
from textual.binding import BindingType
from textual.containers import Vertical
from textual.geometry import Size
from textual.message import Message
from textual.reactive import var
from textual.scroll_view import ScrollView
from textual.strip import Strip
from textual.timer import Timer
from textual.widget import Widget
from textual.widgets import Input

from studymon.engine import State, StudyEvent, free_text
from studymon.widgets import keys
from studymon.widgets.keys import Scope
from studymon.widgets.summary import (
    ALERT_SECONDS,
    SORT_WORDS,
    VERDICT_MARKS,
    BadQuery,
    Query,
    StudySummary,
    age_text,
    sort_key,
)

BAR_CELLS = 8
DRAW_EVERY = 0.075  # seconds: rows that change faster are drawn together, at most this often
# (title, width) of the fixed columns; the id column takes the longest id (within bounds), the
# point or kill column what is left.
COLUMNS = (("", 2), ("state", 12), ("round", 5), ("stage", 10), ("budget spent", 17), ("runs", 4), ("last", 5))
VERDICT_WIDTH = 16
ID_WIDTH = (8, 28)
POINT_MIN = 12
GAP = " "
ROW_LIMIT = 1000  # characters of a cell's text: wider than any terminal

_STATE_CLASS = {
    State.STARTING: "overview--waiting",
    State.RUNNING: "overview--running",
    State.KILLED: "overview--killed",
    State.RESUMING: "overview--killed",
    State.STOPPING: "overview--waiting",
    State.STOPPED: "overview--waiting",
    State.FINISHED_OK: "overview--ok",
    State.FINISHED_FAIL: "overview--fail",
    State.SERVICE_ERROR: "overview--fail",
    State.CRASHED: "overview--fail",
    State.DETACHED: "overview--waiting",
    State.ERROR: "overview--fail",
}
_VERDICT_CLASS = {True: "overview--ok", False: "overview--fail", None: "overview--unknown"}


def bar(spent: float | None, budget: float | None, cells: int = BAR_CELLS) -> str:
    """A budget bar: the part spent filled (``███░░░░░``); blank without a budget."""
    if spent is None or budget is None or budget <= 0:
        return " " * cells
    filled = round(cells * min(1.0, max(0.0, spent / budget)))
    return "█" * filled + "░" * (cells - filled)


def _fit(text: str, size: int) -> str:
    """``text`` in exactly ``size`` cells: padded, or cut with an ellipsis; quoted, since a row tells what
    a study wrote (its stage, its round) and what a folder followed said (a kill's trigger, a trial's class)."""
    text = free_text(text, ROW_LIMIT)
    shown = text if cell_len(text) <= size else set_cell_size(text, max(0, size - 1)) + "…"
    return set_cell_size(shown, size)


def _number(value: float) -> str:
    return f"{value:.4g}"


class OverviewRows(ScrollView, can_focus=True, inherit_bindings=False):
    """The rows, one line each, with the selection; drawn line by line and kept while unchanged."""

    DEFAULT_CSS = """
    OverviewRows {
        height: 1fr;
        padding: 0 0 0 1;
    }

    OverviewRows > .overview--cursor   { background: $primary 45%; }
    OverviewRows > .overview--alert    { background: $warning 30%; text-style: bold; }
    OverviewRows > .overview--id       { text-style: bold; }
    OverviewRows > .overview--dim      { color: $text-muted; }
    OverviewRows > .overview--bar      { color: $secondary; }
    OverviewRows > .overview--armed    { color: $error; text-style: bold; }
    OverviewRows > .overview--kill     { color: $accent; }
    OverviewRows > .overview--running  { color: $success; }
    OverviewRows > .overview--waiting  { color: $warning; }
    OverviewRows > .overview--killed   { color: $error; text-style: bold; }
    OverviewRows > .overview--ok       { color: $success; }
    OverviewRows > .overview--fail     { color: $error; text-style: bold; }
    OverviewRows > .overview--unknown  { color: $warning; }
    """

    COMPONENT_CLASSES: ClassVar[set[str]] = {
        "overview--cursor",
        "overview--alert",
        "overview--id",
        "overview--dim",
        "overview--bar",
        "overview--armed",
        "overview--kill",
        "overview--running",
        "overview--waiting",
        "overview--killed",
        "overview--ok",
        "overview--fail",
        "overview--unknown",
    }

    cursor: var[int] = var(0)

    class Clicked(Message):
        def __init__(self, line: int) -> None:
            super().__init__()
            self.line = line

    def __init__(self, overview: Overview, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.overview = overview
        # Per study: what its row was drawn from (all but the age), the age, and the row.
        self._strips: dict[str, tuple[tuple[object, ...], str, Strip]] = {}
        self._styles: dict[str, Style] = {}

    def notify_style_update(self) -> None:
        super().notify_style_update()
        self._strips.clear()
        self._styles.clear()

    def _style(self, name: str) -> Style:
        style = self._styles.get(name)
        if style is None:
            # Partial: a cell's colour over the row's background (the selection's, the alert's).
            style = self._styles[name] = self.get_component_rich_style(name, partial=True)
        return style

    def _background(self, name: str) -> Style:
        # A row's background, blended as the theme has it (a partial style keeps the colour unblended).
        style = self._styles.get("bg " + name)
        if style is None:
            full = self.get_component_rich_style(name)
            style = self._styles["bg " + name] = Style(bgcolor=full.bgcolor, bold=full.bold)
        return style

    def render_line(self, y: int) -> Strip:
        rows = self.overview.rows()
        index = y + int(self.scroll_offset.y)
        width = self.scrollable_content_region.width
        if index >= len(rows) or width <= 0:
            return Strip.blank(max(width, 0), self.rich_style)
        summary = rows[index]
        now = self.overview.clock()
        alert = summary.alert(now)
        cursor = index == self.cursor
        selected = cursor and self.has_focus_within
        age = age_text(summary.age(now))
        signature = (summary.version, width, selected, cursor, alert, self.overview.id_width)
        kept = self._strips.get(summary.id)
        strip = None
        if kept is not None and kept[0] == signature:
            if kept[1] == age:
                return kept[2]
            # Only the age moved (a quiet row, every ten seconds): its cell in the row drawn before.
            strip = self._with_age(kept[2], age, self._base(selected, cursor, alert))
        if strip is None:
            strip = self._render_row(summary, width, selected, cursor, alert, age)
        self._strips[summary.id] = (signature, age, strip)
        return strip

    def _base(self, selected: bool, cursor: bool, alert: bool) -> Style:
        """A row's style under its cells: lit, selected, or the cursor's when the rows are not focused."""
        base = self.rich_style
        if alert:
            base = base + self._background("overview--alert")
        if selected:
            base = base + self._background("overview--cursor")
        elif cursor:
            base = base + Style(bold=True)
        return base

    def _age_x(self) -> int:
        """The first cell of the age column (the columns and gaps before it)."""
        widths = (COLUMNS[0][1], self.overview.id_width, *(width for _, width in COLUMNS[1:6]))
        return sum(widths) + len(widths) * len(GAP)

    def _with_age(self, strip: Strip, age: str, base: Style) -> Strip | None:
        """``strip`` with ``age`` in its age cell, a fifth of the cost of drawing the row again (measured);
        None when the row is too narrow to hold the whole column."""
        x, size = self._age_x(), COLUMNS[6][1]
        if x + size > strip.cell_length:
            return None
        cell = Strip([Segment(_fit(age, size), base + self._style("overview--dim"))], size)
        return Strip.join([strip.crop(0, x), cell, strip.crop(x + size, strip.cell_length)])

    def _render_row(self, s: StudySummary, width: int, selected: bool, cursor: bool, alert: bool, age: str) -> Strip:
        base = self._base(selected, cursor, alert)
        state_style = self._style(_STATE_CLASS.get(s.state, "overview--waiting"))
        spent = s.budget - s.balance if s.budget is not None and s.balance is not None else None
        money = f"{_number(spent)}/{_number(s.budget)}" if spent is not None and s.budget is not None else "-"
        if s.armed:
            point, point_style = f"⚑ {s.armed}", self._style("overview--armed")
        elif s.kill:
            point, point_style = s.kill, self._style("overview--kill")
        elif s.problem:
            point, point_style = f"⚠ {s.problem}", self._style("overview--fail")
        else:
            point, point_style = "", self._style("overview--dim")
        if s.note:
            point = f"{point}  {s.note}" if point else s.note
        if s.checks is not None:
            good, bad, unknown = s.checks
            counts = [f"{n}{mark}" for n, mark in ((good, "✓"), (bad, "✗"), (unknown, "?")) if n]
            verdict = f"{VERDICT_MARKS[s.ok]} {' '.join(counts)}"
            verdict_style = self._style(_VERDICT_CLASS[s.ok])
        else:
            verdict, verdict_style = "", self._style("overview--dim")
        id_width = self.overview.id_width
        point_width = max(POINT_MIN, width - self.overview.fixed_width)
        cells: list[tuple[str, int, Style]] = [
            # The selection and the alert each have their mark: a lit row stays findable as the selected one.
            (("›" if cursor else " ") + ("▶" if alert else " "), 2, Style()),
            (s.id, id_width, self._style("overview--id")),
            (s.state_words, COLUMNS[1][1], state_style),
            ("-" if s.round is None else f"r{s.round}", COLUMNS[2][1], Style()),
            (s.stage or "-", COLUMNS[3][1], Style()),
            (f"{bar(spent, s.budget)} {money}", COLUMNS[4][1], self._style("overview--bar")),
            (str(s.in_flight) if s.in_flight else "-", COLUMNS[5][1], Style()),
            (age, COLUMNS[6][1], self._style("overview--dim")),
            (verdict, VERDICT_WIDTH, verdict_style),
            (point, point_width, point_style),
        ]
        segments: list[Segment] = []
        room = width
        for text, wanted, style in cells:
            if room <= 0:
                break
            size = min(wanted, room)
            segments.append(Segment(_fit(text, size), base + style))
            room -= size
            if room > 0:
                segments.append(Segment(GAP, base))
                room -= 1
        if room > 0:
            segments.append(Segment(" " * room, base))
        return Strip(segments, width).simplify()

    def set_line_count(self, count: int) -> None:
        if self.virtual_size.height != count:
            self.virtual_size = Size(0, count)

    def scroll_to_cursor(self) -> None:
        top = int(self.scroll_offset.y)
        height = max(1, self.scrollable_content_region.height)
        if self.cursor < top:
            self.scroll_to(y=self.cursor, animate=False)
        elif self.cursor >= top + height:
            self.scroll_to(y=self.cursor - height + 1, animate=False)

    @property
    def page(self) -> int:
        return max(1, self.scrollable_content_region.height - 1)

    def on_resize(self) -> None:
        self._strips.clear()

    def on_focus(self) -> None:
        self.refresh()

    def on_blur(self) -> None:
        self.refresh()

    def on_click(self, event: events.Click) -> None:
        line = int(event.y + self.scroll_offset.y)
        if 0 <= line < len(self.overview.rows()):
            self.post_message(self.Clicked(line))

    def forget(self, study: str) -> None:
        self._strips.pop(study, None)

    def age_shown(self, study: str) -> str | None:
        """The age the row of ``study`` was last drawn with (None: not drawn since a change)."""
        kept = self._strips.get(study)
        return kept[1] if kept is not None else None


class OverviewHeader(Widget):
    """The columns' titles, and what the rows are: how many, sorted by what, filtered, paused."""

    DEFAULT_CSS = """
    OverviewHeader {
        height: 2;
        padding: 0 0 0 1;
        color: $text-muted;
        text-style: bold;
        text-wrap: nowrap;
        text-overflow: ellipsis;
    }
    """

    def __init__(self, overview: Overview, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.overview = overview

    def render(self) -> Text:
        o = self.overview
        titles = [
            ("", 2),
            (o.nouns[0], o.id_width),
            *COLUMNS[1:],
            ("verdict", VERDICT_WIDTH),
            ("point / kill", POINT_MIN),
        ]
        line = GAP.join(set_cell_size(title, size) for title, size in titles)
        return Text(f"{o.status_text()}\n{line}", no_wrap=True, overflow="ellipsis")


class Overview(Vertical):
    """Every study as one row: state, round, stage, budget, runs in flight, last record, point or kill, verdict."""

    DEFAULT_CSS = """
    Overview {
        height: 1fr;
        border: round $panel-lighten-2;
    }

    Overview:focus-within {
        border: heavy $accent;
    }

    Overview.-paused {
        border: heavy $warning;
    }

    #overview-filter {
        dock: bottom;
        height: 3;
    }

    #overview-filter.-bad {
        border: tall $error;
    }
    """

    BINDINGS: ClassVar[list[BindingType]] = keys.bindings(Scope.OVERVIEW)

    sort: var[str] = var("order")
    reverse: var[bool] = var(False)
    paused: var[bool] = var(False)

    class OpenStudy(Message):
        """The operator asked to open ``study``'s pane."""

        def __init__(self, study: str) -> None:
            super().__init__()
            self.study = study

    def __init__(
        self,
        studies: Sequence[str],
        *,
        clock: Callable[[], float] = time.time,
        bell: bool = False,
        nouns: tuple[str, str] = ("study", "studies"),
        id: str | None = None,
    ) -> None:
        """``studies`` in the command's order; ``clock``: wall-clock seconds (ages, alerts); ``bell``: ring
        the terminal's bell when a diagnosis run starts; ``nouns``: what a row is, one and many (a campaign's
        rows are trials)."""
        super().__init__(id=id)
        self.nouns = nouns
        self.clock = clock
        self.bell = bell
        self.summaries = {study: StudySummary(study, order=i) for i, study in enumerate(studies)}
        self.filter_query = Query()
        self._order: list[StudySummary] = list(self.summaries.values())
        self._stale = True  # the order is to be worked out again before the next frame
        self._selected: str | None = next(iter(self.summaries), None)
        self.id_width = ID_WIDTH[0]
        self._fit_ids(studies)
        self._dirty: set[str] = set()  # rows changed since the last draw
        self._draw_timer: Timer | None = None
        self._drawn_at = -math.inf
        self._status_drawn = ""
        self.header = OverviewHeader(self, id="overview-header")
        self.table = OverviewRows(self, id="overview-rows")
        self.filter_input = Input(
            placeholder="filter: state=running verdict!=ok, or text of the ids", id="overview-filter"
        )

    def _fit_ids(self, studies: Sequence[str]) -> None:
        self.id_width = min(ID_WIDTH[1], max(self.id_width, *(len(s) for s in studies))) if studies else self.id_width
        self.fixed_width = 2 + self.id_width + sum(size for _, size in COLUMNS[1:]) + VERDICT_WIDTH + len(COLUMNS) + 2

    def compose(self) -> ComposeResult:
        yield self.header
        yield self.table
        yield self.filter_input

    def on_mount(self) -> None:
        self.filter_input.display = False
        self.table.set_line_count(len(self.rows()))

    def focus(self, scroll_visible: bool = True) -> Overview:
        self.table.focus(scroll_visible)
        return self

    # --- the studies' events ---------------------------------------------------
    def take(self, event: StudyEvent) -> None:
        """Fold one of a study's events into its row; the row is drawn again at the next frame if it changed."""
        summary = self.summaries.get(event.study)
        if summary is None:
            return
        now = self.clock()
        alert_before = summary.alert_until
        if not summary.fold(event, now):
            return
        summary.version += 1
        self._changed(summary)
        if summary.alert_until > alert_before and summary.alert(now):
            # Drawn lit now, and again when the alert is over.
            self.set_timer(ALERT_SECONDS + 0.05, self.table.refresh)
            if self.bell:
                self.app.bell()

    def add(self, study: str) -> None:
        """A row for ``study`` after the others (a campaign's trials come as they are planned)."""
        if study in self.summaries:
            return
        self.summaries[study] = StudySummary(study, order=len(self.summaries))
        width = self.id_width
        self._fit_ids([study])
        if self.id_width != width and self.is_mounted:
            self.header.refresh()
            self.table.refresh()  # every row is laid out again for the wider column
        if self._selected is None:
            self._selected = study
        self._stale = True
        self._changed(self.summaries[study])

    def describe(self, study: str, *, label: str | None = None, note: str | None = None) -> None:
        """Say what the row's owner knows of it beyond its events: ``label`` in place of its state's words
        (``""``: the state's own again), ``note`` after its point or kill."""
        summary = self.summaries.get(study)
        if summary is None:
            return
        new_label = summary.label if label is None else label
        new_note = summary.note if note is None else note
        if (new_label, new_note) != (summary.label, summary.note):
            summary.label, summary.note = new_label, new_note
            summary.version += 1
            self._changed(summary)

    def ended(self, study: str, finished: bool, message: str = "") -> None:
        """The console saw ``study`` end."""
        summary = self.summaries.get(study)
        if summary is not None:
            summary.end(finished, message)
            summary.version += 1
            self._changed(summary)

    def show_ended(self) -> None:
        """Every study has ended: the verdicts, failures first."""
        self.paused = False
        self.reverse = False
        self.sort = "verdict"

    def _changed(self, summary: StudySummary) -> None:
        if not self.paused and (self.sort not in ("order", "id") or self.filter_query.terms):
            self._stale = True
        self._dirty.add(summary.id)
        # Drawn at once after a quiet spell, else on a grid: measured with 48 studies at 2 records a second
        # each, a frame per record cost 13 % of a core; records landing together cost a third of that.  A
        # 75 ms grid (13 frames a second) against 50 ms: a sixth less CPU, record -> row p90 75 ms, not 52.
        now = time.monotonic()
        if self._draw_timer is None:
            wait = self._drawn_at + DRAW_EVERY - now
            if wait <= 0:
                self.flush()
            else:
                self._draw_timer = self.set_timer(wait, self.flush)

    def flush(self) -> None:
        """Draw what changed since the last draw: the rows that moved (all of them when the order did), and the
        header when its counts did."""
        if self._draw_timer is not None:
            self._draw_timer.stop()
            self._draw_timer = None
        self._drawn_at = time.monotonic()
        if self._stale:
            self.table.refresh()
        else:
            for study in self._dirty:
                self._refresh_row(self.summaries[study])
        self._dirty.clear()
        status = self.status_text()
        if status != self._status_drawn:
            self._status_drawn = status
            self.header.refresh()

    def _refresh_row(self, summary: StudySummary) -> None:
        try:
            line = self._order.index(summary)
        except ValueError:
            return
        y = line - int(self.table.scroll_offset.y)
        if 0 <= y < self.table.size.height:
            self.table.refresh_line(y)

    def tick(self) -> None:
        """Move the ages (and an order by age): only the rows whose age reads differently are drawn again."""
        if self.sort == "age" and not self.paused:
            self._stale = True
            self.flush()
            return
        rows = self.rows()
        top = int(self.table.scroll_offset.y)
        now = self.clock()
        for y in range(max(0, min(self.table.size.height, len(rows) - top))):
            summary = rows[top + y]
            if self.table.age_shown(summary.id) != age_text(summary.age(now)):
                self.table.refresh_line(y)

    # --- order and selection ---------------------------------------------------
    def rows(self) -> list[StudySummary]:
        """The rows shown, in their order (worked out again at most once a frame)."""
        if self._stale:
            self._stale = False
            self._reorder()
        return self._order

    def _reorder(self) -> None:
        query = self.filter_query
        if self.paused:
            kept = [s for s in self._order if query.holds(s)]
        else:
            key = sort_key(self.sort, self.clock())
            kept = sorted((s for s in self.summaries.values() if query.holds(s)), key=key, reverse=self.reverse)
        self._order = kept
        self.table.set_line_count(len(kept))
        ids = [s.id for s in kept]
        if self._selected in ids:
            self.table.set_reactive(OverviewRows.cursor, ids.index(self._selected))
        elif kept:
            line = min(self.table.cursor, len(kept) - 1)
            self.table.set_reactive(OverviewRows.cursor, line)
            self._selected = kept[line].id
        self.header.refresh()

    @property
    def selected(self) -> str | None:
        """The selected row's study (None when the filter shows no row)."""
        rows = self.rows()
        if not rows:
            return None
        return rows[min(self.table.cursor, len(rows) - 1)].id

    def select(self, line: int) -> None:
        rows = self.rows()
        if not rows:
            return
        line = max(0, min(line, len(rows) - 1))
        self.table.cursor = line
        self._selected = rows[line].id
        self.table.scroll_to_cursor()
        self.table.refresh()

    def select_study(self, study: str) -> None:
        ids = [s.id for s in self.rows()]
        if study in ids:
            self.select(ids.index(study))

    def status_text(self) -> str:
        total = len(self.summaries)
        shown = len(self._order)
        states: dict[str, int] = {}
        for s in self.summaries.values():
            states[s.state_words] = states.get(s.state_words, 0) + 1
        counts = " · ".join(f"{n} {word}" for word, n in sorted(states.items(), key=lambda kv: -kv[1]))
        order = SORT_WORDS[self.sort] + (", reversed" if self.reverse else "")
        many = self.nouns[1]
        parts = [f"{total} {many}" if shown == total else f"{shown} of {total} {many}", counts, order]
        if self.filter_query.text:
            parts.append(f"/{self.filter_query.text}")
        if self.paused:
            parts.append("PAUSED (Z: live)")
        return "  ·  ".join(parts)

    # --- keys ------------------------------------------------------------------
    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:  # noqa: ARG002 - Textual's
        # Typing in the filter moves no selection.
        return not self.filter_input.has_focus

    def action_cursor(self, delta: int) -> None:
        self.select(self.table.cursor + delta)

    def action_page(self, direction: int) -> None:
        self.select(self.table.cursor + direction * self.table.page)

    def action_first(self) -> None:
        self.select(0)

    def action_last(self) -> None:
        self.select(len(self.rows()) - 1)

    def action_open_study(self) -> None:
        study = self.selected
        if study is not None:
            self.post_message(self.OpenStudy(study))

    def action_sort(self, name: str) -> None:
        if self.sort == name:
            self.reverse = not self.reverse
        else:
            self.sort, self.reverse = name, False
        self.paused = False

    def action_pause(self) -> None:
        self.paused = not self.paused

    def watch_sort(self) -> None:
        self._restale()

    def watch_reverse(self) -> None:
        self._restale()

    def watch_paused(self, paused: bool) -> None:
        self.set_class(paused, "-paused")
        self._restale()

    def _restale(self) -> None:
        self._stale = True
        self.table.refresh()
        self.header.refresh()

    def action_filter(self) -> None:
        self.filter_input.display = True
        self.filter_input.value = self.filter_query.text
        self.filter_input.focus()

    def set_query(self, text: str) -> bool:
        """Filter the rows by ``text`` (:class:`Query`); False, with a notice, when it cannot be read."""
        try:
            query = Query.parse(text)
        except BadQuery as exc:
            self.filter_input.set_class(True, "-bad")
            self.filter_input.tooltip = str(exc)
            return False
        self.filter_input.set_class(False, "-bad")
        self.filter_input.tooltip = None
        self.filter_query = query
        self._restale()
        return True

    @on(Input.Changed, "#overview-filter")
    def _filter_changed(self, event: Input.Changed) -> None:
        event.stop()
        self.set_query(event.value)

    @on(Input.Submitted, "#overview-filter")
    def _filter_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        if not self.set_query(event.value):
            self.notify(str(self.filter_input.tooltip), title="filter not applied", severity="error")
            return
        self.filter_input.display = False
        self.table.focus()

    def on_key(self, event: events.Key) -> None:
        if event.key == "escape" and self.filter_input.has_focus:
            event.stop()
            event.prevent_default()
            self.filter_input.value = ""
            self.set_query("")
            self.filter_input.display = False
            self.table.focus()

    @on(OverviewRows.Clicked)
    def _clicked(self, message: OverviewRows.Clicked) -> None:
        self.select(message.line)
