"""Waits with a deadline: the one way a test waits for something to happen.

A test never sleeps in the hope that something happened meanwhile.  It
names what it waits for, as a predicate, and how long that may take at
most; :func:`until` and :func:`until_async` look at the predicate until it
holds and return what it returned, or fail the test naming what did not
happen and what was last seen.  Where something can tell the wait that
the state changed (a sink of engine events, a thread that finished a
step), it sets ``wake`` and the wait looks again at once; without one the
wait looks every ``step`` seconds.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
import time
from collections.abc import Callable
from typing import TypeVar

import pytest

T = TypeVar("T")

STEP = 0.01


def until(predicate: Callable[[], T], timeout: float, what: str, *, step: float = STEP,
          wake: threading.Event | None = None, seen: Callable[[], object] | None = None) -> T:
    """``predicate()`` once it is truthy; fails after ``timeout`` seconds saying ``what`` did not happen.

    ``seen`` gives what to show of the state when the wait fails (the last
    screen, the ledger's kinds).
    """
    wake = wake or threading.Event()
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        left = deadline - time.monotonic()
        if left <= 0:
            pytest.fail(_timed_out(what, timeout, seen))
        wake.wait(min(step, left))
        wake.clear()


async def until_async(predicate: Callable[[], T], timeout: float, what: str, *, step: float = STEP,
                      wake: asyncio.Event | None = None, seen: Callable[[], object] | None = None) -> T:
    """:func:`until` for a coroutine: the event loop runs on while it waits."""
    wake = wake or asyncio.Event()
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while True:
        value = predicate()
        if value:
            return value
        left = deadline - loop.time()
        if left <= 0:
            pytest.fail(_timed_out(what, timeout, seen))
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(wake.wait(), min(step, left))
        wake.clear()


def _timed_out(what: str, timeout: float, seen: Callable[[], object] | None) -> str:
    message = f"timed out after {timeout:g} s waiting for {what}"
    if seen is not None:
        message += f"; last seen:\n{seen()}"
    return message
