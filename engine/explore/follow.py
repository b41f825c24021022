"""Following an evidence folder that another process writes: what it holds, as the events a session sends.

The console's own studies are told by their sessions.  A campaign's trials
run elsewhere (a Dask worker runs ``studymon run --headless`` for each), yet
on this machine their folders can be read as they grow, and a trial's
folder is shipped back whole once it ends.  A :class:`FolderFollower` reads
one such folder, read-only, and says what is new in it as the events a
session would have sent: records and the position they give (round, stage,
budget, runs in flight), each controller's start and end, the points armed,
each kill or end the console did not make, and the verdicts once
``report.json`` is there.  So the overview's row and the pane show a trial
as they show a study.

Each poll reads only what is new: the ledger from its last offset (at most
:data:`POLL_BYTES` a poll), the appended files from theirs, a kill folder
once.  Nothing is written, so the follower may read a folder that is being
shipped, unpacked or judged.  Files are opened as the judge opens them
(:mod:`studymon.engine.io.safefile`: no link out of the folder, sizes capped),
since a folder shipped from a worker is as untrusted as any evidence; for
the same reason each text from it that an event carries (a missed point's
detail, a kill's trigger and point, the checks of ``report.json``) passes
the one quoting function (:func:`studymon.engine.io.quoting.free_text`).
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path
from typing import Any

import orjson

from studymon.engine.contract.accounts import Accounts
from studymon.engine.contract.folder import EvidenceFolder, KillFolder
from studymon.engine.contract.killpoint import SEED
from studymon.engine.contract.ledger import LedgerTail
from studymon.engine.events import (
    ArmChanged,
    ControllerEnded,
    ControllerStarted,
    KillStep,
    Progress,
    RecordsSeen,
    State,
    StateChanged,
    StudyEvent,
    Verdicts,
)
from studymon.engine.evidence.records import LaunchEnd, LaunchStart, parse_arm, parse_launch
from studymon.engine.io import safefile
from studymon.engine.io.quoting import DETAIL_LIMIT, free_text
from studymon.engine.judge.report import report_checks
from studymon.engine.judge.verdict import Check, overall

POLL_BYTES = 1 << 20  # of the ledger per poll: a long backlog is taken in over several polls
LINE_BYTES = 1 << 16  # a line of an appended file longer than this is skipped, not held
WORD = 80  # characters of a point, a trigger or a check's name told


def _said(value: Any) -> str:
    """A value of the folder's (a point, a trigger: any JSON) as the words an event carries."""
    return free_text(value if isinstance(value, str) else str(value), WORD)


class _Appended:
    """An appended ``.jsonl`` file read from the last whole line taken."""

    def __init__(self, out: Path, rel: str) -> None:
        self.out, self.rel = out, rel
        self.offset = 0
        self._partial = b""

    def new_lines(self) -> list[Any]:
        try:
            fd, size = safefile.open_inside(self.out, self.rel, safefile.JSONL_CAP)
        except safefile.Unreadable:
            return []
        try:
            if size < self.offset:  # cut back or replaced: an appended file only grows; read it again
                self.offset, self._partial = 0, b""
            data = os.pread(fd, min(size - self.offset, POLL_BYTES), self.offset)
        finally:
            os.close(fd)
        self.offset += len(data)
        lines = (self._partial + data).split(b"\n")
        self._partial = lines.pop()
        if len(self._partial) > LINE_BYTES:
            self._partial = b""
        values = []
        for body in lines:
            if body.strip() and len(body) <= LINE_BYTES:
                with contextlib.suppress(orjson.JSONDecodeError):
                    values.append(orjson.loads(body))
        return values


