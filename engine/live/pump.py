"""The ledger pump: a study's ledger read as it grows, accounted, timed and reported.

A :class:`LedgerPump` follows one study's ``OUT/study/ledger.jsonl``.  It
wakes when its notice source (inotify, or watchfiles) says the study folder
changed (never on a fixed poll), reads what is new (at once while the study
writes a few records a second; a busy ledger's appends are gathered for
:data:`GATHER` first, see :class:`~studymon.engine.io.pace.Pace`), adds it to the accounts,
asks the kill whether its trigger is among it, and only then writes each
record's ``timeline.jsonl`` line and reports it (:class:`~studymon.engine.events.RecordsSeen`, ``Progress``).  On
resume and attach it first takes in the ledger that is already there.

The pump knows nothing of the kill beyond the questions of
:class:`KillTrigger`, asked of each batch; it reads through the
:class:`~studymon.engine.kill.reads.LedgerReads` it shares with the kill
driver, and records every read, its own and those the driver made (held
while a kill has the controller frozen, until SIGKILL is sent), in the order
they were read.
"""

from __future__ import annotations

import asyncio
import collections
import gc
import json
import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Protocol

from studymon.engine.contract.accounts import Accounts
from studymon.engine.contract.ledger import READ_SLICE, LedgerIssue, Record, read_last_records
from studymon.engine.contract.spec import StudySpec
from studymon.engine.events import Progress, RecordsSeen, StudyEvent
from studymon.engine.evidence.records import TimelineLine
from studymon.engine.evidence.writer import EvidenceWriteError, append_jsonl, append_line_fd
from studymon.engine.io.clock import rfc3339_ms
from studymon.engine.io.notify import IN_CREATE, IN_MOVED_TO
from studymon.engine.io.pace import Pace
from studymon.engine.kill.reads import LedgerReads

# With a notice source a wake-up comes soon after a write (inotify: within a
# millisecond); the timeout is only a safety net for file systems that drop
# notifications (NFS).  One wake-up per study each time: at 5 s, 48 idle studies
# woke the console ten times a second for nothing (bench/many_studies.py).
SAFETY_WAKE = 30.0
NO_NOTICE_POLL = 0.25  # without a notice source, the ledger is read on this period instead
GATHER = 0.1  # seconds a wake-up of a busy ledger waits for more appends when no trigger is armed
# A ledger that grew by at most this many records in the last second is read at each
# append: an operator sees a slow study's records as they come.  Beyond, appends are
# gathered, so a busy ledger costs a read and an event per GATHER, not per line.
READ_AT_ONCE_PER_SECOND = 8
MAX_ISSUES_KEPT = 1000
SHOWN_ON_CATCH_UP = 10_000  # records of a long backlog handed to the front end for display
PREVIEW_BYTES = 256 * 1024  # the end of a long ledger, shown before it is read through


def last_timeline_seq(path: Path) -> int:
    """The highest seq in ``timeline.jsonl``, read from its end (seqs only grow there)."""
    try:
        with open(path, "rb") as fh:
            size = fh.seek(0, os.SEEK_END)
            fh.seek(max(0, size - 65536))
            tail = fh.read()
    except FileNotFoundError:
        return 0
    best = 0
    for line in tail.splitlines()[-200:]:
        try:
            seq = json.loads(line).get("seq")
        except (ValueError, AttributeError):
            continue
        if isinstance(seq, int) and seq > best:
            best = seq
    return best


class KillTrigger(Protocol):
    """What the kill asks of each read (a :class:`~studymon.engine.kill.driver.KillDriver` answers)."""

    def reads_at_once(self) -> bool:
        """Whether a wake-up is read at once (armed, or a kill under way) rather than after appends gather."""
        ...

    def check_trigger(self, records: list[Record], seen: float) -> bool:
        """Count ``records`` (just read and accounted) against the armed point; whether its kill began."""
        ...

    def records_recorded(self, records: list[Record]) -> None:
        """Records were recorded and reported: the open kill windows may now have their results."""
        ...


class _NoKill:
    """The kill of a pump that has none wired in: never armed, never triggered."""

    def reads_at_once(self) -> bool:
        return False

    def check_trigger(self, records: list[Record], seen: float) -> bool:  # noqa: ARG002 - the KillTrigger signature
        return False

    def records_recorded(self, records: list[Record]) -> None:
        pass


