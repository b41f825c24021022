"""Modal screens of the console: confirm, quit, where to arm a kill, a record's full JSON, help.

Destructive choices always open with the safe button focused, so a reflexive
Enter does nothing harmful; Escape is always the safe way out.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar, TypeVar

from rich.console import Group
from rich.highlighter import JSONHighlighter
from rich.table import Table
from rich.text import Text
from textual import events, on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Button, Input, Label, OptionList, Static
from textual.widgets.option_list import Option

from studymon.engine import GRAMMAR, BadPoint, KillPoint, Record, free_text, json_text

KEY_COLUMN = 9  # the help's key column at most (its descriptions then fit the dialog's width)

R = TypeVar("R")  # what a dialog is dismissed with

_MOVE_BINDINGS: list[BindingType] = [
    Binding("left", "app.focus_previous", "Previous", show=False),
    Binding("right", "app.focus_next", "Next", show=False),
]


class Dialog(ModalScreen[R]):
    """A modal box in the middle of the screen: a title, the question or the text, a row of buttons.

    Every dialog below is one; its style is here, for all of them.
    """

    # Textual scopes only the last selector of a comma list to the widget: so every selector here names Dialog.
    DEFAULT_CSS = """
    Dialog {
        align: center middle;
        background: $background 60%;
    }

    Dialog #dialog {
        width: 64;
        max-width: 90%;
        height: auto;
        max-height: 90%;
        border: thick $accent;
        background: $surface;
        padding: 1 2;
    }

    Dialog #dialog-title {
        width: 1fr;
        text-style: bold;
        color: $text-accent;
        margin-bottom: 1;
    }

    Dialog #dialog-question {
        margin-bottom: 1;
    }

    Dialog #dialog-buttons {
        height: 3;
        align-horizontal: right;
    }

    Dialog #dialog-buttons Button {
        margin-left: 1;
    }

    Dialog #record-body, Dialog #help-body {
        height: auto;
        max-height: 30;
        background: $boost;
        padding: 0 1;
        margin-bottom: 1;
    }

    Dialog #help-body {
        max-height: 32;  /* the text and every key, unscrolled, in a 48-row terminal */
    }

    Dialog #help-text {
        margin-bottom: 1;
    }
    """


class ConfirmScreen(Dialog[bool]):
    """Ask once; True only when the confirm button is pressed, or ``confirm_key`` is.  Cancel has the focus.

    ``confirm_key`` lets the key that asked confirm by being pressed again
    (``k``, ``k`` kills): a second deliberate press, where a reflexive Enter
    or Escape still keeps Cancel.
    """

    AUTO_FOCUS = "#cancel"
    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "cancel", "Cancel"), *_MOVE_BINDINGS]

    def __init__(
        self,
        title: str,
        question: str,
        confirm: str = "Confirm",
        variant: str = "error",
        confirm_key: str | None = None,
    ) -> None:
        super().__init__()
        self.title_text = title
        self.question = question
        self.confirm_label = confirm
        self.variant = variant
        self.confirm_key = confirm_key

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog"):
            yield Label(self.title_text, markup=False, id="dialog-title")
            yield Static(self.question, markup=False, id="dialog-question")
            with Horizontal(id="dialog-buttons"):
                label = f"{self.confirm_label} ({self.confirm_key})" if self.confirm_key else self.confirm_label
                yield Button(label, id="confirm", variant=self.variant)  # type: ignore[arg-type]
                yield Button("Cancel", id="cancel")

    def on_key(self, event: events.Key) -> None:
        if self.confirm_key is not None and event.key == self.confirm_key:
            event.stop()
            event.prevent_default()
            self.dismiss(True)

    @on(Button.Pressed)
    def _pressed(self, event: Button.Pressed) -> None:
        event.stop()
        self.dismiss(event.button.id == "confirm")

    def action_cancel(self) -> None:
        self.dismiss(False)


class ArmScreen(Dialog[str]):
    """Where to kill: a list of points, the seed's first, then those the study has shown so far, and a field
    to type any point.  Dismissed with the point's text, or None (Escape).

    Enter on the first row arms the seed's point, as ``a`` did before points
    (``a``, Enter).  A typed point is parsed here, and one that is not a point
    is said under the field with the grammar; the dialog stays open.
    """

    AUTO_FOCUS = "#arm-points"
    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "cancel", "Cancel")]

    def __init__(self, study: str, points: Sequence[tuple[str, str]]) -> None:
        super().__init__()
        self.study = study
        self.points = list(points)  # (point, what it is)

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog"):
            yield Label(f"Arm {self.study}: kill right after…", id="title", markup=False)
            yield OptionList(
                *(Option(Text.assemble((point, "bold"), "  ", (why, "dim")), id=point) for point, why in self.points),
                id="arm-points",
            )
            yield Input(
                placeholder="or type a point: after:KIND[/PURPOSE][#N] or container:ACTION[/PURPOSE][#N]",
                id="arm-typed",
            )
            yield Label("", id="arm-error", markup=False)

    @on(OptionList.OptionSelected, "#arm-points")
    def _chosen(self, event: OptionList.OptionSelected) -> None:
        self.dismiss(event.option.id)

    @on(Input.Submitted, "#arm-typed")
    def _typed(self, event: Input.Submitted) -> None:
        try:
            point = KillPoint.parse(event.value.strip())
        except BadPoint as exc:
            self.query_one("#arm-error", Label).update(str(exc).replace(f": {GRAMMAR}", ""))
            return
        self.dismiss(str(point))

    def action_cancel(self) -> None:
        self.dismiss(None)


class QuitScreen(Dialog[str]):
    """Quitting with studies running: ``"stop"`` them, ``"detach"`` from them, or ``"cancel"`` (focused)."""

    AUTO_FOCUS = "#cancel"
    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "cancel", "Cancel"), *_MOVE_BINDINGS]

    def __init__(self, running: Sequence[str] | int = ()) -> None:
        """``running``: the ids of the studies still running, or just how many there are."""
        super().__init__()
        self.running = running if isinstance(running, int) else list(running)

    def _who(self) -> str:
        if isinstance(self.running, int):
            return f"{self.running} stud{'y is' if self.running == 1 else 'ies are'}"
        if not self.running:
            return "Studies are"
        return ", ".join(self.running) + (" is" if len(self.running) == 1 else " are")

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog"):
            yield Label("Quit studymon", markup=False, id="dialog-title")
            yield Static(
                f"{self._who()} still running.\n"
                "Stop: SIGINT each study, wait for it, keep all the evidence.\n"
                "Detach: leave them running; `studymon attach OUT…` takes over later.",
                id="dialog-question",
            )
            with Horizontal(id="dialog-buttons"):
                yield Button("Stop studies", id="stop", variant="warning")
                yield Button("Detach", id="detach", variant="primary")
                yield Button("Cancel", id="cancel")

    @on(Button.Pressed)
    def _pressed(self, event: Button.Pressed) -> None:
        event.stop()
        self.dismiss(event.button.id if event.button.id in ("stop", "detach") else "cancel")

    def action_cancel(self) -> None:
        self.dismiss("cancel")


class RecordScreen(Dialog[None]):
    """One ledger record, whole and pretty; Escape closes."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "close", "Close"),
        Binding("q", "close", "Close", show=False),
    ]

    def __init__(self, record: Record | dict[str, Any], title: str | None = None) -> None:
        super().__init__()
        self.record_data = record.as_json() if isinstance(record, Record) else dict(record)
        if title is None:
            title = f"record {self.record_data.get('seq', '?')} · {self.record_data.get('kind', '?')}"
        self.title_text = title

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog"):
            yield Label(free_text(self.title_text), markup=False, id="dialog-title")
            with VerticalScroll(id="record-body"):
                # The study's record, every value exact; a character that is not printable (an escape
                # sequence, a bidi override) as its JSON escape, not sent to the terminal.
                json = JSONHighlighter()(json_text(self.record_data))
                json.no_wrap, json.overflow = True, None
                yield Static(json, markup=False, id="record-json")
            with Horizontal(id="dialog-buttons"):
                yield Button("Close", id="close")

    def on_mount(self) -> None:
        self.query_one("#record-body").focus()

    @on(Button.Pressed, "#close")
    def _close_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        self.dismiss(None)

    def action_close(self) -> None:
        self.dismiss(None)


