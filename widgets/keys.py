"""The console's one table of actions: key, action, words, and where each applies.

Everything an operator can press is a row of :data:`KEYS`.  From it come the
key bindings of the app, the main screen and the ledger stream, the help
screen's table, the command palette's commands (per study where the action
is a study's) and the buttons of a study pane with their tooltips.  A key is
changed here and nowhere else.

No Textual widgets here: only :class:`~textual.binding.Binding` values, so
the table can be read by the screens and the widgets alike.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from textual.binding import Binding, BindingType


class Scope(enum.Enum):
    """Where a key applies (the help screen's sections, in this order)."""

    APP = "Anywhere"  # every screen, dialogs too
    SCREEN = "The console"  # the main screen
    STUDY = "The study in focus"  # the study whose pane has the focus; also its buttons and the palette
    LEDGER = "The ledger in focus"  # the ledger stream that has the focus
    OVERVIEW = "The overview (more studies than fit side by side)"  # its rows; the study actions act on the selected
    OPENED = "A study opened from the overview"  # its pane, full screen
    EXPLORE = "The explorer (studymon explore)"  # a campaign's console


@dataclass(frozen=True)
class Key:
    """One action and the key(s) that run it.

    ``keys`` are Textual key names, comma separated.  An ``action`` with
    ``{index}`` makes one binding per key (the key's position fills it in).
    ``verb`` names a study action (``kill``, ``arm``, ``resume``, ``stop``):
    it is the pane's button id and what the screen asks the engine for.
    ``palette`` is the command palette's title (``{study}`` is filled in per
    study); ``None`` keeps the action out of the palette.  ``textual`` marks
    keys that Textual binds itself (listed in the help only).
    """

    keys: str
    action: str
    label: str
    help: str
    scope: Scope
    id: str
    show: bool = True
    priority: bool = False
    key_display: str | None = None  # the footer's spelling, when Textual's own is not wanted
    help_keys: str | None = None  # the help screen's spelling, when the keys' own is not wanted
    verb: str | None = None
    palette: str | None = None
    textual: bool = False

    @property
    def shown_keys(self) -> str:
        """The keys as the help screen and the tooltips write them (``?``, ``End``, ``1-9``)."""
        if self.help_keys is not None:
            return self.help_keys
        return ", ".join(_HUMAN.get(k, k) for k in self.keys.split(","))

    @property
    def tooltip(self) -> str:
        """A sentence for a button or a footer key: what it does, and its key."""
        return f"{self.help[:1].upper()}{self.help[1:]} (key: {self.shown_keys})"

    def bindings(self) -> list[Binding]:
        """The Textual bindings of this row (none for keys Textual binds itself)."""
        if self.textual:
            return []
        keys = self.keys.split(",")
        if "{index}" not in self.action:
            return [self._binding(self.keys, self.action, self.label, self.id)]
        return [
            self._binding(k, self.action.format(index=i), self.label.format(n=i + 1), f"{self.id}-{i + 1}")
            for i, k in enumerate(keys)
        ]

    def _binding(self, key: str, action: str, label: str, id: str) -> Binding:
        return Binding(
            key,
            action,
            label,
            show=self.show,
            key_display=self.key_display,
            priority=self.priority,
            tooltip=self.tooltip,
            id=id,
        )


# Textual's key names, as a person writes them.
_HUMAN = {
    "question_mark": "?",
    "slash": "/",
    "end": "End",
    "home": "Home",
    "enter": "Enter",
    "pageup": "PgUp",
    "pagedown": "PgDn",
    "up": "↑",
    "down": "↓",
    "tab": "Tab",
    "escape": "Escape",
}

QUIT_HELP = "quit (asks to stop or detach running studies)"
FOCUS_HELP = "focus a study's pane"
MOVE_HELP = "move the cursor (stops following)"
ROW_HELP = "select a study"


def _study(key: str, verb: str, label: str, text: str, palette: str) -> Key:
    # A study action: its key acts on the focused pane's study, its button on its own pane's.
    return Key(key, f"study('{verb}')", label, text, Scope.STUDY, f"study.{verb}", verb=verb, palette=palette)


def _overview(
    key: str,
    action: str,
    label: str,
    text: str,
    *,
    show: bool = True,
    key_display: str | None = None,
    help_keys: str | None = None,
) -> Key:
    return Key(
        key,
        action,
        label,
        text,
        Scope.OVERVIEW,
        f"overview.{key}",
        show=show,
        key_display=key_display,
        help_keys=help_keys,
    )


def _ledger(key: str, action: str, label: str, text: str, *, show: bool = True, key_display: str | None = None) -> Key:
    return Key(key, action, label, text, Scope.LEDGER, f"ledger.{key}", show=show, key_display=key_display)


# In footer order within each scope: the footer lists a scope's bindings as they come here.
KEYS: tuple[Key, ...] = (
    Key("question_mark", "help", "Help", "this help", Scope.SCREEN, "console.help", palette="Help"),
    Key(
        ",".join(str(n) for n in range(1, 10)),
        "focus_pane({index})",
        "Study {n}",
        FOCUS_HELP,
        Scope.SCREEN,
        "console.focus",
        show=False,
        help_keys="1-9",
    ),
    Key("tab", "app.focus_next", "Next", FOCUS_HELP, Scope.SCREEN, "console.next", textual=True),
    _study("k", "kill", "Kill now", "kill the study's controller now (asks; k again kills)", "Kill {study} now"),
    _study("a", "arm", "Arm", "arm a kill point (Enter: the first diagnosis start) / disarm", "Arm or disarm {study}"),
    _study("r", "resume", "Resume", "resume a stopped, crashed or killed study", "Resume {study}"),
    _study("s", "stop", "Stop", "stop the study (SIGINT, graceful; asks first)", "Stop {study}"),
    Key("q", "quit_console", "Quit", QUIT_HELP, Scope.SCREEN, "console.quit", palette="Quit"),
    _overview("enter", "open_study", "Open", "open the selected study's pane, full screen (Escape comes back)"),
    _overview("slash", "filter", "Filter", "filter: state=running verdict!=ok, or text of the ids", key_display="/"),
    _overview("S", "sort('state')", "Sort", "sort by state (again: reversed)"),
    _overview("N", "sort('id')", "Sort id", "sort by id (again: reversed)", show=False),
    _overview("A", "sort('age')", "Sort age", "sort by the last record's age, the quietest first", show=False),
    _overview("V", "sort('verdict')", "Sort verdict", "sort by verdict, failures first", show=False),
    _overview("O", "sort('order')", "As given", "the command's order", show=False),
    _overview("Z", "pause", "Pause", "freeze the order while you move (again: live)"),
    _overview("up", "cursor(-1)", "Up", ROW_HELP, show=False),
    _overview("down", "cursor(1)", "Down", ROW_HELP, show=False),
    _overview("pageup", "page(-1)", "Page up", ROW_HELP, show=False),
    _overview("pagedown", "page(1)", "Page down", ROW_HELP, show=False),
    _overview("home", "first", "First", ROW_HELP, show=False),
    _overview("end", "last", "Last", ROW_HELP, show=False),
    Key("escape", "back", "Back", "back to the overview", Scope.OPENED, "opened.back"),
    Key(
        "q",
        "leave",
        "Quit",
        "leave once the campaign ended; while it runs, q twice stops it (--resume finishes it)",
        Scope.EXPLORE,
        "explore.quit",
    ),
    _ledger("up", "cursor(-1)", "Up", MOVE_HELP, show=False),
    _ledger("down", "cursor(1)", "Down", MOVE_HELP, show=False),
    _ledger("pageup", "page(-1)", "Page up", MOVE_HELP, show=False),
    _ledger("pagedown", "page(1)", "Page down", MOVE_HELP, show=False),
    _ledger("home", "home", "First", MOVE_HELP, show=False),
    _ledger("end", "follow", "Follow", "follow the ledger again"),
    _ledger("enter", "open_record", "Open", "the selected record's full JSON"),
    _ledger("slash", "filter", "Filter", "filter the ledger by kind or text", key_display="/"),
    _ledger("c", "copy_record", "Copy", "copy the selected record"),
    _ledger("w", "save", "Save", "save the visible stream to a file"),
    # Last: the app's bindings come after the screen's in the footer, and the help lists them with the console's.
    Key("ctrl+c", "quit_console", "Quit", QUIT_HELP, Scope.APP, "app.quit", show=False, priority=True),
    Key(
        "ctrl+p", "command_palette", "palette", "command palette: every action", Scope.APP, "app.palette", textual=True
    ),
)


def bindings(*scopes: Scope) -> list[BindingType]:
    """The bindings of the rows of ``scopes``, in the table's order (which is the footer's)."""
    return [b for row in KEYS if row.scope in scopes for b in row.bindings()]


def study_actions() -> list[Key]:
    """The study actions, in the order of the pane's buttons."""
    return [row for row in KEYS if row.verb is not None]


def study_action(verb: str) -> Key:
    """The row of one study action (``kill``, ``arm``, ``resume``, ``stop``)."""
    for row in KEYS:
        if row.verb == verb:
            return row
    raise KeyError(verb)


def help_sections() -> list[tuple[str, list[tuple[str, str]]]]:
    """The console's help screen's table: per scope, (keys, what they do); rows saying the same are one row.
    (The explorer's own key is in its footer: it is not the console's.)"""
    sections: list[tuple[str, list[tuple[str, str]]]] = []
    merged = {Scope.APP: Scope.SCREEN}  # a key that works everywhere is listed with the console's
    for scope in Scope:
        if scope in merged or scope is Scope.EXPLORE:
            continue
        rows: dict[str, list[str]] = {}
        for row in KEYS:
            if merged.get(row.scope, row.scope) is scope:
                rows.setdefault(row.help, []).append(row.shown_keys)
        if rows:
            sections.append((scope.value, [(" ".join(keys), text) for text, keys in rows.items()]))
    return sections


def shown_key(action: str) -> str:
    """The key of ``action`` as a person writes it, for sentences that name it (``End to follow``)."""
    for row in KEYS:
        if action in (row.action, row.verb):
            return row.shown_keys
    raise KeyError(action)


def key_of(action: str) -> str:
    """The first Textual key name bound to ``action`` (what a key event says when it is pressed)."""
    for row in KEYS:
        if action in (row.action, row.verb):
            return row.keys.split(",")[0]
    raise KeyError(action)


def palette_rows() -> list[Key]:
    """The rows that are commands of the palette, in the table's order."""
    return [row for row in KEYS if row.palette is not None]
