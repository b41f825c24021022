"""A study's verdict in its pane: every check, ✓ ✗ or ?, with the detail of each one that did not hold.

Hidden while the study runs (the header's badge says how the checks stand so
far); shown once the study has ended, so that the operator reads the verdict
where they watched the study, before leaving the console.  Failures come
first, then the unknown, then what held, so the reason for a ✗ is on screen
even in a short pane; the rest scrolls.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.widgets import Static

from studymon.engine import DETAIL_LIMIT, Check, free_text

MARKS = {True: "✓", False: "✗", None: "?"}
STYLES = {True: "verdict--ok", False: "verdict--fail", None: "verdict--unknown"}
ORDER = {False: 0, None: 1, True: 2}


def check_title(check: Check) -> str:
    """``chargedOnce`` for a study check, ``kill 1 · d1 · chargedOnce`` for one of a kill's target."""
    return check.name if check.scope == "study" else f"{check.scope} · {check.name}"


def summary(checks: Sequence[Check], ok: bool | None) -> str:
    """One line: how many checks hold, fail, are unknown."""
    failed = sum(c.ok is False for c in checks)
    unknown = sum(c.ok is None for c in checks)
    if ok is True:
        return f"{MARKS[True]} all {len(checks)} checks hold"
    parts = []
    if failed:
        parts.append(f"{failed} of {len(checks)} checks fail")
    if unknown:
        parts.append(f"{unknown} {'of ' + str(len(checks)) + ' checks ' if not failed else ''}unknown")
    return f"{MARKS[ok]} " + ", ".join(parts or [f"{len(checks)} checks, none fails"])


class VerdictPanel(VerticalScroll):
    """The checks of one ended study; ``show`` fills it, and it shows itself."""

    DEFAULT_CSS = """
    VerdictPanel {
        height: auto;
        max-height: 14;
        padding: 0 1;
        border-top: solid $panel-lighten-2;
        scrollbar-size-vertical: 1;
    }

    VerdictPanel.-ok      { border-top: solid $success; }
    VerdictPanel.-fail    { border-top: heavy $error; }
    VerdictPanel.-unknown { border-top: solid $warning; }

    #verdict-body { height: auto; }

    VerdictPanel > .verdict--title   { text-style: bold; }
    VerdictPanel > .verdict--ok      { color: $text-success; }
    VerdictPanel > .verdict--fail    { color: $text-error; text-style: bold; }
    VerdictPanel > .verdict--unknown { color: $text-warning; }
    VerdictPanel > .verdict--detail  { color: $text-muted; }
    """

    COMPONENT_CLASSES: ClassVar[set[str]] = {
        "verdict--ok",
        "verdict--fail",
        "verdict--unknown",
        "verdict--detail",
        "verdict--title",
    }

    def __init__(self, *, name: str | None = None, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(name=name, id=id, classes=classes)
        self.body = Static("", markup=False, id="verdict-body")
        self.checks: tuple[Check, ...] = ()
        self.ok: bool | None = None
        self.problem = ""

    def compose(self) -> ComposeResult:
        yield self.body

    def on_mount(self) -> None:
        self.display = False

    def show(self, checks: Sequence[Check], ok: bool | None, problem: str = "") -> None:
        """Show the verdict: ``checks`` and their ``ok``; ``problem`` says why the study did not finish."""
        self.checks, self.ok, self.problem = tuple(checks), ok, problem
        self.body.update(self.text())
        self.display = True
        for value, cls in ((True, "-ok"), (False, "-fail"), (None, "-unknown")):
            self.set_class(ok is value, cls)

    def text(self) -> Text:
        style = self.get_component_rich_style
        out = Text(no_wrap=False, end="")
        out.append("verdict ", style("verdict--title"))
        headline = summary(self.checks, self.ok) if self.checks else f"{MARKS[None]} no verdict"
        out.append(headline, style(STYLES[self.ok]))
        # Each text quoted: a check may come from a report.json shipped from elsewhere (a campaign's trial).
        if self.problem:
            out.append("\n" + free_text(self.problem, DETAIL_LIMIT), style("verdict--fail"))
        for check in sorted(self.checks, key=lambda c: ORDER[c.ok]):
            out.append("\n")
            out.append(f"{MARKS[check.ok]} ", style(STYLES[check.ok]))
            out.append(free_text(check_title(check)))
            if check.ok is not True and check.detail:
                out.append(f"\n    {free_text(check.detail, DETAIL_LIMIT)}", style("verdict--detail"))
        return out

    def plain(self) -> str:
        """The panel's text without styles (for tests)."""
        return self.text().plain
