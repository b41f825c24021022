"""Graph render: the cost of a frame of a study's load graph, three panes' worth, per candidate, side by side.

The candidates, each drawing the same study (a 20-minute history of load
samples every 2.5 s, five runs, a kill and a resume) in three panes of 53
columns (``--width``) in one headless Textual app:

* ``timeline`` — the project's :class:`studymon.widgets.timeline.Timeline`,
  its graph rows only (four CPU rows, the memory row, the axis: 6 rows), and
  ``timeline+lanes`` — the same widget with 8 run lanes under it (14 rows);
* ``sparkline`` — Textual's own ``Sparkline`` (6 rows), given the samples;
* ``plotext`` — ``textual-plotext``'s ``PlotextPlot`` (6 rows): the CPU as a
  braille line, a value scale by y ticks, the compressed time axis by x ticks
  at the times mapped through the project's :class:`TimeAxis`, the kill and
  the resume as vertical lines; and ``plotext+lanes`` — the same with a
  second subplot of run lanes (14 rows).  Skipped when textual-plotext is
  not installed (it is not a dependency of the project).

A frame is what happens in each pane when a sample arrives: the widget is
given the sample (the clock moves 2.5 s), asks for a repaint, and all its
lines are rendered (``Widget.render_lines``, the lines the compositor then
places on the screen; the compositing is the same for every candidate and is
left out).  The candidates take turns within every frame, in a rotating
order.  Also timed: a repaint with nothing new (another part of the screen
moved over it), served from each widget's cache; and, for the project's
widget, ten minutes of idle clock ticks (one a second, no sample: the
widget redraws only when its axis moves by a column).

    python bench/graph_render.py            # 300 frames
    python bench/graph_render.py --quick    # smoke run: 20 frames
    python bench/graph_render.py --width 150 --frames 100 --json out.json

Read: milliseconds per frame of three panes (p50, p90, p99), and the ratio of
each candidate's p50 to the project's widget with as many rows.  Below it,
what each candidate can draw of what the console needs.  Exit status 0 when
every candidate that is installed was measured, 2 when one failed, 130 when
interrupted.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import math
import platform
import statistics
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path
from typing import Any

from textual.app import App, ComposeResult
from textual.containers import Horizontal, Vertical
from textual.geometry import Region
from textual.widget import Widget
from textual.widgets import Sparkline

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from studymon.engine.contract.ledger import Record  # noqa: E402
from studymon.engine.io.clock import rfc3339_ms  # noqa: E402
from studymon.widgets.time_axis import TimeAxis  # noqa: E402
from studymon.widgets.timeline import GUTTER, Timeline  # noqa: E402

try:
    from textual_plotext import PlotextPlot
except ImportError:  # not a dependency: the bench says so and measures the rest
    PlotextPlot = None

PANES = 3
GRAPH_ROWS = 6
LANE_ROWS = 8
SAMPLE_EVERY = 2.5
HISTORY = 1200.0  # seconds of samples before the first frame
IDLE_TICKS = 600  # one a second: ten minutes of an idle pane
T0 = 1_764_000_000.0
MIB = 1024 * 1024
# (run, purpose, start, end or None) in seconds from T0; the kill and the resume go through d2.
RUNS = [
    ("d1", "diagnosis", 60.0, 300.0),
    ("a1", "ablation", 320.0, 600.0),
    ("d2", "diagnosis", 1000.0, 1250.0),
    ("a2", "ablation", 1262.0, None),
]
KILL, RESUME = 1100.0, 1160.0

CAPABILITIES = {
    "timeline": (
        "yes: 0, 50 % and the top at the left; the top grows in steps past 100 %",
        "yes: ten minutes linear, older compressed into the left quarter, the axis dashed there",
        "yes: K and R across the graph and the lanes, the letter on a bar that runs through",
        "yes: same columns, one bar per run",
    ),
    "sparkline": (
        "no: stretches the data's own minimum..maximum over the rows, no labels",
        "no: equal buckets over the values given, no time at all (could be fed pre-binned columns, unlabelled)",
        "no",
        "no",
    ),
    "plotext": (
        "yes: y ticks (its frame takes two rows and a column of the few)",
        "by hand: plot at mapped x positions and label x ticks; the axis row is a framed ruler",
        "lines only (vline); letters need text() placed by hand",
        "in a second subplot: its own y labels set its own left margin, so its x axis does not line up",
    ),
}


def load_at(t: float) -> tuple[float, int]:
    """The study's load ``t`` seconds in: a small controller and whatever runs, diagnosis heavier."""
    cpu, memory = 4.0 + 2.0 * math.sin(t / 30.0), 90 * MIB
    for _, purpose, start, end in RUNS:
        if start <= t and (end is None or t < end):
            cpu += (150.0 if purpose == "diagnosis" else 70.0) + 12.0 * math.sin(t / 17.0)
            memory += 160 * MIB + int(40 * MIB * math.sin(t / 50.0))
    return round(cpu, 1), memory


