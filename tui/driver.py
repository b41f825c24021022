"""The terminal driver the console runs on: Textual's Linux driver, with an input thread that sleeps.

Textual's input thread wakes ten times a second whether or not a key came, to
see whether the app is closing and to time out a lone Escape.  In a console
left open for hours on an idle study that was a fifth of its CPU
(``bench/console_load.py``, idle phase).  This driver's thread waits for a key
for as long as nothing happens: the app's closing wakes it through a pipe, and
the short wait comes back only while keys are coming, when a lone Escape needs
its timeout.
"""

from __future__ import annotations

import contextlib
import os
import selectors
import time
from codecs import getincrementaldecoder
from threading import Event
from typing import TYPE_CHECKING, Any

from textual._parser import ParseError
from textual._xterm_parser import XTermParser
from textual.drivers.linux_driver import LinuxDriver

if TYPE_CHECKING:
    from textual.app import App

KEY_WAIT = 0.1  # seconds between looks while keys come: the parser's timeouts (a lone Escape) need them
KEY_SETTLE = 2.0  # seconds after the last input that the short wait lasts
IDLE_WAIT = 30.0  # seconds between looks with no input: closing wakes the thread anyway


class _WakingEvent(Event):
    """The driver's exit event: setting it also wakes the input thread from its wait."""

    def __init__(self, wake_fd: int) -> None:
        super().__init__()
        self._wake_fd = wake_fd

    def set(self) -> None:
        super().set()
        with contextlib.suppress(OSError):  # closed, or full: the thread is ending or already awake
            os.write(self._wake_fd, b"x")


class QuietLinuxDriver(LinuxDriver):
    """Textual's Linux driver whose input thread costs nothing while no key comes."""

    def __init__(self, app: App[Any], **kwargs: Any) -> None:
        super().__init__(app, **kwargs)
        self._wake_read, self._wake_write = os.pipe()
        os.set_blocking(self._wake_read, False)
        os.set_blocking(self._wake_write, False)
        self.exit_event = _WakingEvent(self._wake_write)

    def run_input_thread(self) -> None:
        """Wait for input and hand it to the app as events, until the app closes."""
        selector = selectors.SelectSelector()  # as Textual's own: a tty on every platform
        fileno, wake = self.fileno, self._wake_read
        selector.register(fileno, selectors.EVENT_READ)
        selector.register(wake, selectors.EVENT_READ)
        parser = XTermParser(self._debug)
        decode = getincrementaldecoder("utf-8")().decode
        last_input = -KEY_SETTLE

        def read() -> bool:
            """Read what the terminal sent; False at its end (a piped stdin)."""
            data = decode(os.read(fileno, 4096))
            if not data:
                return False
            for event in parser.feed(data):
                self.process_message(event)
            return True

        try:
            while not self.exit_event.is_set():
                waiting = KEY_WAIT if time.monotonic() - last_input < KEY_SETTLE else IDLE_WAIT
                for key, _ in selector.select(waiting):
                    if key.fd == wake:
                        self._drain_wake()
                    elif read():
                        last_input = time.monotonic()
                    else:
                        selector.unregister(fileno)  # at its end it would be ready for ever
                        fileno = -1
                for event in parser.tick():
                    self.process_message(event)
            self._drain_wake()
        finally:
            selector.close()
            with contextlib.suppress(EOFError, ParseError):  # an unfinished sequence at the end is dropped
                for _ in parser.feed(""):
                    pass

    def _drain_wake(self) -> None:
        with contextlib.suppress(OSError):  # empty (EAGAIN)
            while os.read(self._wake_read, 512):
                pass

    def close(self) -> None:
        super().close()
        for fd in (self._wake_read, self._wake_write):
            with contextlib.suppress(OSError):
                os.close(fd)
        self._wake_read = self._wake_write = -1
