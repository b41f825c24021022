"""The live recording of a study's container lifecycle events, for its kill windows.

Whether a killed run was started again is decided from container lifecycle
events.  Docker remembers only its last 256 events (of every kind, from every
user of the engine), so a window read back after the target's result can
silently miss the one ``create`` that gives a rerun away.  The console
therefore records events as they arrive: a session streams its runtime's
events from its start, keeps the study's recent ones in memory, and from
just before a kill until that kill's window closes appends each to
``kills/<n>/container-events-live.jsonl`` with the time it was seen.

What could not be watched live is never papered over:

* a stretch before the stream was live, or between two consoles (a
  ``--resume`` or ``attach`` continuing an open window), is read back from
  the runtime at once, and only when the runtime shows its history reaches
  back far enough (such lines carry ``"readBack": true``);
* otherwise, and whenever the stream reports a loss, the stretch is a gap
  line ``{"gap": {"from": ..., "to": ...}}``, which makes the checks that
  need it unknown;
* a loss the runtime knows came from its own restart (a Docker daemon that is
  another process when the stream reconnects) is also a line of
  ``kills/<n>/runtime-restarts.jsonl`` (``KillFolder.RESTARTS``): the gap line's
  shape is the contract's, so why there is a gap is said beside it.

The stream calls :meth:`EventRecorder.on_event` from its own thread; writes
are whole lines (:func:`studymon.engine.evidence.writer.append_jsonl`), made under one lock.
"""

from __future__ import annotations

import collections
import json
import os
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from studymon.engine.contract.folder import KillFolder
from studymon.engine.evidence.records import STUDY_LABEL, Gap
from studymon.engine.evidence.writer import append_jsonl
from studymon.engine.io.clock import parse_rfc3339, rfc3339_ms

# The study's recent events kept in memory, so that a recording opened at a
# kill starts before it.  Bounded both ways: a study makes a few events per run.
RECENT_SECONDS = 300.0
RECENT_MAX = 4096
# A recording continued by another console reaches back this much before its
# last line, so that nothing at the seam is lost (repeats are skipped).
SEAM = 1.0

History = Callable[[float, float], "list[dict[str, Any]] | None"]


def event_key(event: dict[str, Any]) -> tuple[Any, ...]:
    """What makes two deliveries the same event (a replay, or a read-back of a live one)."""
    actor = event.get("Actor") or {}
    return (actor.get("ID") or event.get("id"), event.get("Action") or event.get("status"), event.get("timeNano"))


def event_time(event: dict[str, Any]) -> float:
    """The event's time on the runtime's clock, epoch seconds."""
    try:
        if "timeNano" in event:
            return int(event["timeNano"]) / 1e9
        return float(event.get("time", 0))
    except (TypeError, ValueError):
        return 0.0


def event_name(event: dict[str, Any]) -> str:
    """The container's name an event carries (without docker's leading '/'), or ''."""
    return _names(event)[0]


def _names(event: dict[str, Any]) -> tuple[str, str]:
    attributes = (event.get("Actor") or {}).get("Attributes") or {}
    name = attributes.get("name")
    old = attributes.get("oldName")
    return (
        name.lstrip("/") if isinstance(name, str) else "",
        old.lstrip("/") if isinstance(old, str) else "",
    )


@dataclass
class _Recording:
    number: int
    folder: KillFolder
    ids: set[str]
    keys: set[tuple[Any, ...]] = field(default_factory=set)
    ready: bool = False  # False while its beginning is being written: live events wait in ``pending``
    pending: list[dict[str, Any]] = field(default_factory=list)
    pending_restarts: list[dict[str, Any]] = field(default_factory=list)

    @property
    def path(self) -> Path:
        return self.folder.live


