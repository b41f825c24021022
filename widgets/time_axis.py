"""The timeline's time axis: which column shows which moment, and the axis row's labels.

A linear column stands for a whole number of seconds from a short ladder
(:data:`STEPS`: 5, 6, 10, 12, 15, 20, 30, 40 s, ...), so that panes of
nearly the same width share a step, and so move at the same moments, in
one frame.

While everything shown fits in the columns at a step no coarser than the
older form's (below), the axis is *young*: it begins at the oldest thing
shown and grows to the right, at the finest step of :data:`YOUNG_STEPS`
(a quarter second, then the ladder) that holds it all with room for now.
A study twenty seconds old fills at least half of the graph, not its last
columns, and nothing shifts as time passes: the picture grows where now is
(the axis row says ``now`` there) and is drawn again at a coarser step
when now reaches the right edge.  Past that, the right three quarters of
the columns are linear over at least the last ten minutes
(:data:`LINEAR_SPAN`, at the smallest step of the ladder that covers it),
with now in the last column; the left quarter covers everything older,
compressed into a span taken from a fixed ladder (:data:`OLD_SPANS`: 20
minutes, 30 minutes, 1 hour, ... 30 days), the smallest that reaches back
to the oldest thing shown.  Anything older than the ladder's last step is
drawn in the first column.  Under :data:`MIN_SPLIT_COLUMNS` columns there is
no room for two scales, and every column is linear.

Columns are aligned to absolute time (a linear column is the bin
``floor(t / step)``), so what a column shows does not shimmer as the clock
moves: the whole picture shifts by one column every ``step`` seconds, and the
console redraws it then and not in between (:attr:`TimeAxis.key`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

LINEAR_SPAN = 600.0  # at least the last ten minutes, drawn linearly
# Seconds per linear column.  Five at the least: a finer axis moves, and repaints, at nearly every tick
# (measured: 3 s steps doubled an idle console's CPU while its studies were young).
STEPS: tuple[float, ...] = tuple(
    float(s) for s in (5, 6, 10, 12, 15, 20, 30, 40, 60, 90, 120, 180, 300, 600, 900, 1800, 3600)
)
OLD_SPANS: tuple[float, ...] = tuple(
    float(s)
    for s in (
        20 * 60,
        30 * 60,
        3600,
        2 * 3600,
        3 * 3600,
        6 * 3600,
        12 * 3600,
        86400,
        2 * 86400,
        4 * 86400,
        7 * 86400,
        14 * 86400,
        30 * 86400,
    )
)
# A young axis grows from the oldest thing shown.  Its finer steps cost a repaint at most once a tick
# (the screen's clock, every 2 s) and only while the study is a few minutes old: what there is to see
# then is a few minutes, and drawn in the last columns it was not seen.  Measured with
# bench/console_load.py (three studies one to two minutes old, idle): 0.37 % of a core, toolong 0.30 %.
YOUNG_STEPS: tuple[float, ...] = (0.25, 0.5, 1.0, 2.0, 3.0, 4.0, *STEPS)
MIN_SPLIT_COLUMNS = 8
OLD_FILL = "┄"  # the compressed part of the axis row: dashed, so it reads as another scale
LINEAR_FILL = "─"


def age_text(seconds: float) -> str:
    """A short age: ``45s``, ``10m``, ``3h``, ``2d``."""
    seconds = max(0.0, seconds)
    if seconds < 100:
        return f"{seconds:.0f}s"
    if seconds < 120 * 60:
        return f"{seconds / 60:.0f}m"
    if seconds < 48 * 3600:
        return f"{seconds / 3600:.0f}h"
    return f"{seconds / 86400:.0f}d"


def _step_for(seconds: float) -> float:
    """The ladder's smallest step of at least ``seconds`` (past its end, ``seconds`` itself)."""
    return next((s for s in STEPS if s >= seconds), seconds)