def ledger() -> list[Record]:
    out: list[Record] = []

    def add(kind: str, at: float, **content: Any) -> None:
        out.append(Record(len(out) + 1, rfc3339_ms(T0 + at), kind, content, len(out) + 1, 0))

    for run, purpose, start, end in RUNS:
        add("runPlanned", start - 1, run=run, purpose=purpose)
        add("charge", start - 0.5, run=run, amount=10, balance=0)
        add("runStarted", start, run=run, container=f"inforsi-s-{run}")
        if end is not None:
            add("runResult", end, run=run, exitCode=0, outputs={})
    return out


class Clock:
    def __init__(self, now: float) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


@dataclass
class Candidate:
    """One way of drawing the graph: how to make a pane's widget and how to give it a sample."""

    name: str
    rows: int
    make: Callable[[Clock], Widget]
    feed: Callable[[Widget, float], None]  # the widget, the sample's time
    widgets: list[Widget] = field(default_factory=list)
    frames: list[float] = field(default_factory=list)  # ms, three panes
    repaints: list[float] = field(default_factory=list)
    idle_tick: float | None = None  # us per clock tick of three panes with nothing new
    redraws: int = 0  # frames those ticks drew


# --- the project's widget -----------------------------------------------------------------


def make_timeline(clock: Clock) -> Widget:
    timeline = Timeline(clock)
    for i in range(int(HISTORY / SAMPLE_EVERY)):
        t = i * SAMPLE_EVERY
        timeline.add_load(T0 + t, *load_at(t))
    timeline.add_records([r for r in ledger() if r.at <= rfc3339_ms(T0 + HISTORY)])
    timeline.mark("kill", T0 + KILL)
    timeline.mark("resume", T0 + RESUME)
    return timeline


def feed_timeline(widget: Widget, t: float) -> None:
    assert isinstance(widget, Timeline)
    widget.add_load(T0 + t, *load_at(t))
    widget.tick()


# --- Textual's Sparkline --------------------------------------------------------------------


def make_sparkline(clock: Clock) -> Widget:
    del clock
    data = [load_at(i * SAMPLE_EVERY)[0] for i in range(int(HISTORY / SAMPLE_EVERY))]
    return Sparkline(data)


def feed_sparkline(widget: Widget, t: float) -> None:
    assert isinstance(widget, Sparkline)
    data = list(widget.data or [])
    data.append(load_at(t)[0])
    widget.data = data[-int(HISTORY / SAMPLE_EVERY) :]  # a reactive: it asks for its repaint


# --- textual-plotext ------------------------------------------------------------------------


class PlotextPane:
    """A PlotextPlot and the samples it draws, redrawn whole on each sample (plotext keeps no state to add to)."""

    def __init__(self, clock: Clock, lanes: bool) -> None:
        assert PlotextPlot is not None
        self.widget = PlotextPlot()
        self.clock = clock
        self.lanes = lanes
        self.samples = [
            (T0 + i * SAMPLE_EVERY, load_at(i * SAMPLE_EVERY)[0]) for i in range(int(HISTORY / SAMPLE_EVERY))
        ]
        self.widget.plotext_pane = self  # type: ignore[attr-defined]

    def draw(self) -> None:
        now = self.clock()
        width = max(8, (self.widget.size.width or 53) - GUTTER)
        axis = TimeAxis.build(width, now, self.samples[0][0])
        plt = self.widget.plt
        plt.clear_figure()
        graph = plt
        if self.lanes:
            plt.subplots(2, 1)
            graph = plt.subplot(1, 1)
        xs = [axis.column(t) for t, _ in self.samples]
        ys = [v for _, v in self.samples]
        graph.plot(xs, ys, marker="braille")
        top = 200.0 if max(ys) > 100 else 100.0
        graph.ylim(0, top)
        graph.yticks([0, top / 2, top], ["0", f"{top / 2:.0f}%", f"{top:.0f}%"])
        ticks = [0, axis.old_columns, axis.column(now - 300), axis.column(now - 60), width - 1]
        graph.xticks(ticks, ["old", "-10m", "-5m", "-1m", "now"])
        graph.xlim(0, width - 1)
        for at, colour in ((T0 + KILL, "red"), (T0 + RESUME, "green")):
            graph.vline(axis.column(at), colour)
        if self.lanes:
            lanes = plt.subplot(2, 1)
            for index, (_run, _purpose, start, end) in enumerate(RUNS):
                x0 = axis.column(T0 + start)
                x1 = axis.column(T0 + end) if end is not None else width - 1
                lanes.plot([x0, x1], [index, index], marker="hd")
            for at, colour in ((T0 + KILL, "red"), (T0 + RESUME, "green")):
                lanes.vline(axis.column(at), colour)
            lanes.yticks(list(range(len(RUNS))), [run for run, *_ in RUNS])
            lanes.xlim(0, width - 1)
        self.widget.refresh()


