"""The controls of a study pane: Kill now, Arm (a toggle), Resume, Stop.

They only ask: a press posts :class:`Controls.Action` and the app decides
(confirming the destructive ones) and calls the engine.  Which buttons are
enabled follows :meth:`Controls.set_state`, fed from the engine's events.
"""

from __future__ import annotations

from textual import on
from textual.app import ComposeResult
from textual.containers import Horizontal
from textual.message import Message
from textual.widgets import Button

ACTIONS = ("kill", "arm", "resume", "stop")


class Controls(Horizontal):
    """Four buttons, ids ``#kill``, ``#arm``, ``#resume``, ``#stop``."""

    class Action(Message):
        """A button was pressed: ``action`` is ``kill``, ``arm``, ``resume`` or ``stop``."""

        def __init__(self, action: str) -> None:
            super().__init__()
            self.action = action

    def __init__(self, *, name: str | None = None, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(name=name, id=id, classes=classes)
        self.armed = False
        self.running = False
        self.finished = False
        self.state = ""
        self.kill_button = Button("Kill now", id="kill", variant="error", disabled=True, tooltip="SIGKILL the controller now (asks first)")
        self.arm_button = Button("Arm", id="arm", tooltip="Kill at the first diagnosis start")
        self.resume_button = Button("Resume", id="resume", variant="primary", disabled=True, tooltip="Start the controller with --resume")
        self.stop_button = Button("Stop", id="stop", variant="warning", disabled=True, tooltip="SIGINT: stop gracefully (asks first)")

    def compose(self) -> ComposeResult:
        yield self.kill_button
        yield self.arm_button
        yield self.resume_button
        yield self.stop_button

    def set_state(self, state: str, armed: bool, running: bool, finished: bool) -> None:
        """Enable what makes sense now: Kill and Stop while running, Resume when stopped and unfinished."""
        self.state, self.armed, self.running, self.finished = state, armed, running, finished
        self.kill_button.disabled = not running
        self.stop_button.disabled = not running
        self.resume_button.disabled = running or finished
        self.arm_button.disabled = finished
        self.arm_button.label = "● Armed" if armed else "Arm"
        self.arm_button.variant = "error" if armed else "default"
        self.arm_button.set_class(armed, "-armed")
        self.arm_button.tooltip = (
            "Armed: kills at the first diagnosis start; press to disarm" if armed else "Kill at the first diagnosis start"
        )

    @on(Button.Pressed)
    def _pressed(self, event: Button.Pressed) -> None:
        event.stop()
        if event.button.id in ACTIONS:
            self.post_message(self.Action(event.button.id))