class HelpScreen(Dialog[None]):
    """The keys, by where they apply, and a short text; Escape or ``?`` closes.

    ``sections`` are (title, [(keys, what they do), ...]), as
    :func:`studymon.widgets.keys.help_sections` gives them.
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "close", "Close"),
        Binding("question_mark", "close", "Close", key_display="?"),
    ]

    def __init__(self, sections: Sequence[tuple[str, Sequence[tuple[str, str]]]], text: str = "") -> None:
        super().__init__()
        self.sections = [(title, list(rows)) for title, rows in sections]
        self.help_text = text

    def compose(self) -> ComposeResult:
        # One grid per section under its title, all with the same key column, so the columns line up;
        # a long list of keys wraps rather than narrow every description.
        key_width = min(KEY_COLUMN, max((len(keys) for _, rows in self.sections for keys, _ in rows), default=0))
        parts: list[Text | Table] = []
        for title, rows in self.sections:
            parts.append(Text(title, style="bold"))
            table = Table.grid(padding=(0, 2))
            table.add_column(min_width=key_width, max_width=key_width)
            table.add_column()
            for keys, description in rows:
                table.add_row(Text(keys), Text(description))  # plain: a '[' in a key is not markup
            parts.append(table)
        with Vertical(id="dialog"):
            yield Label("Help", markup=False, id="dialog-title")
            with VerticalScroll(id="help-body"):
                if self.help_text:
                    yield Static(self.help_text, markup=False, id="help-text")
                yield Static(Group(*parts), markup=False, id="help-keys")
            with Horizontal(id="dialog-buttons"):
                yield Button("Close", id="close")

    def on_mount(self) -> None:
        self.query_one("#help-body").focus()

    @on(Button.Pressed, "#close")
    def _close_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        self.dismiss(None)

    def action_close(self) -> None:
        self.dismiss(None)