def make_plotext(lanes: bool) -> Callable[[Clock], Widget]:
    def make(clock: Clock) -> Widget:
        return PlotextPane(clock, lanes).widget

    return make


def feed_plotext(widget: Widget, t: float) -> None:
    pane: PlotextPane = widget.plotext_pane  # type: ignore[attr-defined]
    pane.samples.append((T0 + t, load_at(t)[0]))
    del pane.samples[: -int(HISTORY / SAMPLE_EVERY)]
    pane.draw()


def candidates() -> list[Candidate]:
    out = [
        Candidate("timeline", GRAPH_ROWS, make_timeline, feed_timeline),
        Candidate("timeline+lanes", GRAPH_ROWS + LANE_ROWS, make_timeline, feed_timeline),
        Candidate("sparkline", GRAPH_ROWS, make_sparkline, feed_sparkline),
    ]
    if PlotextPlot is not None:
        out += [
            Candidate("plotext", GRAPH_ROWS, make_plotext(False), feed_plotext),
            Candidate("plotext+lanes", GRAPH_ROWS + LANE_ROWS, make_plotext(True), feed_plotext),
        ]
    return out


class Bench(App[None]):
    """Every candidate in three panes side by side, one candidate under another."""

    CSS = "Vertical { height: auto; } Horizontal { height: auto; } Horizontal > * { margin: 0; }"

    def __init__(self, entries: list[Candidate], clock: Clock, width: int) -> None:
        super().__init__()
        self.entries = entries
        self.clock = clock
        self.pane_width = width

    def compose(self) -> ComposeResult:
        with Vertical():
            for entry in self.entries:
                with Horizontal():
                    for _ in range(PANES):
                        widget = entry.make(self.clock)
                        widget.styles.width = self.pane_width
                        widget.styles.height = entry.rows
                        entry.widgets.append(widget)
                        yield widget


def lines_of(widget: Widget) -> list[str]:
    return [strip.text for strip in widget.render_lines(Region(0, 0, widget.size.width, widget.size.height))]


async def measure(entries: list[Candidate], frames: int, width: int) -> None:
    clock = Clock(T0 + HISTORY)
    app = Bench(entries, clock, width)
    size = (PANES * width + 1, sum(e.rows for e in entries) + 2)
    async with app.run_test(size=size) as pilot:
        await pilot.pause()
        for entry in entries:  # the first drawing of each (plotext draws only when asked)
            for widget in entry.widgets:
                if isinstance(getattr(widget, "plotext_pane", None), PlotextPane):
                    widget.plotext_pane.draw()  # type: ignore[attr-defined]
                lines_of(widget)
        await pilot.pause()
        gc.collect()
        for frame in range(frames):
            t = HISTORY + (frame + 1) * SAMPLE_EVERY
            clock.now = T0 + t
            order = entries[frame % len(entries) :] + entries[: frame % len(entries)]
            for entry in order:
                began = time.perf_counter()
                for widget in entry.widgets:
                    entry.feed(widget, t)
                    widget.render_lines(Region(0, 0, widget.size.width, widget.size.height))
                entry.frames.append((time.perf_counter() - began) * 1000)
            for entry in order:
                began = time.perf_counter()
                for widget in entry.widgets:
                    widget._styles_cache.clear()  # the region is painted again; the widget's content has not changed
                    widget.render_lines(Region(0, 0, widget.size.width, widget.size.height))
                entry.repaints.append((time.perf_counter() - began) * 1000)
            if frame % 10 == 9:
                await pilot.pause()  # let the app's own messages through, as a running console would
        # Idle: the pane's clock ticks once a second and nothing new comes (a study between samples,
        # or stopped); the widget redraws only when its axis moves by a column.
        for entry in entries:
            if not isinstance(entry.widgets[0], Timeline):
                continue
            gc.collect()
            began = time.perf_counter()
            for _ in range(IDLE_TICKS):
                clock.now += 1.0
                for widget in entry.widgets:
                    assert isinstance(widget, Timeline)
                    drawn = widget._strips
                    widget.tick()
                    if widget._strips is not drawn:  # a new picture, a repaint asked: the frame it costs
                        entry.redraws += 1
                        widget.render_lines(Region(0, 0, widget.size.width, widget.size.height))
            entry.idle_tick = (time.perf_counter() - began) / IDLE_TICKS * 1e6
            await pilot.pause()
        for entry in entries:
            shown = "\n".join(lines_of(entry.widgets[0]))
            if not shown.strip():
                raise RuntimeError(f"{entry.name} drew nothing")


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, math.ceil(q * len(ordered)) - 1))]


