"""The container lifecycle events of a kill's window, tallied per target in bounded memory."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from studymon.engine.accounts import Accounts
from studymon.engine.contract import is_int, plural
from studymon.engine.judge.text import epoch_ns, rfc3339_epoch
from studymon.engine.judge.verdict import FORBIDDEN, SEEN_KEPT, SHOWN
from studymon.engine.safefile import type_name

RUNTIME_NAMES = {"docker": "the Docker engine", "process": "the process runtime"}


# --- container lifecycle events ---------------------------------------------------------


def event_ns(event: dict[str, Any]) -> int | None:
    tn = event.get("timeNano")
    if is_int(tn):
        return tn
    t = event.get("time")
    return epoch_ns(t)


def _exit_code(value: Any) -> int | None:
    if is_int(value):
        return value
    if isinstance(value, str) and re.fullmatch(r"-?\d{1,10}", value):
        return int(value)
    return None


@dataclass
class TargetWatch:
    """The lifecycle events that concern one target, within its window."""

    run: str
    name: str
    ids: frozenset[str]  # the Ids its snapshots show
    until_ns: int | None  # when its result was seen; None while the window is open
    forbidden: list[tuple[str, int]] = field(default_factory=list)  # (action, time), the first few
    forbidden_count: int = 0  # distinct ones (counted up to SEEN_KEPT)
    seen: set[tuple[Any, ...]] = field(default_factory=set)
    dies: dict[tuple[Any, ...], tuple[Any, int | None]] = field(default_factory=dict)  # key -> (Id, exit), at most 3


class EventTally:
    """Container lifecycle events, fed one at a time from the live recording and the read-back.

    Kept: for each target, its forbidden actions and its distinct ``die``
    events (the same event in both files is one: deduplicated by Id, action
    and time; two distinct dies already fail, so at most three are kept);
    the study containers created or started in the window for runs not
    planned after the kill; gap lines; lines that are not events.  Memory
    stays bounded whatever the files hold.
    """

    def __init__(
        self,
        since_ns: int | None,
        until_ns: int | None,
        name_prefix: str | None,
        allowed: frozenset[str],
        targets: list[TargetWatch],
    ) -> None:
        self.since_ns = since_ns
        self.until_ns = until_ns
        self.name_prefix = name_prefix
        self.allowed = allowed
        self.targets = targets
        self._target_names = frozenset(t.name for t in targets)
        # Targets by name and by Id: an event finds its targets at once, however many there are.
        self._by_run = {t.run: t for t in targets}
        self._by_name: dict[str, list[TargetWatch]] = {}
        self._by_id: dict[str, list[TargetWatch]] = {}
        for t in targets:
            self._by_name.setdefault(t.name, []).append(t)
            for i in t.ids:
                self._by_id.setdefault(i, []).append(t)
        self.gaps = 0
        self.restarts: list[tuple[str, str, int, str]] = []  # (runtime, from, from_ns, to), the first few
        self.restart_count = 0
        self.malformed: list[str] = []
        self.malformed_count = 0
        self.foreign: list[tuple[str, str, int]] = []  # (name, action, time), the first few
        self.foreign_count = 0
        self._seen: set[tuple[Any, ...]] = set()

    def watch(self, run: str) -> TargetWatch | None:
        return self._by_run.get(run)

    def bad_line(self, where: str, why: str) -> None:
        self.malformed_count += 1
        if len(self.malformed) < SHOWN:
            self.malformed.append(f"{where}: {why}")

    def restart(self, value: Any, where: str) -> None:
        """A line of runtime-restarts.jsonl: the runtime restarted between ``from`` and ``to``."""
        if not isinstance(value, dict):
            self.bad_line(where, f"{type_name(value)}, not a runtime restart")
            return
        runtime, start, end = value.get("runtime"), value.get("from"), value.get("to")
        start_epoch, end_epoch = rfc3339_epoch(start), rfc3339_epoch(end)
        if (
            not isinstance(runtime, str)
            or runtime not in RUNTIME_NAMES
            or not isinstance(start, str)
            or not isinstance(end, str)
            or start_epoch is None
            or end_epoch is None
            or end_epoch < start_epoch
        ):
            self.bad_line(where, "not a runtime restart (runtime, from, to)")
            return
        self.restart_count += 1
        if len(self.restarts) < SHOWN:
            self.restarts.append((runtime, start, int(start_epoch * 1e9), end))

    def restarts_for(self, watch: TargetWatch | None) -> list[str]:
        """What to say of the restarts that began before ``watch``'s result was seen (all of them without one)."""
        until = watch.until_ns if watch is not None else None
        shown = [
            f"{RUNTIME_NAMES[runtime]} restarted between {start} and {end}: what it did to the "
            "containers then is not in the live recording"
            for runtime, start, start_ns, end in self.restarts
            if until is None or start_ns <= until
        ]
        more = self.restart_count - len(self.restarts)
        if shown and more > 0:
            shown[-1] += f" (and {plural(more, 'more restart')})"
        return shown

    def add(self, value: Any, where: str, live: bool = True) -> None:
        if not isinstance(value, dict):
            self.bad_line(where, f"{type_name(value)}, not an event")
            return
        if "gap" in value:
            if live and isinstance(value["gap"], dict):
                self.gaps += 1
            else:
                self.bad_line(where, "a gap line that is not a gap")
            return
        kind = value.get("Type")
        if kind is not None and kind != "container":
            return
        action = value.get("Action", value.get("status"))
        if not isinstance(action, str):
            self.bad_line(where, "an event without an Action")
            return
        ns = event_ns(value)
        if ns is None:
            self.bad_line(where, "an event without a time")
            return
        actor = value.get("Actor", {})
        attrs = actor.get("Attributes", {}) if isinstance(actor, dict) else None
        if not isinstance(attrs, dict):
            self.bad_line(where, "an event whose Actor is not an object")
            return
        if self.since_ns is not None and ns < self.since_ns:
            return
        verb = action.split(":", 1)[0]
        cid = actor.get("ID") if isinstance(actor.get("ID"), str) else value.get("id")
        cid = cid if isinstance(cid, str) else None
        name = attrs.get("name")
        name = name.lstrip("/") if isinstance(name, str) else None
        old = attrs.get("oldName")
        old = old.lstrip("/") if isinstance(old, str) else None
        # The targets this event is about: by name, by Id, or renamed away from its name.
        concerned = {id(t): t for t in self._by_name.get(name, ())}  # type: ignore[arg-type]
        concerned.update((id(t), t) for t in self._by_id.get(cid, ()))  # type: ignore[arg-type]
        if verb == "rename":
            concerned.update((id(t), t) for t in self._by_name.get(old, ()))  # type: ignore[arg-type]
        for t in concerned.values():
            if t.until_ns is not None and ns > t.until_ns:
                continue
            k = (cid, verb, ns)
            if verb in FORBIDDEN and k not in t.seen:
                if len(t.seen) < SEEN_KEPT:
                    t.seen.add(k)
                t.forbidden_count += 1
                if len(t.forbidden) < SHOWN:
                    t.forbidden.append((verb, ns))
            elif verb == "die" and k not in t.dies and len(t.dies) < 3:
                t.dies[k] = (cid, _exit_code(attrs.get("exitCode")))
        if (
            verb in ("create", "start")
            and self.name_prefix is not None
            and name is not None
            and name.startswith(self.name_prefix)
            and name not in self.allowed
            and name not in self._target_names
            and (self.until_ns is None or ns <= self.until_ns)
            and (cid, verb, ns) not in self._seen
        ):
            if len(self._seen) < SEEN_KEPT:
                self._seen.add((cid, verb, ns))
            self.foreign_count += 1
            if len(self.foreign) < SHOWN:
                self.foreign.append((name, verb, ns))


def planned_after(acc: Accounts, prefix: str | None, seq: int | None) -> frozenset[str]:
    """Container names the study may create in a kill's window: runs not yet started at ``seq``.

    A run planned after the kill, and also one planned (and perhaps charged)
    before it but not started by then: §1 has the resume start it.  Neither
    is a target; a target's own name is judged apart and never allowed.
    """
    if prefix is None or seq is None:
        return frozenset()
    return frozenset(
        prefix + a.run
        for a in acc.runs.values()
        if a.plan is not None and (a.plan.seq > seq or not any(st.seq <= seq for st in a.starts))
    )
