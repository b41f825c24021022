"""Calls from a thread into the event loop, in the context of whoever started the thread's work.

A callback handed to ``loop.call_soon_threadsafe`` from a thread runs in a
copy of *that thread's* context: a thread starts with an empty one, so the
callback would not see the context variables of the code that runs the
engine (an app's, a request's, a test's).  What the callback does then
(emit an event that a front end handles at once, start a timer) would
happen outside that code's context.  :class:`LoopCall` is made in the loop,
where the engine is started, and runs every call in the context it was made
in.
"""

from __future__ import annotations

import asyncio
import contextvars
from collections.abc import Callable
from typing import Any


class LoopCall:
    """The running loop and the context it was made in; :meth:`soon` calls into them from any thread."""

    def __init__(self) -> None:
        """Made in the event loop (raises RuntimeError where none runs)."""
        self.loop = asyncio.get_running_loop()
        self.context = contextvars.copy_context()

    def soon(self, callback: Callable[..., Any], *args: Any) -> bool:
        """Call ``callback(*args)`` in the loop, in the context this was made in; False once the loop is closed."""
        if self.loop.is_closed():
            return False
        try:
            self.loop.call_soon_threadsafe(callback, *args, context=self.context)
        except RuntimeError:  # closed in between
            return False
        return True
