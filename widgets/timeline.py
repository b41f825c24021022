"""The study's timeline: its own load as a graph and its runs as lanes, on one time axis.

From the top: the study's CPU (percent of one core, the controller's process
tree plus its runs) as a filled graph a few rows high with eighth-block
resolution and a value scale at the left (``100%`` and ``0``; the scale grows
in steps past 100 %), its memory as one more row under it with the top of its
own scale, the time axis, and then one lane per run (see
:mod:`studymon.widgets.run_lanes`).  Every part shares the columns of one
:class:`~studymon.widgets.time_axis.TimeAxis`: all linear from the study's
start while it is young (it grows to the right, at the finest step that
holds it, so that a study seconds old fills half the graph or more), then
at least the last ten minutes linear to now at the right edge and
everything older compressed into the left quarter.  A kill and a resume are
vertical marks (``K`` and ``R``) across every row, so a run that went through
a kill is visibly one bar with both marks on it; an end the console did not
make is ``C`` (a crash) or ``S`` (a stop).  The tooltip says each mark's
time and what it was: a kill's point.

Memory is a row of its own rather than a second line over the CPU: the two
have different units and scales, and a terminal cell shows one glyph in one
colour, so two series in one cell grid would hide each other where they
cross; one row of eighth blocks shows its shape, and the CPU keeps every row
of the graph.

Drawn by hand with the line API rather than with a plotting widget, on a
measurement (``bench/graph_render.py``: three panes of 53 columns, a sample
arriving in each and every pane drawn whole, 300 frames, two runs on the
2-core machine, Textual 8.2.8): this widget's frame of three panes took
2.8 ms at the median (6 rows) and 3.9 ms with 8 lanes under the graph (14
rows); Textual's ``Sparkline`` took 10.0-10.2 ms (x3.6) and has no value
scale (it stretches the data's own minimum to maximum over the rows), no
time axis, no vertical marks and no lanes; ``textual-plotext`` took
26.8-27.0 ms (x9.6) and 41.8-42.3 ms with its lanes (x10.7), and can be
given the compressed axis only by hand (points at mapped positions,
labelled x ticks), the marks only as lines (no letters), and its lanes only
in a second subplot whose own y labels shift its x axis out of line with
the graph's.  Idle (the screen's tick every 2 s, a sample every 2.5 s that
changes no level), three panes cost about 0.3 ms a second and repaint only
when the axis moves by a column, about every 17 s (``bench/console_load.py``).

A pure widget: it draws what it is given and touches no file, process or
socket.  What it is given is drawn on the next :meth:`Timeline.tick` (the
screen's clock, every 2 s), which redraws only when something
changed or the axis moved by a column, so that every pane repaints in one
frame and an idle console stays idle.
"""

from __future__ import annotations

import math
import time
from collections import deque
from collections.abc import Callable, Iterable, Sequence
from typing import Any, ClassVar, Literal

from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from textual.strip import Strip
from textual.widget import Widget

from studymon.engine import Record, free_text
from studymon.widgets.load_history import LoadHistory
from studymon.widgets.run_lanes import EARLIEST, FUTURE_SLACK, RUN_ID_CHARS, Run, RunLanes, RunState, lane_cells
from studymon.widgets.time_axis import TimeAxis

BLOCKS = " ▁▂▃▄▅▆▇█"
GUTTER = 6  # five characters of label, then the scale's line
LABEL_LIMIT = 120  # characters of a mark's label in the tooltip
GRAPH_ROWS = 4  # CPU rows; one memory row and the axis row follow
# A kill, a resume, and the ends the console did not make (contract §7): a crash, a stop.
MARK_LETTERS = {"kill": "K", "resume": "R", "crash": "C", "stop": "S"}
MarkKind = Literal["kill", "resume", "crash", "stop"]
MARK_LINE = "│"
MAX_MARKS = 64
MAX_LABELS = 12
MAX_HIGHLIGHTS = 16
MAX_TEXT_LANES = 64
MIB = 1024 * 1024
# Less than this (percent of one core) draws no block: at the scale's least top, 100 % over four rows,
# a block's eighth is 3 %; an idle controller's fraction of a percent shown as one would make the
# graph flicker between nothing and a block with every sample.
MIN_SHOWN_CPU = 1.0

