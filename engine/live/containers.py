"""A study's containers, followed live through the runtime's event stream.

A :class:`ContainerWatch` lists the study's containers once, then follows the
runtime's events in a thread of its own (with a runtime of its own: a Docker
client is not shared across threads).  Every event goes to the event
recorder, which keeps the kill windows' evidence; the changes to the study's
containers are handed to the event loop as
:class:`~studymon.engine.events.ContainerChanged` and kept in
:attr:`ContainerWatch.containers`.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable
from typing import Any

from studymon.engine.events import ContainerChanged, Problem, StudyEvent
from studymon.engine.io.loopcall import LoopCall
from studymon.engine.kill.recording import EventRecorder
from studymon.engine.runtimes import Runtime, close_runtime, open_runtime

# An action's status without asking the runtime (the others are inspected).
_STATUS_AFTER = {
    "create": "created",
    "start": "running",
    "restart": "running",
    "unpause": "running",
    "pause": "paused",
    "die": "exited",
    "destroy": "removed",
}
_FOLLOWED = ("create", "start", "die", "destroy", "kill", "stop", "pause", "unpause", "restart")


class ContainerWatch:
    """Follows the containers named ``stem``... in a thread; reports their changes on the loop."""

    def __init__(
        self,
        study: str,
        backend: str,
        stem: str,
        recorder: EventRecorder,
        emit: Callable[[StudyEvent], None],
        *,
        open_stream_runtime: Callable[[str], Runtime] = open_runtime,
    ) -> None:
        """``open_stream_runtime`` makes the stream thread's own runtime from the backend's name."""
        self.study = study
        self.backend = backend
        self.open_stream_runtime = open_stream_runtime
        self.stem = stem
        self.recorder = recorder
        self.emit = emit
        self.containers: dict[str, dict[str, Any]] = {}
        # Each container's status after its last event.  The inspect beside it was
        # taken at the event and can lag behind it (the process runtime writes the
        # event first, then the state), so this says what runs.
        self.statuses: dict[str, str] = {}
        self._stop = threading.Event()
        self._inspect_failing = False  # said once per spell of failed inspects, not once per event
        self._thread = threading.Thread(target=self._stream, name=f"containers-{study}", daemon=True)
        self._loop: LoopCall | None = None

    def start(self) -> None:
        """Start following, reporting to the running loop (in the context it is started in)."""
        self._loop = LoopCall()
        self._thread.start()

    def stop(self) -> None:
        """Ask the stream to end; it does within moments."""
        self._stop.set()

    async def join(self) -> None:
        """Wait for the stream's thread to end, a few seconds at most (a stuck engine call is not waited for)."""
        await asyncio.to_thread(self._thread.join, 5.0)

    def _stream(self) -> None:
        try:
            runtime = self.open_stream_runtime(self.backend)
            for inspect in runtime.list(self.stem):
                name = str(inspect.get("Name", "")).lstrip("/")
                state = inspect.get("State") or {}
                code = state.get("ExitCode") if state.get("Status") in ("exited", "dead") else None
                self._post(ContainerChanged(self.study, name, "exists", inspect, str(state.get("Status", "")), code))
            try:
                runtime.stream(
                    lambda e: self._on_event(runtime, e),
                    self._stop,
                    on_live=self.recorder.on_live,
                    on_gap=self.recorder.on_gap,
                )
            finally:
                close_runtime(runtime)
        except Exception as exc:  # noqa: BLE001 - the console goes on without the live list
            self.recorder.on_down(time.time())
            self._post(Problem(self.study, f"container event stream stopped: {exc}"))

    def _on_event(self, runtime: Runtime, event: dict[str, Any]) -> None:
        self.recorder.on_event(event)
        attributes: dict[str, Any] = (event.get("Actor") or {}).get("Attributes") or {}
        name = str(attributes.get("name", "")).lstrip("/")
        if not name.startswith(self.stem):
            return
        action = str(event.get("Action") or event.get("status") or "").split(":", 1)[0]
        if action not in _FOLLOWED:
            return
        inspect = None if action == "destroy" else self._inspect(runtime, name, action)
        code: int | None = None
        if action == "die":
            try:
                code = int(attributes.get("exitCode", ""))
            except (TypeError, ValueError):
                code = None
        status = _STATUS_AFTER.get(action) or str(((inspect or {}).get("State") or {}).get("Status", action))
        self._post(ContainerChanged(self.study, name, action, inspect, status, code))

    def _inspect(self, runtime: Runtime, name: str, action: str) -> dict[str, Any] | None:
        """The container's inspect after an event; when the runtime fails to answer, what was known of it.

        A failed inspect (an engine that answered an error, a connection
        reset) costs this change its detail, never the stream: the events
        after it, and the kill windows' recording, go on.
        """
        try:
            inspect = runtime.inspect(name)
        except Exception as exc:  # noqa: BLE001 - any runtime error; said once, then the stream goes on
            if not self._inspect_failing:
                self._inspect_failing = True
                self._post(Problem(self.study, f"container {name}: its inspect after {action!r} failed ({exc})"))
            known = self.containers.get(name)  # read from this thread: one lookup, under the GIL
            if known is not None:
                return known
            return {"Name": f"/{name}", "State": {"Status": _STATUS_AFTER.get(action, action)}}
        self._inspect_failing = False
        return inspect

    def running(self) -> dict[str, dict[str, Any]]:
        """The containers that run now (name -> the inspect last taken), as their events say.

        Safe from another thread: each map is copied at once, under the GIL.
        """
        statuses, inspects = dict(self.statuses), dict(self.containers)
        return {name: inspects[name] for name, status in statuses.items() if status == "running" and name in inspects}

    def _post(self, event: StudyEvent) -> None:
        if self._loop is not None:
            self._loop.soon(self._on_posted, event)

    def _on_posted(self, event: StudyEvent) -> None:
        if isinstance(event, ContainerChanged):
            if event.inspect is None:
                self.containers.pop(event.name, None)
                self.statuses.pop(event.name, None)
            else:
                self.containers[event.name] = event.inspect
                self.statuses[event.name] = event.status
        self.emit(event)