class LedgerPump:
    """Reads one study's ledger as it grows: accounts, the kill's trigger, timeline, reports.

    ``reads`` is the ledger as read live, shared with ``kill`` (the kill
    driver, asked of each batch); ``on_records`` is called when a read that
    brings records is recorded, before they are reported; ``on_write_error``
    gets an evidence write that failed in the pump's own task (the session
    then stops the study).
    """

    def __init__(
        self,
        spec: StudySpec,
        reads: LedgerReads,
        emit: Callable[[StudyEvent], None],
        *,
        kill: KillTrigger | None = None,
        on_records: Callable[[], None],
        on_write_error: Callable[[EvidenceWriteError], None],
    ) -> None:
        self.spec = spec
        self.study = spec.id
        self.reads = reads
        self.accounts: Accounts = reads.accounts
        self.tail = reads.tail
        self.notifier = reads.notifier
        self.emit = emit
        self.on_records = on_records
        self.on_write_error = on_write_error
        self.kill: KillTrigger = kill if kill is not None else _NoKill()
        self.pace = Pace(READ_AT_ONCE_PER_SECOND)
        self.issues: list[LedgerIssue] = []
        self.issue_count = 0
        self._watch_faults_recorded = 0  # of the tail's faults, how many are in ledger-watch.jsonl
        self._pumping = True
        self._timeline_fd = -1
        self._timeline_path = spec.folder.timeline

    # --- opening and closing --------------------------------------------------
    def open(self) -> None:
        """Open ``timeline.jsonl`` for appending and watch the folders."""
        self._timeline_fd = os.open(self._timeline_path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
        self.watch_folders()

    def watch_folders(self) -> None:
        # OUT is watched only for OUT/study to appear: the engine's own writes
        # there (timeline, kills) must not wake the ledger reader.
        self.notifier.watch(self.spec.out, IN_CREATE | IN_MOVED_TO)
        self.notifier.watch(self.spec.folder.study)

    def stop(self) -> None:
        """Let the pump's loop end at its next wake-up."""
        self._pumping = False

    def close(self) -> None:
        if self._timeline_fd >= 0:
            os.close(self._timeline_fd)
            self._timeline_fd = -1
        self.reads.close()

    def finish(self) -> None:
        """The ledger's last, unterminated line (if any) becomes an issue: the study has ended."""
        self.record_ready()
        tail_issues = self.tail.finish()
        if tail_issues:
            self.note_issues(tail_issues)

    # --- following the ledger -------------------------------------------------
    async def run(self) -> None:
        """Read the ledger whenever it changes, until stopped or cancelled."""
        try:
            await self._pump_records()
        except EvidenceWriteError as exc:
            self.on_write_error(exc)

    async def _pump_records(self) -> None:
        while self._pumping:
            if self.tail.behind:
                # A burst is read a slice per wake-up, so that another study's
                # trigger never waits behind this one's backlog.  A timer, not
                # sleep(0): that would put this session back at the head of the
                # loop's queue, ahead of a woken armed study (measured: up to 3
                # slices of wait, against about one).
                await asyncio.sleep(1e-6)
            else:
                woke = await self.notifier.wait_async(SAFETY_WAKE if self.notifier.active else NO_NOTICE_POLL)
                if woke and self.pace.busy and not self.kill.reads_at_once():
                    # A busy ledger with nothing to react to: let its appends gather, so
                    # it costs a read and an event per interval, not per line.  A slow
                    # one is read at once (the operator waits for each record), and so
                    # is an armed one (its trigger).
                    await asyncio.sleep(GATHER)
                self.watch_folders()
            self.drain(READ_SLICE)

    def drain(self, max_bytes: int | None = None) -> None:
        """Read what is new in the ledger (at most about ``max_bytes``); react, record, report.

        Synchronous on purpose: the trigger is acted on before anything is
        written or emitted.  The controller is frozen in this wake-up and,
        when its group is already stopped (the usual case), the ledger is read
        to its end and the thread that inspects and sends SIGKILL started.
        """
        # A read that begins a kill is held (reported once SIGKILL is sent: until then the loop stays idle, so
        # the inspecting thread has the interpreter to itself); what the driver read meanwhile is recorded first.
        self.reads.read(self.kill.check_trigger, max_bytes)
        self.record_ready()

    def record_ready(self) -> None:
        """Record and report the reads no kill holds, in the order they were read."""
        for records, issues, seen in self.reads.take_ready():
            self.pace.note(len(records))
            self._record(records, issues, seen)

    async def drain_all(self) -> None:
        """Read the ledger to its end, a slice per wake-up (a study may end in the middle of a burst)."""
        self.drain(READ_SLICE)
        while self.tail.behind:
            await asyncio.sleep(1e-6)
            self.drain(READ_SLICE)

    def _record(self, records: list[Record], issues: list[LedgerIssue], seen: float) -> None:
        self._write_timeline(records, seen)
        if records:
            self.on_records()
        self.note_issues(issues)
        self.emit(RecordsSeen(self.study, tuple(records), tuple(issues)))
        self.progress()
        self.kill.records_recorded(records)

    # --- what was there already -----------------------------------------------
    async def catch_up(self) -> None:
        """Take in what the ledger holds already (on resume and attach).

        A long ledger is read and accounted in a thread, a chunk at a time, so
        the console keeps drawing and memory stays flat: the accounts keep
        only what the checks need, and only the last :data:`SHOWN_ON_CATCH_UP`
        records are handed on for display.  Records an earlier console already
        put in ``timeline.jsonl`` are not written again; any it never saw are,
        with the time they are seen now.  Nothing else touches the tail until
        the pump starts after this.
        """
        # A long ledger's end is shown first, from its last bytes: the operator
        # sees the study at once while the whole of it is read for the accounts.
        preview: list[Record] = []
        preview_end = 0
        try:
            size = self.spec.folder.ledger.stat().st_size
        except FileNotFoundError:
            size = 0
        if size > 4 * PREVIEW_BYTES:
            preview, preview_end = await asyncio.to_thread(read_last_records, self.spec.folder.ledger, PREVIEW_BYTES)
            if preview:
                self.emit(RecordsSeen(self.study, tuple(preview), skipped=max(0, preview[0].seq - 1)))
        shown, issues, total = await asyncio.to_thread(self._catch_up_work)
        if not total and not issues:
            return
        self.note_issues(issues)
        if preview:
            shown = [r for r in shown if r.offset >= preview_end]
        purposes = tuple((a.run, str(a.purpose or "")) for a in self.accounts.runs.values() if a.plan is not None)
        self.emit(
            RecordsSeen(
                self.study,
                tuple(shown),
                tuple(issues[:MAX_ISSUES_KEPT]),
                skipped=0 if preview else total - len(shown),
                purposes=purposes,
            )
        )
        self.progress()

    def _catch_up_work(self) -> tuple[list[Record], list[LedgerIssue], int]:
        last = last_timeline_seq(self._timeline_path)
        shown: collections.deque[Record] = collections.deque(maxlen=SHOWN_ON_CATCH_UP)
        issues: list[LedgerIssue] = []
        total = 0
        seen = time.time()
        # Parsed records are short-lived garbage here; the cyclic collector
        # would only re-scan them (it cost more than the parsing).
        collecting = gc.isenabled()
        gc.disable()
        try:
            for records, chunk_issues in self.tail.read_chunks():
                total += len(records)
                self.accounts.extend(records)
                self._write_timeline([r for r in records if r.seq > last], seen)
                shown.extend(records)
                if len(issues) < MAX_ISSUES_KEPT:
                    issues.extend(chunk_issues)
        finally:
            if collecting:
                gc.enable()
        return list(shown), issues, total

    # --- recording and reporting ----------------------------------------------
    def _write_timeline(self, records: list[Record], seen: float) -> None:
        if self._timeline_fd < 0:
            return
        seen_at = rfc3339_ms(seen)  # one batch, one time written out
        for r in records:
            # One line per write keeps each append whole even if the console dies mid-batch.
            line = TimelineLine.line(r.seq, r.kind, r.at, seen_at)
            data = (json.dumps(line, ensure_ascii=False) + "\n").encode()
            append_line_fd(self._timeline_fd, self._timeline_path, data)

    def note_issues(self, issues: list[LedgerIssue]) -> None:
        if issues:
            self._record_watch_faults()
        self.issue_count += len(issues)
        room = MAX_ISSUES_KEPT - len(self.issues)
        if room > 0:
            self.issues.extend(issues[:room])

    def _record_watch_faults(self) -> None:
        """Write down each truncation or replacement of the ledger seen while watched, so ``report`` sees it too."""
        faults = self.tail.faults
        while self._watch_faults_recorded < len(faults):
            line = dict(faults[self._watch_faults_recorded])
            line["at"] = rfc3339_ms()
            append_jsonl(self.spec.folder.ledger_watch, line)
            self._watch_faults_recorded += 1

    def progress(self) -> None:
        acc = self.accounts
        self.emit(
            Progress(
                self.study,
                acc.round,
                acc.stage,
                acc.balance,
                acc.budget,
                tuple((a.run, a.container) for a in acc.in_flight()),
            )
        )