@dataclass(frozen=True, slots=True)
class TimeAxis:
    """The mapping of ``columns`` columns to time at one moment (see the module's docstring).

    Made by :meth:`build`; the fields after ``old_span`` follow from the
    others and are kept because :meth:`column` runs for every sample of
    every frame.
    """

    columns: int
    step: float  # seconds per linear column
    last_bin: int  # the bin of the rightmost column
    old_columns: int
    old_span: float  # seconds covered by the compressed columns
    boundary: float  # where the linear part begins (the start of its first column)
    origin: float  # the start of the first column
    old_step: float  # seconds per compressed column
    now_bin: int  # the bin of now: the rightmost column's, except on a young axis

    @classmethod
    def build(cls, columns: int, now: float, oldest: float | None = None) -> TimeAxis:
        """The axis for ``columns`` columns at ``now``, reaching back to ``oldest`` if the ladder allows: from
        ``oldest`` on while it is young, else ending at ``now`` (``oldest`` None: ten minutes linear and the
        ladder's first span compressed)."""
        columns = max(1, columns)
        old_columns = columns // 4 if columns >= MIN_SPLIT_COLUMNS else 0
        step = _step_for(LINEAR_SPAN / (columns - old_columns))
        if oldest is not None and oldest <= now:
            # Young: every column linear from the oldest, at the finest step (no coarser than the older form's)
            # at which now is still on the axis.
            young = next(
                (s for s in YOUNG_STEPS if s <= step and math.floor(now / s) - math.floor(oldest / s) < columns), None
            )
            if young is not None:
                first_bin = math.floor(oldest / young)
                boundary = first_bin * young
                return cls(
                    columns,
                    young,
                    first_bin + columns - 1,
                    0,
                    OLD_SPANS[0],
                    boundary,
                    boundary,
                    0.0,
                    math.floor(now / young),
                )
        now_bin = math.floor(now / step)
        boundary = (now_bin - (columns - old_columns) + 1) * step
        old_span = OLD_SPANS[0]
        if old_columns and oldest is not None:
            need = boundary - oldest
            old_span = next((span for span in OLD_SPANS if span >= need), OLD_SPANS[-1])
        if not old_columns:
            return cls(columns, step, now_bin, 0, old_span, boundary, boundary, 0.0, now_bin)
        origin = boundary - old_span
        return cls(columns, step, now_bin, old_columns, old_span, boundary, origin, old_span / old_columns, now_bin)

    @property
    def key(self) -> tuple[int, float, int, int, float]:
        """What a drawing on this axis depends on: equal keys, equal pictures."""
        return (self.columns, self.step, self.last_bin, self.now_bin, self.old_span)

    @property
    def linear_columns(self) -> int:
        return self.columns - self.old_columns

    def column(self, t: float) -> int:
        """The column that shows the moment ``t``; earlier than the first is the first, later than now is now."""
        if t >= self.boundary:
            bin_ = min(math.floor(t / self.step), self.now_bin)
            return max(self.old_columns, self.columns - 1 - self.last_bin + bin_)
        if not self.old_columns:
            return 0
        index = math.floor((t - self.origin) / self.old_step)
        return min(self.old_columns - 1, max(0, index))

    def start(self, column: int) -> float:
        """When column ``column`` begins."""
        if column >= self.old_columns:
            return (self.last_bin - (self.columns - 1 - column)) * self.step
        return self.origin + column * self.old_step

    def labels(self) -> str:
        """The axis row: ``now`` where it is (the right edge, but on a young axis), ``-10m``, ``-5m`` and
        ``-1m`` (or ``-2m``) where they fall, what the whole axis reaches back at the left, and a dashed
        line over the compressed part.

        Labels that would touch another are left out, the less important first.  They are placed from
        the middle of now's column, not from the moment: equal keys, equal rows, so no label
        moves by a cell in the middle of a step (a repaint of the whole timeline for nothing).
        """
        now = (self.now_bin + 0.5) * self.step
        reach = (self.now_bin + 1) * self.step - self.origin  # what the whole axis covers: a round number
        width = self.columns
        row = [OLD_FILL if c < self.old_columns else LINEAR_FILL for c in range(width)]
        taken = [False] * width

        def at(back: float, text: str) -> list[tuple[int, str]]:
            # Only a moment on the axis: one before it would be drawn in the first column.
            return [(self.column(now - back), text)] if now - back >= self.origin else []

        here = self.column(now)
        choices = [[(here - 2, "now"), (here, "now")], at(LINEAR_SPAN, "-10m"), [(0, "-" + age_text(reach))]]
        choices.append(at(300, "-5m"))
        # The last minute is narrow on a narrow axis: -2m stands in where -1m would touch "now".
        choices.append(at(60, "-1m") + at(120, "-2m"))
        for options in choices:
            for col, text in options:
                begin, end = col, col + len(text)
                # One free cell on each side, so that two labels never read as one.
                if begin < 0 or end > width or any(taken[max(0, begin - 1) : min(width, end + 1)]):
                    continue
                row[begin:end] = text
                taken[begin:end] = [True] * len(text)
                break
        return "".join(row)
