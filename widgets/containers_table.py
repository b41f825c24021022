"""The containers of one study: a row per container, updated in place from lifecycle events.

Rows are keyed by container name and never rebuilt: an event changes the cells
that changed.  A destroyed container keeps its row, dimmed, as history; past
``max_rows`` the oldest removed rows go first.  Durations move only when the
pane calls :meth:`ContainersTable.tick`, once a second.
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass
from typing import Any

from rich.style import Style
from rich.text import Text
from textual.widgets import DataTable

from studymon.engine import ContainerChanged, free_text, parse_rfc3339

# No name column: every name is ``<prefix>-<study>-<run>`` and a pane is ~50 columns wide, so the
# name would be cut where the run is.  The run has its column, and the short Id tells a container
# apart from another of the same name (a run done again in a new container shows a new Id).
COLUMNS = (("run", "run"), ("purpose", "purpose"), ("status", "status"), ("for", "for/exit"), ("id", "id"))
ID_WIDTH = 10  # characters of the container's Id shown
MAX_PURPOSES = 5_000  # runs remembered for rows not seen yet; a bound, not a real limit
WORD = 64  # characters of a cell: a run id has at most 63


def format_duration(seconds: float) -> str:
    """``42s``, ``3m07s``, ``1h02m``: short enough for a narrow column."""
    s = max(0, int(seconds))
    if s < 60:
        return f"{s}s"
    if s < 3600:
        return f"{s // 60}m{s % 60:02d}s"
    return f"{s // 3600}h{(s % 3600) // 60:02d}m"


@dataclass
class _Row:
    name: str
    run: str
    purpose: str = ""
    status: str = ""
    exit_code: int | None = None
    started: float | None = None  # epoch seconds, while running
    removed: bool = False
    shown_for: str = ""
    id: str = ""  # the container's Id, from the latest inspect that had one


def _started_at(inspect: dict[str, Any] | None) -> float | None:
    state = (inspect or {}).get("State") or {}
    text = state.get("StartedAt")
    if not isinstance(text, str) or not text:
        return None
    try:
        t = parse_rfc3339(text)
    except ValueError:
        return None
    return t if t > 0 else None  # Docker's zero time means "never started"


def _short_id(inspect: dict[str, Any] | None) -> str:
    """The first characters of a container's Id, as ``docker ps`` shows it; "" when there is none."""
    value = (inspect or {}).get("Id")
    if not isinstance(value, str):
        return ""
    return value.removeprefix("sha256:")[:ID_WIDTH]


def _foreground(style: Style) -> Style:
    """A cell's style without its background: a component style carries the table's,
    which would paint over the cursor row cell by cell."""
    return Style(
        color=style.color, bold=style.bold, italic=style.italic, underline=style.underline, strike=style.strike
    )


