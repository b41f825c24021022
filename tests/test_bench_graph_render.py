"""The graph-render bench still runs: a short run measures every candidate and says what each can draw.

It checks that the bench works end to end (exit 0, a figure for every
candidate, the idle line, the capability table), not the numbers: those
depend on the machine, and a run this short says little about them.
"""

from __future__ import annotations

import re
from importlib.util import find_spec

from tests.benches import run_bench

NUMBER = r"[\d.]+"


def test_graph_render_quick_runs_and_prints_every_candidate() -> None:
    out = run_bench("graph_render.py", "--quick")
    assert out.startswith("graph_render: 3 panes x 53 columns, 20 frames;"), out
    names = ["timeline", "timeline\\+lanes", "sparkline"]
    if find_spec("textual_plotext") is not None:
        names += ["plotext", "plotext\\+lanes"]
    else:
        assert "plotext, plotext+lanes: not measured, textual-plotext is not installed" in out, out
    for name in names:
        row = rf"^{name}\s+\d+\s+{NUMBER}\s+{NUMBER}\s+{NUMBER}\s+{NUMBER}\s+x{NUMBER}$"
        assert re.search(row, out, re.MULTILINE), (name, out)
    assert re.search(r"^timeline\s+6\s+.*x1\.00$", out, re.MULTILINE), out
    # Idle, the widget draws only when its axis moves by a column: about every 17 s at 53 columns.
    idle = re.search(r"^timeline idle: 600 clock ticks of three panes, .* (\d+) repaints", out, re.MULTILINE)
    assert idle, out
    assert 3 * 600 / 20 <= int(idle.group(1)) <= 3 * 600 / 15, out
    for line in ("what each can draw:", "value scale:", "compressed axis:", "K/R marks:", "lanes on the axis:"):
        assert line in out, out
