"""The load graph of one study: machine CPU, load, memory and the study's own CPU over the last minutes.

Rolling windows (one sample a second, ``window`` samples kept) drawn as
sparkline rows of block characters, with the current value at the row's end
and a marker row where the study was killed (``K``) and resumed (``R``).  When
the window is longer than the row is wide, each column shows the highest
sample of a fixed run of seconds, aligned to the sample count, so columns do
not shimmer as samples arrive and a short spike is never averaged away.
"""

from __future__ import annotations

import math
from collections import deque
from typing import Any, ClassVar

from rich.segment import Segment
from rich.style import Style
from textual.strip import Strip
from textual.widget import Widget

BLOCKS = " ▁▂▃▄▅▆▇█"
LABEL_WIDTH = 5
VALUE_WIDTH = 6
SERIES = ("cpu", "load", "mem", "tree")
LABELS = {"cpu": "cpu", "load": "load", "mem": "mem", "tree": "tree"}


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    if math.isnan(value):
        return None
    return float(value)


def sparkline(values: list[float | None], scale: float) -> str:
    """One block character per value; a value of nothing (no sample) is a blank."""
    out = []
    for v in values:
        if v is None or v <= 0 or scale <= 0:
            out.append(" ")
            continue
        level = round(min(v, scale) / scale * 8)
        out.append(BLOCKS[max(1, level)])  # anything above zero shows
    return "".join(out)