def version(name: str) -> str:
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return "not installed"


def plotext_version() -> str:
    if PlotextPlot is None:
        return "not importable"
    return f"{version('textual-plotext')} (plotext {version('plotext')})"


def report(entries: list[Candidate], frames: int, width: int) -> dict[str, Any]:
    print(
        f"graph_render: {PANES} panes x {width} columns, {frames} frames; Python {platform.python_version()}, "
        f"Textual {version('textual')}, textual-plotext {plotext_version()}"
    )
    own = {e.rows: statistics.median(e.frames) for e in entries if e.name.startswith("timeline")}
    print(f"{'candidate':<16}{'rows':>5}{'frame p50':>11}{'p90':>8}{'p99':>8}{'repaint p50':>13}{'x own':>8}")
    summary: dict[str, Any] = {}
    for e in entries:
        p50 = statistics.median(e.frames)
        row = {
            "rows": e.rows,
            "frame_ms": {"p50": p50, "p90": pct(e.frames, 0.9), "p99": pct(e.frames, 0.99)},
            "repaint_ms": {"p50": statistics.median(e.repaints)},
            "ratio_to_own": p50 / own[e.rows] if own.get(e.rows) else None,
        }
        summary[e.name] = row
        print(
            f"{e.name:<16}{e.rows:>5}{p50:>11.3f}{row['frame_ms']['p90']:>8.3f}{row['frame_ms']['p99']:>8.3f}"
            f"{row['repaint_ms']['p50']:>13.3f}{'x' + format(row['ratio_to_own'], '.2f'):>8}"
        )
    for e in entries:
        if e.idle_tick is not None:
            print(
                f"{e.name} idle: {IDLE_TICKS} clock ticks of three panes, one a second, nothing new: "
                f"{e.idle_tick:.1f} us a tick, {e.redraws} repaints in all "
                f"({e.idle_tick / 1e4:.4f} % of a core)"
            )
            summary[e.name]["idle_tick_us"] = e.idle_tick
            summary[e.name]["idle_redraws"] = e.redraws
    if PlotextPlot is None:
        print("plotext, plotext+lanes: not measured, textual-plotext is not installed")
    print("(ms per frame of three panes: a sample arrives, each pane's widget is drawn whole; x own: p50 against")
    print(" the project's timeline with as many rows)")
    print()
    print("what each can draw:")
    for name, (scale, axis, marks, lanes) in CAPABILITIES.items():
        print(f"  {name}")
        print(f"    value scale:      {scale}")
        print(f"    compressed axis:  {axis}")
        print(f"    K/R marks:        {marks}")
        print(f"    lanes on the axis: {lanes}")
    return summary


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    p.add_argument("--frames", type=int, default=None, help="frames per candidate (default 300; 20 with --quick)")
    p.add_argument("--width", type=int, default=53, help="columns of one pane (default 53)")
    p.add_argument("--quick", action="store_true", help="smoke run: 20 frames")
    p.add_argument("--json", type=Path, help="save every frame's time and the summary to this file")
    return p.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    frames = args.frames if args.frames is not None else (20 if args.quick else 300)
    entries = candidates()
    try:
        asyncio.run(measure(entries, frames, args.width))
    except KeyboardInterrupt:
        return 130
    except Exception as exc:  # noqa: BLE001 - a bench reports what failed and says so by its status
        print(f"graph_render failed: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 2
    summary = report(entries, frames, args.width)
    if args.json:
        data = {
            "summary": summary,
            "frames": {e.name: e.frames for e in entries},
            "repaints": {e.name: e.repaints for e in entries},
        }
        args.json.write_text(json.dumps(data, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