class EventRecorder:
    """Keeps a study's recent container events and writes the open kill windows' recordings."""

    def __init__(
        self,
        stem: str,
        history: History,
        study: str | None = None,
        *,
        listener: Callable[[dict[str, Any], float], None] | None = None,
        trace: Path | None = None,
    ) -> None:
        self.stem = stem
        self.study = study  # events of containers labelled with this study id are its too
        self._history = history
        self._lock = threading.Lock()
        self._recent: collections.deque[tuple[str, dict[str, Any]]] = collections.deque(maxlen=RECENT_MAX)
        self._gaps: list[tuple[float, float, dict[str, Any] | None]] = []
        self._live_from: float | None = None
        self._down_since: float | None = None
        self._live = threading.Event()
        self._open: dict[int, _Recording] = {}
        # Told of each of the study's own events as it arrives (a container point's moment), in the stream's thread,
        # with the time it was seen: the one its lines' seenAt says.
        self.listener = listener
        # With a trace: every event of the study appended there as it arrives, and every gap (the explorer's trace).
        self.trace = trace

    # --- from the stream's thread ------------------------------------------
    def on_live(self, at: float) -> None:
        with self._lock:
            if self._live_from is None:
                self._live_from = at
        self._live.set()

    def on_gap(self, since: float, until: float, restart: dict[str, Any] | None = None) -> None:
        """Events between ``since`` and ``until`` may be lost; ``restart``: the runtime restarted then."""
        line = Gap(since, until).to_json()
        why = None if restart is None else restart_line(since, until, restart)
        with self._lock:
            self._gaps.append((since, until, restart))
            del self._gaps[:-64]
            if self.trace is not None:
                append_jsonl(self.trace, line)
            for rec in self._open.values():
                if rec.ready:
                    append_jsonl(rec.path, line)
                    if why is not None:
                        append_jsonl(rec.folder.restarts, why)
                else:
                    rec.pending.append(line)
                    if why is not None:
                        rec.pending_restarts.append(why)

    def on_down(self, at: float) -> None:
        """The stream ended for good: nothing from ``at`` on is recorded live any more."""
        with self._lock:
            self._down_since = at
        self.on_gap(at, at)

    def on_event(self, event: dict[str, Any]) -> bool:
        """Keep and record ``event`` if it is the study's; whether it was."""
        if event.get("Type", "container") != "container":
            return False
        name, old = _names(event)
        actor = event.get("Actor") or {}
        actor_id = actor.get("ID") or event.get("id")
        labelled = self.study is not None and (actor.get("Attributes") or {}).get(STUDY_LABEL) == self.study
        with self._lock:
            ours = name.startswith(self.stem) or old.startswith(self.stem) or labelled
            if not ours and not any(actor_id in rec.ids for rec in self._open.values()):
                return False
            seen_epoch = time.time()
            seen = rfc3339_ms(seen_epoch)
            if ours:
                self._recent.append((seen, event))
                self._forget_old(event_time(event))
            line = {**event, "seenAt": seen}
            if ours and self.trace is not None:
                append_jsonl(self.trace, line)
            for rec in self._open.values():
                if not ours and actor_id not in rec.ids:
                    continue
                key = event_key(event)
                if key in rec.keys:
                    continue
                rec.keys.add(key)
                if rec.ready:
                    append_jsonl(rec.path, line)
                else:
                    rec.pending.append(line)
        listener = self.listener
        if ours and listener is not None:
            listener(event, seen_epoch)
        return True

    def _forget_old(self, now: float) -> None:
        while self._recent and event_time(self._recent[0][1]) < now - RECENT_SECONDS:
            self._recent.popleft()

    # --- from the session ---------------------------------------------------
    def wait_live(self, timeout: float) -> bool:
        """Block until the stream is live (call from a thread, not the event loop)."""
        return self._live.wait(timeout)

    @property
    def live(self) -> bool:
        return self._live.is_set()

    def open(self, number: int, folder: KillFolder, since: float, ids: set[str], now: float) -> None:
        """Record kill ``number`` into ``folder`` from runtime time ``since`` on, until :meth:`close`.

        ``since`` lies before the kill (a new window) or is where an earlier
        console's recording stopped (a window continued); ``ids`` are the
        target containers' Ids, followed whatever their name becomes.  It may
        read the runtime's history: call it from a thread.
        """
        path = folder.live
        rec = _Recording(number, folder, set(ids))
        rec.keys.update(_recorded_keys(path))
        with self._lock:
            self._open[number] = rec
            live_from = self._live_from
            down = self._down_since
            recent = [(seen, e) for seen, e in self._recent if event_time(e) >= since]
            gaps = [(a, b, r) for a, b, r in self._gaps if b >= since]
        lines: list[dict[str, Any]] = []
        if live_from is None or live_from > since:
            # Not watched live from ``since``: read it back if the runtime kept all of it.
            upto = live_from if live_from is not None else now
            try:
                back = self._history(since, upto)
            except Exception:  # noqa: BLE001 - a history that cannot be read is a gap
                back = None
            if back is None:
                lines.append(Gap(since, upto).to_json())
            else:
                read_at = rfc3339_ms()
                for e in back:
                    if self._belongs(e, rec) and event_key(e) not in rec.keys:
                        rec.keys.add(event_key(e))
                        lines.append({**e, "seenAt": read_at, "readBack": True})
        if down is not None:
            lines.append(Gap(max(since, down), now).to_json())
        restarts: list[dict[str, Any]] = []
        for a, b, r in gaps:
            lines.append(Gap(a, b).to_json())
            if r is not None:
                restarts.append(restart_line(a, b, r))
        for seen, e in recent:
            if event_key(e) not in rec.keys:
                rec.keys.add(event_key(e))
                lines.append({**e, "seenAt": seen})
        # The file exists from the start, even while nothing has happened: an
        # empty recording says "watched, nothing seen", a missing one says nothing.
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644))
        with self._lock:
            for line in lines + rec.pending:
                append_jsonl(path, line)
            for line in restarts + rec.pending_restarts:
                append_jsonl(folder.restarts, line)
            rec.pending.clear()
            rec.pending_restarts.clear()
            rec.ready = True

    def _belongs(self, event: dict[str, Any], rec: _Recording) -> bool:
        name, old = _names(event)
        actor = event.get("Actor") or {}
        actor_id = actor.get("ID") or event.get("id")
        # Labelled as this study's, whatever its name (contract §6.1).
        labelled = self.study is not None and (actor.get("Attributes") or {}).get(STUDY_LABEL) == self.study
        return name.startswith(self.stem) or old.startswith(self.stem) or actor_id in rec.ids or labelled

    def close(self, number: int) -> None:
        """Stop recording kill ``number`` (its window closed, or the console is leaving)."""
        with self._lock:
            self._open.pop(number, None)

    def recording(self, number: int) -> bool:
        with self._lock:
            return number in self._open