# A cell's style: (component, background) where background is None (the component's own),
# "on-<component>" (that component's colour as the background: a mark on a bar), or "highlight".
StyleKey = tuple[str, str | None]
Cell = tuple[str, StyleKey]
Row = list[Cell]
# What the load rows show, quantized: (CPU top, CPU heights in eighths, memory top, memory levels, any memory).
Levels = tuple[float, tuple[int, ...], int, tuple[int, ...], bool]
_CPU_CELLS: dict[str, Cell] = {glyph: (glyph, ("cpu", None)) for glyph in BLOCKS}
_MEM_CELLS: dict[str, Cell] = {glyph: (glyph, ("mem", None)) for glyph in BLOCKS}


def cpu_top(peak: float) -> float:
    """The top of the CPU scale: 100 % or, past it, the next of 200, 300, 400, 600, 800, 1200, 1600, ... %."""
    for top in (100.0, 200.0, 300.0):
        if peak <= top:
            return top
    top = 400.0
    while True:
        if peak <= top:
            return top
        if peak <= top * 1.5:
            return top * 1.5
        top *= 2


def memory_top(peak: int) -> int:
    """The top of the memory row: the next power of two from 64 MiB up."""
    top = 64 * MIB
    while top < peak:
        top *= 2
    return top


def percent_text(value: float) -> str:
    """A CPU scale label in at most five characters: ``100%``, ``9600%``, ``12k%``, else ``huge``."""
    if value < 10_000:
        return f"{value:.0f}%"
    if value < 999_500:
        return f"{value / 1000:.0f}k%"
    return "huge"


def bytes_text(value: int) -> str:
    """A memory scale label in at most five characters: ``512M``, ``16G``, ``2T``, else ``huge``."""
    for unit, size in (("M", MIB), ("G", 1024 * MIB), ("T", 1024 * 1024 * MIB)):
        if value < 1024 * size:
            return f"{value / size:.0f}{unit}"
    return "huge"


