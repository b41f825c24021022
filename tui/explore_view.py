"""The explorer's headless printer: a line per step of the campaign, then its matrix.

A line per notable step (the trace, the plan, each trial submitted and
ended, with where it ran), as the headless run prints one per event; at the
end the matrix, a row per class and a column per check (✓ ✗ ? in each
cell), with the first point that failed each check, read from the
campaign's own ``campaign.json`` (so ``studymon report CAMPAIGN`` prints
the same).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table
from rich.text import Text

from studymon.engine.judge.table import MARKS, clean

_CELL = {"✓": "bold green", "✗": "bold red", "?": "bold yellow", "missed": "yellow"}


class ExploreView:
    """Prints the campaign's progress, one line a step; :meth:`matrix` at the end."""

    def __init__(self, console: Console) -> None:
        self.console = console

    def __call__(self, what: str, facts: dict[str, Any]) -> None:
        line = self._line(what, facts)
        if line:
            self.console.print(Text(clean(line)), highlight=False, soft_wrap=True)

    @staticmethod
    def _line(what: str, f: dict[str, Any]) -> str:
        if what == "trace":
            return f"trace: running the study once, unkilled, into {f['out']}"
        if what == "traced":
            return f"trace: done (exit {f['exit']})"
        if what == "planned":
            return f"points: {f['candidates']} candidates in {f['classes']} classes; {f['trials']} trials"
        if what == "submitted":
            return f"trial {f['n']}: {' then '.join(f['points'])} [{f['class']}]"
        if what == "done":
            mark = MARKS[f["ok"]][0]
            failed = f" — {', '.join(f['failed'])}" if f["failed"] else ""
            return f"trial {f['n']}: {mark}{failed}"
        if what in ("lost", "missed", "error"):
            return f"trial {f['n']}: {what} — {f['detail']}"
        if what == "ended":
            return f"campaign: exit {f['status']}"
        return ""

    def matrix(self, folder: Path) -> None:
        self.console.print(matrix_table(folder))


def matrix_table(folder: Path) -> Table:
    """The matrix of a campaign folder: a row per class, a column per check, the first failing point per check."""
    body = json.loads((folder / "campaign.json").read_text(encoding="utf-8"))
    m = body.get("matrix", {})
    checks: list[str] = list(m.get("checks", []))
    table = Table(title=f"studymon explore — {body.get('study', '')}", title_justify="left", pad_edge=False)
    table.add_column("class", no_wrap=True)
    table.add_column("", justify="center")
    for check in checks:
        table.add_column(check, justify="center", overflow="fold")
    for cls, row in m.get("rows", {}).items():
        overall = row.get("", "·")  # · : no trial of the class ended with a verdict
        cells = [row.get(c, "·") for c in checks]
        table.add_row(
            Text(clean(cls)),
            Text(overall, style=_CELL.get(overall, "dim")),
            *(Text(cell, style=_CELL.get(cell, "dim")) for cell in cells),
        )
    first = m.get("firstFailing", {})
    if first:
        table.caption = "first failing: " + "; ".join(f"{c} at {p}" for c, p in first.items())
    return table
