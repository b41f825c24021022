"""The one interface every container runtime gives.

Shapes are Docker's, so that one piece of code checks both runtimes:

* an *inspect* is a dict with at least ``Id``, ``Name`` (``"/" + name``),
  ``Created`` and ``State`` holding ``Running``, ``Status``, ``StartedAt``,
  ``FinishedAt``, ``ExitCode`` (times RFC 3339 with nanoseconds, UTC, ``Z``);
* a lifecycle *event* is a dict like Docker's ``/events`` objects:
  ``{"Type": "container", "Action": "create"|"start"|"die"|"destroy"|...,
  "Actor": {"ID": id, "Attributes": {"name": name, ...}}, "time": s,
  "timeNano": ns, "status": action, "id": id}``.

Times passed in and out (``now``, ``events``) are epoch seconds on the
runtime's own clock, which for Docker is the daemon's.
"""

from __future__ import annotations

import builtins
import threading
from collections.abc import Callable
from typing import Any, Protocol, runtime_checkable

Inspect = dict[str, Any]
Event = dict[str, Any]


class RuntimeUnavailable(RuntimeError):
    """The runtime cannot be reached (no Docker engine answers, for example)."""


class ContainerConflict(RuntimeError):
    """A container with that name exists already."""


class NoSuchContainer(LookupError):
    """No container has that name."""


@runtime_checkable
class Runtime(Protocol):
    """What the engine and the studies ask of a container runtime."""

    kind: str  # "docker" or "process"

    # --- watching (the engine) ---------------------------------------------
    def now(self) -> float:
        """The runtime's clock, epoch seconds (cheap: no round trip per call)."""

    def inspect(self, name: str) -> Inspect | None:
        """The inspect of the container ``name``, or None when there is none."""

    def list(self, prefix: str) -> list[Inspect]:
        """Inspects of every container (running or not) whose name starts with ``prefix``."""

    def events(self, since: float, until: float) -> builtins.list[Event]:
        """Container lifecycle events with ``since <= time <= until``, verbatim, in order."""

    def history(self, since: float, until: float) -> builtins.list[Event] | None:
        """:meth:`events` for the window, or None when the runtime cannot show it kept all of them.

        Docker keeps only its last few hundred events in memory: a window
        older than what it still holds would come back silently incomplete.
        """

    def stream(
        self,
        callback: Callable[[Event], None],
        stop: threading.Event,
        on_live: Callable[[float], None] | None = None,
        on_gap: Callable[..., None] | None = None,
    ) -> None:
        """Block, calling ``callback`` for every new container event, until ``stop`` is set.

        Meant to run in a thread; the callbacks must be thread-safe.
        ``on_live(t)`` is called once the stream delivers every event from
        runtime time ``t`` on; ``on_gap(a, b)`` when events between ``a``
        and ``b`` may have been lost (a reconnect the runtime's history could
        not bridge), and ``on_gap(a, b, restart)`` when the runtime itself
        restarted in between: ``restart`` is ``{"runtime": kind, "before":
        ..., "after": ...}``, what told the two apart.
        """

    # --- running (the studies) ---------------------------------------------
    def run(
        self,
        name: str,
        command: builtins.list[str],
        *,
        image: str | None = None,
        env: dict[str, str] | None = None,
        labels: dict[str, str] | None = None,
    ) -> Inspect:
        """Create and start a detached container; it outlives the caller.

        Raises :class:`ContainerConflict` when ``name`` exists.  Returns the
        inspect once the container has started.
        """

    def wait(self, name: str, timeout: float | None = None) -> int | None:
        """Wait until ``name`` has exited; its exit code, or None on timeout."""

    def logs(self, name: str) -> str:
        """Everything the container wrote to standard output."""

    def remove(self, name: str, force: bool = False) -> None:
        """Remove the container (``force`` kills it first when running)."""

    # --- the end ---------------------------------------------------------------
    def close(self) -> None:
        """Release what the runtime holds (connections, descriptors), so that nothing outlives its user.

        Idempotent.  A runtime that holds nothing between calls does nothing.
        """
