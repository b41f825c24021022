"""The check table: one row per check per study (and per kill target).

Rendered with rich, the same for the headless run, the console's exit and
``studymon report``; also exported as ``report.svg``.
"""

from __future__ import annotations

import io
from collections.abc import Iterable

from rich.console import Console, RenderableType
from rich.markup import escape
from rich.table import Table
from rich.text import Text

from studymon.engine.io.quoting import DETAIL_LIMIT, LIMIT, free_text, shown
from studymon.engine.judge.verdict import Check, overall

MARKS = {True: ("✓", "bold green"), False: ("✗", "bold red"), None: ("?", "bold yellow")}


def _cell(text: str, style: str = "", limit: int = LIMIT) -> Text:
    # Text, not a str: a str cell is read as rich markup, and a run id like "[link=…]" would be markup;
    # quoted: a control character (an escape sequence from a hostile ledger) is shown, not sent.
    return shown(text, limit, style)


def check_table(rows: Iterable[tuple[str, list[Check]]], title: str = "studymon checks") -> Table:
    table = Table(title=title, title_justify="left", expand=False, show_lines=False, pad_edge=False)
    table.add_column("study", style="bold cyan", no_wrap=True)
    table.add_column("scope", no_wrap=True)
    table.add_column("check", no_wrap=True)
    table.add_column("", justify="center", no_wrap=True)
    table.add_column("detail", overflow="fold")
    for study, checks in rows:
        first = True
        for c in checks:
            mark, style = MARKS[c.ok]
            table.add_row(
                _cell(study if first else "", "bold cyan"),
                _cell(c.scope),
                _cell(c.name),
                Text(mark, style=style),
                _cell(c.detail, "red" if c.ok is False else ("yellow" if c.ok is None else "dim"), DETAIL_LIMIT),
            )
            first = False
        table.add_section()
    return table


def summary_line(rows: list[tuple[str, list[Check]]]) -> Text:
    total = sum(len(c) for _, c in rows)
    failed = sum(1 for _, cs in rows for c in cs if c.ok is False)
    unknown = sum(1 for _, cs in rows for c in cs if c.ok is None)
    if failed:
        return Text(f"✗ {failed} of {total} checks failed", style="bold red")
    if unknown:
        return Text(f"? {unknown} of {total} checks unknown", style="bold yellow")
    return Text(f"✓ all {total} checks hold", style="bold green")


# From this many studies the check table lists only those that did not pass, after a line per study:
# with tens of studies, a table of every check would bury the one that failed.
MANY_STUDIES = 4


def study_lines(rows: list[tuple[str, list[Check]]]) -> Table:
    """One line per study: its mark, its counts of ✓ ✗ ?, and its first failing (else unknown) check."""
    table = Table(title="studymon studies", title_justify="left", expand=False, pad_edge=False, box=None)
    table.add_column("", justify="center", no_wrap=True)
    table.add_column("study", style="bold cyan", no_wrap=True)
    table.add_column("checks", no_wrap=True)
    table.add_column("first to look at", overflow="ellipsis", no_wrap=True)
    order = {False: 0, None: 1, True: 2}
    for study, checks in sorted(rows, key=lambda row: order[overall(row[1])]):
        ok = overall(checks)
        mark, style = MARKS[ok]
        marks = [c.ok for c in checks]
        counts = f"{marks.count(True)} ✓  {marks.count(False)} ✗  {marks.count(None)} ?"
        first = next((c for c in checks if c.ok is False), None) or next((c for c in checks if c.ok is None), None)
        said = Text("") if first is None else _cell(f"{first.scope} · {first.name}: {first.detail}", limit=DETAIL_LIMIT)
        table.add_row(Text(mark, style=style), _cell(study, "bold cyan"), counts, said)
    return table


def checks_report(rows: list[tuple[str, list[Check]]]) -> list[RenderableType]:
    """What a command prints at its end: the check table and the summary line; with many studies
    (:data:`MANY_STUDIES`), a line per study first and the table of those that did not pass only."""
    if len(rows) < MANY_STUDIES:
        return [check_table(rows), summary_line(rows)]
    failing = [row for row in rows if overall(row[1]) is not True]
    out: list[RenderableType] = [study_lines(rows)]
    if failing:
        out.append(Text(f"{len(failing)} of {len(rows)} studies did not pass; their checks:", style="bold"))
        out.append(check_table(failing))
    out.append(summary_line(rows))
    return out


def table_svg(study: str, checks: list[Check]) -> str:
    console = Console(record=True, width=140, file=io.StringIO(), force_terminal=True, color_system="truecolor")
    # A title is read as markup: the study's id, quoted, goes in escaped.
    console.print(check_table([(study, checks)], title=f"studymon checks — {escape(free_text(study))}"))
    console.print(summary_line([(study, checks)]))
    return console.export_svg(title=f"studymon — {free_text(study)}")