def _finite(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    value = float(value)
    return value if math.isfinite(value) else None


def _but_samples(key: tuple[Any, ...]) -> tuple[Any, ...]:
    """A drawing key (:meth:`Timeline._key`) without the samples' version."""
    return key[:3] + key[4:]


class Timeline(Widget):
    """A study's load graph and run lanes on one time axis; see the module's docstring."""

    DEFAULT_CSS = """
    Timeline {
        height: 12;  /* four CPU rows, memory, the axis, six lanes */
        width: 1fr;
    }
    Timeline > .timeline--scale { color: $text-muted; }
    Timeline > .timeline--axis { color: $text-muted; }
    Timeline > .timeline--cpu { color: $primary; }
    Timeline > .timeline--mem { color: $foreground-muted; }
    Timeline > .timeline--kill { color: $error; text-style: bold; }
    Timeline > .timeline--resume { color: $success; text-style: bold; }
    Timeline > .timeline--crash { color: $warning; text-style: bold; }
    Timeline > .timeline--stop { color: $warning; text-style: bold; }
    Timeline > .timeline--lane { color: $text-muted; }
    Timeline > .timeline--diagnosis { color: $warning; }
    Timeline > .timeline--ablation { color: $text-primary; }
    Timeline > .timeline--proposal { color: $text-accent; }
    Timeline > .timeline--export { color: $text-secondary; }
    Timeline > .timeline--other { color: $foreground-muted; }
    Timeline > .timeline--failed { color: $error; text-style: bold; }
    Timeline > .timeline--highlight { background: $warning 40%; color: $text; text-style: bold; }
    """

    COMPONENT_CLASSES: ClassVar[set[str]] = {
        "timeline--scale",
        "timeline--axis",
        "timeline--cpu",
        "timeline--mem",
        "timeline--kill",
        "timeline--resume",
        "timeline--crash",
        "timeline--stop",
        "timeline--lane",
        "timeline--diagnosis",
        "timeline--ablation",
        "timeline--proposal",
        "timeline--export",
        "timeline--other",
        "timeline--failed",
        "timeline--highlight",
    }

    def __init__(
        self,
        clock: Callable[[], float] = time.time,
        *,
        graph_rows: int = GRAPH_ROWS,
        name: str | None = None,
        id: str | None = None,
        classes: str | None = None,
    ) -> None:
        super().__init__(name=name, id=id, classes=classes)
        self.clock = clock
        self.graph_rows = max(1, graph_rows)
        self.history = LoadHistory()
        self.lanes = RunLanes()
        self.marks: deque[tuple[float, str]] = deque(maxlen=MAX_MARKS)
        self.mark_labels: deque[str] = deque(maxlen=MAX_LABELS)  # the last marks, said in the tooltip
        self.highlights: dict[str, float] = {}
        self._marked = 0  # marks ever made: a new one must redraw even when the deque is full
        self._now = clock()
        self._styles: dict[StyleKey, Style] = {}
        self._strips: list[Strip] | None = None
        self._strips_key: tuple[Any, ...] = ()
        self._rows: list[Row] | None = None  # what the strips show, to draw again only the rows that changed
        self._levels: Levels | None = None  # the load rows of those strips, quantized

    # --- what the pane gives ---------------------------------------------------
    def _plausible(self, at: float | None) -> bool:
        return at is not None and EARLIEST <= at <= self.clock() + FUTURE_SLACK

    def add_load(self, at: float, cpu: float, memory: int) -> None:
        """One sample of the study's own load (``StudyLoad``): epoch seconds, percent of one core, bytes."""
        t, c = _finite(at), _finite(cpu)
        if t is None or c is None or c < 0 or not self._plausible(t):
            return
        m = _finite(memory)
        self.history.add(t, c, int(m) if m is not None and m >= 0 else None)

    def add_records(self, records: Sequence[Record]) -> None:
        """Ledger records; those about runs move the lanes, the rest are passed over."""
        self.lanes.add(records, self.clock())

    def set_purposes(self, purposes: Iterable[tuple[Any, Any]]) -> None:
        """Runs' purposes for runs whose plan was skipped (``RecordsSeen.purposes`` after a catch-up)."""
        self.lanes.set_purposes(purposes)

    def mark(self, kind: MarkKind, at: float, label: str = "") -> None:
        """A kill, a resume, a crash or a stop at ``at`` (epoch seconds): a vertical mark across the graph and the
        lanes; ``label`` (a kill's point) is said in the timeline's tooltip, one line per mark."""
        if kind not in MARK_LETTERS:
            raise ValueError(f"mark kind must be one of {', '.join(MARK_LETTERS)}, not {kind!r}")
        t = _finite(at)
        if t is None or not self._plausible(t):
            return
        self.marks.append((t, kind))
        self._marked += 1
        said = free_text(label, LABEL_LIMIT)  # a kill's point may come from a folder followed: quoted
        self.mark_labels.append(f"{MARK_LETTERS[kind]} {time.strftime('%H:%M:%S', time.localtime(t))} {said}".rstrip())
        self.tooltip = Text("\n".join(self.mark_labels))  # Text: a tooltip's string is read as markup

    def highlight(self, run: str, until: float) -> None:
        """Draw ``run``'s lane so that it draws the eye until ``until`` (epoch seconds)."""
        t = _finite(until)
        if t is None:
            return
        self.highlights[run[:RUN_ID_CHARS]] = t
        if len(self.highlights) > MAX_HIGHLIGHTS:
            for key, _ in sorted(self.highlights.items(), key=lambda kv: kv[1])[: -MAX_HIGHLIGHTS or None]:
                del self.highlights[key]

    # --- when to draw ----------------------------------------------------------
    def _key(self, width: int, height: int, now: float) -> tuple[Any, ...]:
        axis = self._axis(width, now)
        lit = frozenset(run for run, until in self.highlights.items() if until > now)
        return (width, height, axis.key, self.history.version, self.lanes.version, self._marked, lit)

    def tick(self) -> None:
        """Draw what was given since the last drawing, or the axis moved by a column (the pane's clock).

        Nothing is repainted when the picture stays the same: a column holds
        some seconds of samples and shows their peak, so most samples change
        no cell, and an idle console with three studies sampled every 2.5 s
        would otherwise repaint three whole timelines each time (measured:
        the largest part of its idle CPU).  When only samples came, their
        levels are compared first, without building the rows.
        """
        now = self.clock()
        width, height = self.size.width, self.size.height
        key = self._key(width, height, now)
        if key == self._strips_key:
            return
        levels: Levels | None = None
        if self._strips is not None and _but_samples(key) == _but_samples(self._strips_key):
            levels = self._load_levels(self._axis(width, now), now, self._layout(height)[0])
            if levels == self._levels:
                self._strips_key, self._now = key, now  # only samples came, and they change no level
                return
        rows, levels = self._rows_and_levels(width, height, now, levels)
        old, self._rows, self._levels, self._now, self._strips_key = self._rows, rows, levels, now, key
        strips = self._strips
        if rows == old and strips is not None:
            return  # the same picture: nothing to repaint
        if old is None or strips is None or len(old) != len(rows) or len(strips) != len(rows):
            self._strips = [self._strip(row, width) for row in rows]
            self.refresh()
            return
        # Only the rows that changed are drawn again (when the axis moves, the empty lanes and the
        # axis row stay as they were); the widget is repainted whole, as it is small.
        self._strips = [
            strips[y] if before == after else self._strip(after, width)
            for y, (before, after) in enumerate(zip(old, rows, strict=True))
        ]
        self.refresh()

    # --- drawing ---------------------------------------------------------------
    def _oldest(self) -> float | None:
        times = [t for t in (self.history.oldest, self.lanes.oldest) if t is not None]
        times += [at for at, _ in self.marks]
        return min(times, default=None)

    def _axis(self, width: int, now: float) -> TimeAxis:
        return TimeAxis.build(max(1, width - GUTTER), now, self._oldest())

    def _layout(self, height: int) -> tuple[int, int]:
        """(CPU rows, lane rows) for a widget ``height`` rows high."""
        graph = max(1, min(self.graph_rows, height - 2))
        return graph, max(0, height - graph - 2)

    def _load_columns(self, axis: TimeAxis, now: float) -> tuple[list[float | None], list[int | None]]:
        """The highest CPU and memory per column.

        This runs over every sample kept, on every frame, so it is written for
        speed: spans come in time order and mostly begin where the one before
        ended (that column is not looked up twice), and a time in the linear
        part is mapped inline (:meth:`TimeAxis.column`'s first branch).
        """
        cpu: list[float | None] = [None] * axis.columns
        memory: list[int | None] = [None] * axis.columns
        column, floor = axis.column, math.floor
        step, now_bin, boundary = axis.step, axis.now_bin, axis.boundary
        shift = axis.columns - 1 - axis.last_bin  # a bin's column, in the linear part
        last_end, last_col = math.nan, 0
        for start, end, c, m in self.history.span_tuples(now):
            first = last_col if start == last_end else column(start)
            last_col = shift + min(floor(end / step), now_bin) if end >= boundary else column(end)
            last_end = end
            for col in range(first, last_col + 1):
                old = cpu[col]
                if old is None or c > old:
                    cpu[col] = c
                if m is not None:
                    old_m = memory[col]
                    if old_m is None or m > old_m:
                        memory[col] = m
        return cpu, memory

    def _mark_columns(self, axis: TimeAxis) -> dict[int, str]:
        """Column -> mark kind; two marks in one column: the later moves right if it can, else the earlier left."""
        out: dict[int, str] = {}
        for at, kind in sorted(self.marks):
            col = axis.column(at)
            if col in out:
                if col + 1 < axis.columns and col + 1 not in out:
                    col += 1
                elif col > 0 and col - 1 not in out:
                    out[col - 1] = out[col]
            out[col] = kind
        return out

    def rows(self, width: int, height: int | None = None, now: float | None = None) -> list[Row]:
        """The rows as cells (glyph, style key); ``height`` None gives every lane (up to 64)."""
        now = self.clock() if now is None else now
        if height is None:
            height = self.graph_rows + 2 + min(MAX_TEXT_LANES, len(self.lanes.runs))
        return self._rows_and_levels(width, height, now)[0]

    def _load_levels(self, axis: TimeAxis, now: float, graph_rows: int) -> Levels:
        """What the graph and the memory row show, quantized: equal levels, equal rows."""
        cpu, memory = self._load_columns(axis, now)
        top = cpu_top(max((v for v in cpu if v is not None), default=0.0))
        levels = graph_rows * 8
        heights = tuple(
            0 if v is None or v < MIN_SHOWN_CPU else max(1, min(levels, round(v / top * levels))) for v in cpu
        )
        peak = max((m for m in memory if m is not None), default=0)
        mem_top = memory_top(peak)
        mem_levels = tuple(0 if not m else max(1, min(8, round(m / mem_top * 8))) for m in memory)
        return top, heights, mem_top, mem_levels, bool(peak)

    def _rows_and_levels(
        self, width: int, height: int, now: float, levels: Levels | None = None
    ) -> tuple[list[Row], Levels]:
        """The rows at ``now``; ``levels``: the load rows' levels at that moment, when already known."""
        graph_rows, lane_rows = self._layout(height)
        axis = self._axis(width, now)
        marks = self._mark_columns(axis)
        if levels is None:
            levels = self._load_levels(axis, now, graph_rows)
        rows = self._graph_rows(levels, graph_rows, marks)
        rows.append(self._memory_row(levels, marks))
        axis_row: Row = [(c, ("axis", None)) for c in " " * (GUTTER - 1) + "└" + axis.labels()]
        rows.append(axis_row)
        lit = {run for run, until in self.highlights.items() if until > now}
        for run in self.lanes.latest(lane_rows):
            rows.append(self._lane_row(axis, run, now, marks, run.run in lit))
        rows.extend([(" ", ("lane", None))] * width for _ in range(height - len(rows)))
        return [self._fit(row, width) for row in rows[:height]], levels

    @staticmethod
    def _fit(row: Row, width: int) -> Row:
        if len(row) >= width:
            return row[:width]
        return row + [(" ", ("lane", None))] * (width - len(row))

    @staticmethod
    def _gutter(text: str, cls: str, line: str = "│") -> Row:
        label = text[: GUTTER - 1].rjust(GUTTER - 1)
        row: Row = [(c, (cls, None)) for c in label]
        row.append((line, ("scale", None)))
        return row

    def _graph_rows(self, levels: Levels, rows: int, marks: dict[int, str]) -> list[Row]:
        top, heights = levels[0], levels[1]
        labels = {0: percent_text(top), rows - 1: "0"}
        if rows % 2 == 0 and rows >= 4:
            labels[rows // 2] = percent_text(top / 2)
        out: list[Row] = []
        for r in range(rows):
            base = (rows - 1 - r) * 8
            label = labels.get(r)
            row = self._gutter(label or "", "scale", "┤" if label is not None else "│")
            # A cell per column from one table; the few marked columns are put in after.
            row.extend(_CPU_CELLS[BLOCKS[8 if h >= base + 8 else h - base if h > base else 0]] for h in heights)
            for col, kind in marks.items():
                glyph = row[GUTTER + col][0]
                if r == 0:
                    row[GUTTER + col] = (MARK_LETTERS[kind], (kind, None))
                else:
                    row[GUTTER + col] = (MARK_LINE if glyph == " " else glyph, (kind, None))
            out.append(row)
        return out

    def _memory_row(self, levels: Levels, marks: dict[int, str]) -> Row:
        mem_top, mem_levels, any_memory = levels[2], levels[3], levels[4]
        row = self._gutter(bytes_text(mem_top) if any_memory else "mem", "mem", "┤")
        row.extend(_MEM_CELLS[BLOCKS[level]] for level in mem_levels)
        for col, kind in marks.items():
            glyph = row[GUTTER + col][0]
            row[GUTTER + col] = (MARK_LINE if glyph == " " else glyph, (kind, None))
        return row

    def _lane_row(self, axis: TimeAxis, run: Run, now: float, marks: dict[int, str], lit: bool) -> Row:
        background = "highlight" if lit else None
        label = free_text(run.run, GUTTER - 1)  # the study's run id: quoted, cut to the gutter
        row: Row = [(c, ("highlight" if lit else "lane", None)) for c in label.ljust(GUTTER - 1)]
        row.append((" ", ("lane", background)))
        placed = run.planned if run.planned is not None else run.charged
        began = run.started if run.started is not None else run.ended
        columns = (
            axis.column(placed) if placed is not None else -1,
            axis.column(began) if began is not None else -1,
            axis.column(run.ended) if run.ended is not None else axis.column(now),
        )
        cells = lane_cells(run, columns)
        state = run.state
        for col in range(axis.columns):
            glyph = cells.get(col)
            kind = marks.get(col)
            if glyph is None:
                row.append((MARK_LINE, (kind, background)) if kind else (" ", ("lane", background)))
            elif kind is not None:
                row.append((MARK_LETTERS[kind], (kind, "on-" + run.purpose)))
            elif state is RunState.FAILED and glyph == "✗":
                row.append((glyph, ("failed", background)))
            else:
                row.append((glyph, (run.purpose, background)))
        return row

    def text(self, width: int, height: int | None = None) -> str:
        """The timeline as plain text at ``width`` columns (for tests); ``height`` None shows every lane."""
        return "\n".join("".join(glyph for glyph, _ in row) for row in self.rows(width, height))

    # --- the line API ----------------------------------------------------------
    def notify_style_update(self) -> None:
        super().notify_style_update()
        self._styles.clear()
        self._strips = None
        self._rows = None

    def _style(self, key: StyleKey) -> Style:
        # Resolving a component style walks the ancestors; a frame asks for the same few many times.
        style = self._styles.get(key)
        if style is None:
            component, background = key
            style = self.rich_style + self.get_component_rich_style(f"timeline--{component}")
            if background == "highlight":
                style += Style(bgcolor=self.get_component_rich_style("timeline--highlight").bgcolor, bold=True)
            elif background is not None:
                # A mark on a bar: the bar's colour goes on under the letter, so the bar reads unbroken;
                # the letter takes the widget's background colour, which every bar colour shows.
                bar = self.get_component_rich_style(f"timeline--{background[3:]}").color
                style += Style(color=self.rich_style.bgcolor, bgcolor=bar, bold=True)
            self._styles[key] = style
        return style

    def _strip(self, row: Row, width: int) -> Strip:
        segments: list[Segment] = []
        run: list[str] = []
        key: StyleKey | None = None
        for glyph, cell_key in row:
            if cell_key != key and run:
                assert key is not None
                segments.append(Segment("".join(run), self._style(key)))
                run = []
            key = cell_key
            run.append(glyph)
        if run and key is not None:
            segments.append(Segment("".join(run), self._style(key)))
        return Strip(segments, width)

    def render_line(self, y: int) -> Strip:
        # Only a first paint (or one after new styles) builds here; every other change of the strips
        # is made by the tick or a resize, which repaint the widget.  A line drawn here from newer
        # data, while Textual kept the others from its cache, would mix two pictures.
        if self._strips is None:
            self._redraw(refresh=False)
        assert self._strips is not None
        if 0 <= y < len(self._strips):
            return self._strips[y]
        return Strip.blank(self.size.width, self.rich_style)

    def _redraw(self, *, refresh: bool = True) -> None:
        width, height = self.size.width, self.size.height
        self._rows, self._levels = self._rows_and_levels(width, height, self._now)
        self._strips = [self._strip(row, width) for row in self._rows]
        self._strips_key = self._key(width, height, self._now)
        if refresh:
            self.refresh()

    def on_resize(self) -> None:
        self._redraw()