class FolderFollower:
    """What is new in ``out`` (the evidence folder of study ``study``) at each :meth:`poll`, as events."""

    def __init__(self, study: str, out: Path) -> None:
        self.study = study
        self.out = Path(out)
        self.ledger = LedgerTail(EvidenceFolder(self.out).ledger)
        self.accounts = Accounts()
        self.launches = _Appended(self.out, EvidenceFolder.LAUNCHES)
        self.arms = _Appended(self.out, EvidenceFolder.ARMS)
        self.state: State | None = None
        self.kills_seen = 0
        self.armed: list[str] = []  # the points armed and not yet fired or missed, in order
        self.first_start: float | None = None
        self.running: int | None = None  # the controller's pid while one runs
        self.killed_pids: set[int] = set()
        self.verdicts: Verdicts | None = None
        self.records = 0

    def poll(self) -> list[StudyEvent]:
        """The events of what was written since the last poll (none when nothing was)."""
        events: list[StudyEvent] = []
        self._read_arms(events)
        self._read_kills(events)
        self._read_launches(events)
        self._read_ledger(events)
        self._read_report(events)
        self._set_state(events)
        return events

    def relocate(self, out: Path) -> None:
        """Read on in ``out``, a copy of the folder followed so far (a trial's folder shipped back whole once its
        worker removed the one it ran in): from the same offsets, so that nothing is told twice."""
        tail = LedgerTail(EvidenceFolder(out).ledger)
        tail.offset, tail.parser = self.ledger.offset, self.ledger.parser
        self.ledger.close()
        self.out, self.ledger = Path(out), tail
        self.launches.out = self.arms.out = self.out

    def close(self) -> None:
        self.ledger.close()

    @property
    def ended(self) -> bool:
        """The folder's study has its verdicts (``report.json``): nothing more will come."""
        return self.verdicts is not None

    # --- the files ---------------------------------------------------------------
    def _read_ledger(self, events: list[StudyEvent]) -> None:
        records, issues = self.ledger.read_new(max_bytes=POLL_BYTES)
        if not records and not issues:
            return
        for record in records:
            self.accounts.add(record)
        self.records += len(records)
        events.append(RecordsSeen(self.study, tuple(records), tuple(issues)))
        acc = self.accounts
        flight = tuple((a.run, a.container) for a in acc.in_flight())
        events.append(Progress(self.study, acc.round, acc.stage, acc.balance, acc.budget, flight))

    def _read_launches(self, events: list[StudyEvent]) -> None:
        for value in self.launches.new_lines():
            line = parse_launch(value)
            if isinstance(line, LaunchStart) and line.pid is not None:
                if self.first_start is None:
                    self.first_start = line.at
                self.running = line.pid
                events.append(ControllerStarted(self.study, line.pid, line.resume, self.first_start))
            elif isinstance(line, LaunchEnd) and line.pid is not None:
                if self.running == line.pid:
                    self.running = None
                events.append(ControllerEnded(self.study, line.pid, line.code, line.signal))

    def _read_arms(self, events: list[StudyEvent]) -> None:
        before = list(self.armed)
        for value in self.arms.new_lines():
            line = parse_arm(value)
            if isinstance(line, str):
                continue
            point = _said(line.point) if line.point is not None else str(SEED)
            if line.event == "arm":
                self.armed.append(point)
            elif line.event == "disarm":
                self.armed.clear()
            elif line.event in ("fired", "missed"):
                if point in self.armed:
                    self.armed.remove(point)
                if line.event == "missed":
                    detail = free_text(line.detail, DETAIL_LIMIT) if line.detail else ""
                    events.append(KillStep(self.study, 0, "missed", detail, line.at, point))
        if self.armed != before:
            waiting = tuple(self.armed[1:])
            events.append(ArmChanged(self.study, bool(self.armed), self.armed[0] if self.armed else None, waiting))

    def _read_kills(self, events: list[StudyEvent]) -> None:
        while self.kills_seen < KillFolder.LIMIT:
            kill = KillFolder(self.out, self.kills_seen + 1)
            rel = f"{EvidenceFolder.KILLS}/{kill.number}/{KillFolder.KILL}"
            try:
                body = safefile.read_object(self.out, rel, KillFolder.CAPS[KillFolder.KILL])
            except safefile.Unreadable:
                return  # not there yet (or not whole yet: kill.json is published whole, so not there)
            self.kills_seen = kill.number
            trigger = body.get("trigger")
            step = "killed" if trigger in ("auto", "manual") else _said(trigger or "killed")
            pid = body.get("pid")
            if isinstance(pid, int):
                self.killed_pids.add(pid)
            sent = body.get("killSentEpoch")
            at = float(sent) if isinstance(sent, (int, float)) and sent > 0 else None
            point = body.get("point")
            events.append(
                KillStep(self.study, kill.number, step, "", at, _said(point) if isinstance(point, str) else None)
            )

    def _read_report(self, events: list[StudyEvent]) -> None:
        if self.verdicts is not None:
            return
        try:
            body = safefile.read_object(self.out, EvidenceFolder.REPORT)
        except safefile.Unreadable:
            return
        checks = [
            Check(_said(c.name), c.ok, free_text(c.detail, DETAIL_LIMIT), _said(c.scope)) for c in report_checks(body)
        ]
        finished = body.get("finished") is True
        self.verdicts = Verdicts(self.study, tuple(checks), overall(checks), finished)
        events.append(self.verdicts)

    def _set_state(self, events: list[StudyEvent]) -> None:
        if self.verdicts is not None:
            ok = self.verdicts.ok
            state = State.FINISHED_OK if ok is True else State.FINISHED_FAIL if ok is False else State.STOPPED
        elif self.running is not None:
            state = State.RUNNING
        elif self.kills_seen and self.first_start is not None:
            state = State.KILLED  # between a kill and the resume's start
        else:
            state = State.STARTING
        if state != self.state:
            self.state = state
            events.append(StateChanged(self.study, state))
