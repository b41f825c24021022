"""A Textual app on the console's terminal driver that writes down what it gets, for the driver's tmux test.

    python tests/doubles/keys_app.py LOG EXIT_AFTER

It writes JSON lines to LOG: ``{"ready": tid}`` once mounted (the native id of
the driver's input thread), ``{"key": name, "at": epoch}`` for each key, and
``{"exit": epoch}`` when it closes by itself, ``EXIT_AFTER`` seconds after
``x`` is pressed, with no key in between.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

from textual import events
from textual.app import App, ComposeResult
from textual.widgets import Static

from studymon.tui.driver import QuietLinuxDriver


class KeysApp(App[None]):
    def __init__(self, log: Path, exit_after: float) -> None:
        super().__init__(driver_class=QuietLinuxDriver)
        self.log_path = log
        self.exit_after = exit_after

    def write(self, line: dict[str, object]) -> None:
        with self.log_path.open("a") as f:
            f.write(json.dumps(line) + "\n")

    def compose(self) -> ComposeResult:
        yield Static("keys app: x arms the exit")

    def on_mount(self) -> None:
        thread = getattr(self._driver, "_key_thread", None)
        self.write({"ready": thread.native_id if thread is not None else None, "driver": type(self._driver).__name__})

    def on_key(self, event: events.Key) -> None:
        self.write({"key": event.key, "at": time.time()})
        if event.key == "x":
            self.set_timer(self.exit_after, self.leave)

    def leave(self) -> None:
        self.write({"exit": time.time()})
        self.exit()


if __name__ == "__main__":
    KeysApp(Path(sys.argv[1]), float(sys.argv[2])).run()