class LoadGraph(Widget):
    """Sparkline rows: machine CPU % (0-100), load average (1 min), memory %, study tree CPU (% of one core).

    ``cores`` scales the load row (0..cores); without it the row scales to the
    window's highest load (at least 1).
    """

    COMPONENT_CLASSES: ClassVar[set[str]] = {
        "loadgraph--label",
        "loadgraph--value",
        "loadgraph--cpu",
        "loadgraph--load",
        "loadgraph--mem",
        "loadgraph--tree",
        "loadgraph--kill",
        "loadgraph--resume",
    }

    def __init__(
        self,
        window: int = 300,
        cores: int | None = None,
        *,
        redraw_on_sample: bool = True,
        name: str | None = None,
        id: str | None = None,
        classes: str | None = None,
    ) -> None:
        super().__init__(name=name, id=id, classes=classes)
        self.window = window
        self.cores = cores
        # False: samples are drawn on the owner's clock tick (redraw()), so that
        # every graph on screen is repainted in the same frame.
        self.redraw_on_sample = redraw_on_sample
        self._stale = False
        self.series: dict[str, deque[float | None]] = {key: deque(maxlen=window) for key in SERIES}
        self.samples = 0  # samples ever added: gives each one a stable index
        self.markers: deque[tuple[int, str]] = deque(maxlen=64)
        self._marked = 0  # marks ever made: a new one must redraw even when the deque is full
        self._styles: dict[str, Style] = {}
        self._strips: list[Strip] | None = None
        self._strips_key: tuple[int, int, int] = (0, 0, 0)

    def add_sample(self, sample: dict[str, Any], tree_cpu: float) -> None:
        """A light machine sample (``load`` [1, 5, 15], ``memory`` {percent, ...}, ``cpu``) and the tree CPU."""
        load = sample.get("load")
        memory = sample.get("memory")
        self.series["cpu"].append(_number(sample.get("cpu")))
        self.series["load"].append(_number(load[0]) if isinstance(load, (list, tuple)) and load else None)
        self.series["mem"].append(_number(memory.get("percent")) if isinstance(memory, dict) else None)
        self.series["tree"].append(_number(tree_cpu))
        self.samples += 1
        if self.redraw_on_sample:
            self.refresh()
        else:
            self._stale = True

    def redraw(self, force: bool = False) -> None:
        """Draw the samples taken since the last drawing (the console calls this on its clock tick);
        ``force`` draws even with no new sample."""
        if self._stale or force:
            self._stale = False
            self.refresh()

    def mark(self, kind: str) -> None:
        """Mark the latest sample: ``"kill"`` draws K, ``"resume"`` draws R."""
        if kind not in ("kill", "resume"):
            raise ValueError(f"mark kind must be 'kill' or 'resume', not {kind!r}")
        self.markers.append((max(0, self.samples - 1), kind))
        self._marked += 1
        self.refresh()

    def latest(self, key: str) -> float | None:
        values = self.series[key]
        return values[-1] if values else None

    # --- drawing -------------------------------------------------------------
    def _scale(self, key: str) -> float:
        present = [v for v in self.series[key] if v is not None]
        top = max(present, default=0.0)
        if key in ("cpu", "mem"):
            return 100.0
        if key == "tree":
            return max(100.0, top)
        return float(self.cores) if self.cores else max(1.0, top)

    def _bucket(self, columns: int) -> int:
        return max(1, math.ceil(self.window / max(1, columns)))

    def _columns(self, key: str, columns: int) -> list[float | None]:
        out: list[float | None] = [None] * columns
        values = self.series[key]
        if not values or columns <= 0:
            return out
        bucket = self._bucket(columns)
        newest = (self.samples - 1) // bucket
        first = self.samples - len(values)
        for index, v in enumerate(values, start=first):
            col = columns - 1 - (newest - index // bucket)
            if col < 0 or v is None:
                continue
            current = out[col]
            out[col] = v if current is None else max(current, v)
        return out

    def _marker_row(self, columns: int) -> list[str | None]:
        row: list[str | None] = [None] * columns
        if columns <= 0:
            return row
        bucket = self._bucket(columns)
        newest = max(0, self.samples - 1) // bucket
        for index, kind in self.markers:
            col = columns - 1 - (newest - index // bucket)
            # A mark made before the first sample lands on the newest column.
            if col < 0 or col >= columns:
                col = min(max(col, -1), columns - 1)
                if col < 0:
                    continue
            # Two marks in one column: the later one moves right if it can, so both stay visible.
            if row[col] is not None:
                if col + 1 < columns and row[col + 1] is None:
                    col += 1
                elif col > 0 and row[col - 1] is None:
                    # At the right edge: the earlier mark steps left instead.
                    row[col - 1] = row[col]
            row[col] = kind
        return row

    @staticmethod
    def _value_text(key: str, v: float | None) -> str:
        if v is None:
            return "-"
        if key == "load":
            return f"{v:.2f}"
        return f"{v:.0f}%"

    def notify_style_update(self) -> None:
        super().notify_style_update()
        self._styles.clear()
        self._strips = None

    def _style(self, name: str) -> Style:
        # Resolving a component style walks the ancestors; the graph asks for the same eight every second.
        style = self._styles.get(name)
        if style is None:
            style = self._styles[name] = self.get_component_rich_style(name)
        return style

    def rows(self, width: int) -> list[list[tuple[str, str]]]:
        """The rows as (text, component class) runs: four sparklines and the marker row."""
        columns = max(0, width - LABEL_WIDTH - VALUE_WIDTH)
        out: list[list[tuple[str, str]]] = [
            [
                (f"{LABELS[key]:<{LABEL_WIDTH}}", "loadgraph--label"),
                (sparkline(self._columns(key, columns), self._scale(key)), f"loadgraph--{key}"),
                (f"{self._value_text(key, self.latest(key)):>{VALUE_WIDTH}}", "loadgraph--value"),
            ]
            for key in SERIES
        ]
        marks: list[tuple[str, str]] = [(" " * LABEL_WIDTH, "loadgraph--label")]
        for kind in self._marker_row(columns):
            if kind is None:
                marks.append((" ", "loadgraph--label"))
            else:
                marks.append(("K" if kind == "kill" else "R", f"loadgraph--{kind}"))
        marks.append((" " * VALUE_WIDTH, "loadgraph--label"))
        out.append(marks)
        return out

    def text(self, width: int | None = None) -> str:
        """The graph as plain text, one line per row."""
        width = self.content_region.width if width is None else width
        return "\n".join("".join(text for text, _ in row) for row in self.rows(width))

    def render_line(self, y: int) -> Strip:
        # The line API skips the general text pipeline: the graph redraws every second in every pane.
        width = self.content_region.width
        key = (self.samples, self._marked, width)
        if self._strips is None or self._strips_key != key:
            base = self.rich_style
            strips = []
            for row in self.rows(width):
                segments = [Segment(text, base + self._style(cls)) for text, cls in row]
                strips.append(Strip(segments).crop_extend(0, width, base))
            self._strips, self._strips_key = strips, key
        if 0 <= y < len(self._strips):
            return self._strips[y]
        return Strip.blank(width, self.rich_style)