class ContainersTable(DataTable[Text]):
    """A row per container of a study: run, purpose, status, running for or exit code, short Id.

    ``prefix`` is ``f"{containerPrefix}-{study}-"``: the run is the name without it.
    """

    DEFAULT_CSS = """
    ContainersTable {
        height: 6;  /* a rule, the column labels, four rows */
        scrollbar-size-vertical: 1;
        scrollbar-size-horizontal: 0;
        border-top: hkey $panel-lighten-1;
    }

    ContainersTable > .containers--running { color: $text-success; }
    ContainersTable > .containers--created { color: $text-muted; }
    ContainersTable > .containers--ok      { color: $text-success; }
    ContainersTable > .containers--failed  { color: $text-error; text-style: bold; }
    ContainersTable > .containers--removed { color: $text-disabled; }
    ContainersTable > .containers--other   { color: $text-warning; }
    """

    COMPONENT_CLASSES = DataTable.COMPONENT_CLASSES | {
        "containers--running",
        "containers--created",
        "containers--ok",
        "containers--failed",
        "containers--removed",
        "containers--other",
    }

    def __init__(
        self,
        prefix: str,
        *,
        max_rows: int = 200,
        name: str | None = None,
        id: str | None = None,
        classes: str | None = None,
    ) -> None:
        super().__init__(name=name, id=id, classes=classes, cursor_type="row", zebra_stripes=False)
        self.prefix = prefix
        self.max_rows = max_rows
        self._rows: OrderedDict[str, _Row] = OrderedDict()
        self._purposes: OrderedDict[str, str] = OrderedDict()
        self._now: float | None = None
        for key, label in COLUMNS:
            self.add_column(label, key=key)

    # --- what the pane calls -------------------------------------------------
    def run_of(self, name: str) -> str:
        return name[len(self.prefix) :] if name.startswith(self.prefix) and len(name) > len(self.prefix) else name

    def apply(self, event: ContainerChanged) -> None:
        """One lifecycle event (or an ``exists`` at start) for one container."""
        row = self._rows.get(event.name)
        is_new = row is None
        was_removed = row.removed if row is not None else False
        if row is None:
            run = self.run_of(event.name)
            row = _Row(event.name, run, self._purposes.get(run, ""))
        state = (event.inspect or {}).get("State") or {}
        new_id = _short_id(event.inspect)
        id_changed = bool(new_id) and new_id != row.id
        if new_id:
            row.id = new_id
        if event.action == "destroy":
            row.status = "removed"
            row.removed = True
            row.started = None
        else:
            row.removed = False
            row.status = event.status or str(state.get("Status") or "") or event.action
            code = event.exit_code
            if code is None and row.status in ("exited", "dead") and isinstance(state.get("ExitCode"), int):
                code = state["ExitCode"]
            if code is not None:
                row.exit_code = code
            elif row.status in ("created", "running"):
                row.exit_code = None
            if row.status == "running":
                row.started = _started_at(event.inspect) or row.started or self._now
            else:
                row.started = None
        if is_new:
            self._rows[event.name] = row
            self.add_row(*self._cells(row), key=event.name)
            self._evict()
            if not self.has_focus:
                # The newest container is the one the operator wants to see: once the new row is
                # laid out (before, the end may still be the old one).
                self.scroll_end(animate=False)
                self.call_after_refresh(self._show_newest)
        elif row.removed != was_removed:
            self._update(row, tuple(key for key, _ in COLUMNS))  # dimmed or lit: every cell
        else:
            self._update(row, ("status", "for", "id") if id_changed else ("status", "for"))

    def _show_newest(self) -> None:
        if not self.has_focus:
            self.scroll_end(animate=False)

    def set_purpose(self, run: str, purpose: str) -> None:
        """The purpose of a run (from its ``runPlanned``), for its row now or later."""
        self._purposes[run] = purpose
        self._purposes.move_to_end(run)
        while len(self._purposes) > MAX_PURPOSES:
            self._purposes.popitem(last=False)
        row = self._rows.get(self.prefix + run)
        if row is not None and row.purpose != purpose:
            row.purpose = purpose
            self._update(row, ("purpose",))

    def tick(self, now: float) -> None:
        """Move the "running for" durations to ``now`` (epoch seconds)."""
        self._now = now
        for row in self._rows.values():
            if row.status != "running" or row.removed:
                continue
            if row.started is None:
                row.started = now  # no StartedAt yet: count from when it was first seen running
            text = self._for_text(row)
            if text != row.shown_for:
                self._update(row, ("for",))

    # --- cells ---------------------------------------------------------------
    @property
    def names(self) -> list[str]:
        return list(self._rows)

    def status_of(self, name: str) -> str | None:
        row = self._rows.get(name)
        return row.status if row else None

    def _for_text(self, row: _Row) -> str:
        if row.status == "running" and row.started is not None and self._now is not None:
            return format_duration(self._now - row.started)
        if row.exit_code is not None:
            return f"exit {row.exit_code}"
        if row.status == "running":
            return "…"
        return "—"

    def _style_name(self, row: _Row) -> str:
        if row.removed:
            return "containers--removed"
        if row.status == "running":
            return "containers--running"
        if row.status == "created":
            return "containers--created"
        if row.exit_code is not None:
            return "containers--ok" if row.exit_code == 0 else "containers--failed"
        return "containers--other"

    def _cells(self, row: _Row) -> list[Text]:
        row.shown_for = self._for_text(row)
        status_style = _foreground(self.get_component_rich_style(self._style_name(row)))
        plain = _foreground(self.get_component_rich_style("containers--removed")) if row.removed else None
        values = {
            "run": row.run,
            "purpose": row.purpose,
            "status": row.status,
            "for": row.shown_for,
            "id": row.id,
        }
        # Quoted: a purpose comes from the study's ledger, a name and a status from its runtime.
        return [
            Text(
                free_text(values[key], WORD),
                style=status_style if key in ("status", "for") else (plain or ""),
                no_wrap=True,
            )
            for key, _ in COLUMNS
        ]

    def _update(self, row: _Row, keys: tuple[str, ...]) -> None:
        cells = dict(zip((k for k, _ in COLUMNS), self._cells(row), strict=True))
        for key in keys:
            self.update_cell(row.name, key, cells[key], update_width=key != "for")

    def _evict(self) -> None:
        while len(self._rows) > self.max_rows:
            victim = next((n for n, r in self._rows.items() if r.removed), None)
            if victim is None:
                victim = next(iter(self._rows))
            del self._rows[victim]
            self.remove_row(victim)