def restart_line(since: float, until: float, restart: dict[str, Any]) -> dict[str, Any]:
    """A line of ``runtime-restarts.jsonl``: the gap's stretch, when it was seen, and what the runtime said changed."""
    return {**restart, "from": rfc3339_ms(since), "to": rfc3339_ms(until), "seenAt": rfc3339_ms()}


def _recorded_keys(path: Path) -> set[tuple[Any, ...]]:
    """The events an earlier console already wrote to a recording being continued."""
    keys: set[tuple[Any, ...]] = set()
    for line in _lines(path):
        if "gap" not in line:
            keys.add(event_key(line))
    return keys


def last_seen(path: Path) -> float | None:
    """The console time of the last line of a recording (where a continuation starts), if any."""
    best: float | None = None
    for line in _lines(path):
        text = line.get("seenAt") if "gap" not in line else (line.get("gap") or {}).get("to")
        if isinstance(text, str):
            try:
                t = parse_rfc3339(text)
            except ValueError:
                continue
            best = t if best is None else max(best, t)
    return best


def _lines(path: Path) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    try:
        with open(path, "rb") as fh:
            for raw in fh:
                try:
                    obj = json.loads(raw)
                except ValueError:
                    continue
                if isinstance(obj, dict):
                    out.append(obj)
    except FileNotFoundError:
        pass
    return out
