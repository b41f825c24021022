"""The controls of a study pane: a button per study action (Kill now, Arm, Resume, Stop).

The buttons, their labels and tooltips come from the table of actions
(:mod:`studymon.widgets.keys`).  They only ask: a press posts
:class:`Controls.Action` and the screen decides (confirming the destructive
ones) and calls the engine.  Which buttons can be pressed follows the
study's state, bound from the pane (``armed``, ``running``, ``finished``),
and is decided in one place, :meth:`Controls.compute_enabled`.
"""

from __future__ import annotations

from textual import on
from textual.app import ComposeResult
from textual.containers import Horizontal
from textual.message import Message
from textual.reactive import var
from textual.widgets import Button

from studymon.widgets import keys

# How each button looks; what it is and says is in the table of actions.
VARIANTS = {"kill": "error", "arm": "default", "resume": "primary", "stop": "warning"}


class Controls(Horizontal):
    """A button per study action, with the action's verb as its id (``#kill``, ``#arm``, ``#resume``, ``#stop``)."""

    DEFAULT_CSS = """
    Controls {
        height: 1;
        width: 1fr;
    }

    /* One row of compact buttons: the rows go to the stream and the graph. */
    Controls Button {
        width: 1fr;
        min-width: 6;
        height: 1;
        margin: 0 0 0 1;
    }

    Controls Button:first-child {
        margin: 0;
    }

    Controls #arm.-armed {
        text-style: bold reverse;
    }
    """

    armed: var[bool] = var(False)
    running: var[bool] = var(False)
    finished: var[bool] = var(False)
    enabled: var[frozenset[str]] = var(frozenset())  # the verbs whose buttons can be pressed

    class Action(Message):
        """A button was pressed: ``action`` is its verb (``kill``, ``arm``, ``resume`` or ``stop``)."""

        def __init__(self, action: str) -> None:
            super().__init__()
            self.action = action

    def __init__(self, *, name: str | None = None, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(name=name, id=id, classes=classes)
        self.buttons = {
            row.verb: Button(
                row.label,
                id=row.verb,
                variant=VARIANTS.get(row.verb, "default"),  # type: ignore[arg-type]
                tooltip=row.tooltip,
                disabled=True,
                compact=True,
            )
            for row in keys.study_actions()
            if row.verb is not None
        }

    def compose(self) -> ComposeResult:
        yield from self.buttons.values()

    def button(self, verb: str) -> Button:
        return self.buttons[verb]

    def compute_enabled(self) -> frozenset[str]:
        """What can be pressed now, the one place that decides it: Kill and Stop while running,
        Resume when stopped and unfinished, Arm until finished."""
        enabled = set()
        if self.running:
            enabled |= {"kill", "stop"}
        elif not self.finished:
            enabled.add("resume")
        if not self.finished:
            enabled.add("arm")
        return frozenset(enabled)

    def watch_enabled(self, enabled: frozenset[str]) -> None:
        for verb, button in self.buttons.items():
            button.disabled = verb not in enabled

    def watch_armed(self, armed: bool) -> None:
        arm = self.buttons["arm"]
        arm.label = "● Armed" if armed else keys.study_action("arm").label
        arm.variant = "error" if armed else "default"
        arm.set_class(armed, "-armed")
        tooltip = keys.study_action("arm").tooltip
        arm.tooltip = f"Armed: kills at the point its header shows. {tooltip}" if armed else tooltip

    @on(Button.Pressed)
    def _pressed(self, event: Button.Pressed) -> None:
        event.stop()
        if event.button.id in self.buttons:
            self.post_message(self.Action(event.button.id))
