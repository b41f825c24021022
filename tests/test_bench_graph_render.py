"""The graph-render bench still runs and still measures: a short run times every candidate and says what each can draw.

It checks that the bench works end to end (exit 0, a figure for every
candidate, the idle line, the capability table), and that its figures are
what it measured: as many frames as asked for (a count other than
``--quick``'s), each row the percentiles of its frames (``--json``), in
order, the ratios those of the rows, the idle line's figures one another's.
Not the numbers themselves: those depend on the machine, and a run this
short says little about them.
"""

from __future__ import annotations

import json
import re
import time
from importlib.util import find_spec
from pathlib import Path

from tests.benches import NUMBER as N
from tests.benches import assert_ordered, assert_shown, median, nearest_rank, row, run_bench, shown, varied

FRAMES = 16  # not the 20 of --quick, so that the count shows the bench did what it was asked


def test_graph_render_short_run_times_every_frame_of_every_candidate(tmp_path: Path) -> None:
    began = time.monotonic()
    out = run_bench("graph_render.py", "--frames", str(FRAMES), "--json", str(tmp_path / "gr.json"))
    took = time.monotonic() - began
    result = json.loads((tmp_path / "gr.json").read_text())
    assert out.startswith(f"graph_render: 3 panes x 53 columns, {FRAMES} frames;"), out
    names = ["timeline", "timeline+lanes", "sparkline"]
    if find_spec("textual_plotext") is not None:
        names += ["plotext", "plotext+lanes"]
    else:
        assert "plotext, plotext+lanes: not measured, textual-plotext is not installed" in out, out
    assert sorted(result["frames"]) == sorted(names), result["frames"].keys()
    rows: dict[str, list[float]] = {}
    for name in names:
        frames, repaints = result["frames"][name], result["repaints"][name]
        assert len(frames) == len(repaints) == FRAMES, (name, len(frames), len(repaints))
        assert varied(frames), (name, frames)  # measured, not set
        printed = row(out, rf"^{re.escape(name)}\s+(\d+)\s+({N})\s+({N})\s+({N})\s+({N})\s+x({N})$")
        assert printed[0] == (14 if "lanes" in name else 6), out
        assert_ordered(*printed[1:4], what=name)
        assert_shown(
            printed[1:5],
            [median(frames), nearest_rank(frames, 0.9), nearest_rank(frames, 0.99), median(repaints)],
            3,
            name,
        )
        rows[name] = printed
    # Each p50 against the project's widget with as many rows.
    for name, printed in rows.items():
        own = "timeline+lanes" if printed[0] == 14 else "timeline"
        ratio = median(result["frames"][name]) / median(result["frames"][own])
        assert shown(printed[5], ratio, 2), (name, printed, rows[own])
    # Every frame timed lies within the run.
    assert sum(sum(v) for part in ("frames", "repaints") for v in result[part].values()) / 1e3 < took
    # Idle, the widget draws only when its axis moves by a column: about every 17 s at 53 columns
    # (with the lanes under it, a few repaints fewer).
    for name in ("timeline", "timeline+lanes"):
        idle = re.search(
            rf"^{re.escape(name)} idle: 600 clock ticks of three panes, one a second, nothing new: "
            rf"({N}) us a tick, (\d+) repaints in all \(({N}) % of a core\)$",
            out,
            re.MULTILINE,
        )
        assert idle, out
        tick, repaints, core = float(idle.group(1)), int(idle.group(2)), float(idle.group(3))
        assert repaints == result["summary"][name]["idle_redraws"], result["summary"][name]
        assert 3 * 600 / (20 if name == "timeline" else 21) <= repaints <= 3 * 600 / 15, out
        assert tick > 0 and shown(tick, result["summary"][name]["idle_tick_us"], 1), (tick, result["summary"][name])
        assert shown(core, result["summary"][name]["idle_tick_us"] / 1e4, 4), (core, tick)
        assert tick * 600 / 1e6 < took
    for line in ("what each can draw:", "value scale:", "compressed axis:", "K/R marks:", "lanes on the axis:"):
        assert line in out, out
