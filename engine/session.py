"""One study, start to end: an asyncio task that launches, watches, kills, resumes and judges.

A :class:`StudySession` owns every side effect on its study and its evidence
folder.  It reads the ledger when inotify says the folder changed (never on a
fixed poll), keeps the accounts incrementally, appends ``timeline.jsonl``,
follows the study's containers through the runtime's event stream, and
performs the kill protocol (:mod:`studymon.engine.kill`).  It reports everything as
typed events (:mod:`studymon.engine.events`) to one sink; front ends render those and
call :meth:`arm`, :meth:`kill_now`, :meth:`resume` and :meth:`stop`.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import gc
import json
import os
import shlex
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from studymon.engine import kill as killproto
from studymon.engine import studylock
from studymon.engine.accounts import Accounts
from studymon.engine.clock import rfc3339_ms
from studymon.engine.events import (
    ArmChanged,
    ContainerChanged,
    KillStep,
    Problem,
    ProcessEnded,
    ProcessStarted,
    Progress,
    RecordsSeen,
    Sample,
    State,
    StateChanged,
    StudyEvent,
    Verdicts,
)
from studymon.engine.evidence import (
    EvidenceWriteError,
    append_jsonl,
    append_line_fd,
    read_json,
    read_jsonl,
    write_json,
    write_text,
)
from studymon.engine.launcher import Controller, Ending, find_running, last_log_line
from studymon.engine.ledger import READ_SLICE, LedgerIssue, LedgerTail, Record, read_last_records
from studymon.engine.notify import IN_CREATE, IN_MOVED_TO, Notifier
from studymon.engine.recording import EventRecorder
from studymon.engine.report import Judgement, judge, last_ending
from studymon.engine.runtimes import Runtime, open_runtime
from studymon.engine.sampler import WRITE_EVERY, TreeCPU, heavy_snapshot
from studymon.engine.spec import StudySpec, controller_argv
from studymon.engine.studylock import StudyLock
from studymon.engine.table import table_svg

Sink = Callable[[StudyEvent], None]

# With inotify a wake-up comes within a millisecond of a write; the timeout is
# only a safety net for file systems that drop notifications (NFS).
SAFETY_WAKE = 5.0
NO_NOTICE_POLL = 0.25  # without inotify (not Linux), the ledger is read on this period instead
GATHER = 0.1  # seconds a wake-up waits for more appends when no trigger is armed
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


@dataclass
class SessionResult:
    """How a session ended: finished (with a judgement) or not, and how to go on."""

    study: str
    out: Path
    finished: bool
    judgement: Judgement | None
    ending: Ending | None
    message: str = ""
    detached: bool = False

    @property
    def exit_status(self) -> int:
        if not self.finished or self.judgement is None:
            return 3
        return 0 if self.judgement.ok is True else 1


def resume_command(specs: list[StudySpec]) -> str:
    """The exact command that resumes ``specs``, quoted for a shell (an OUT may hold a space)."""
    pairs = " ".join(shlex.quote(f"{s.id}={s.out}") for s in specs)
    return f"studymon run --resume {pairs}"


class StudySession:
    """A study under watch.  ``await run()`` returns when it has ended (or was detached)."""

    def __init__(
        self,
        spec: StudySpec,
        sink: Sink,
        *,
        resume: bool = False,
        armed: bool = False,
        linger: bool = False,
        attach: bool = False,
        runtime: Runtime | None = None,
        lock: StudyLock | None = None,
    ) -> None:
        self.spec = spec
        # The study's lock (one study per id), claimed by the command before the
        # study was created or resumed; passed to every keeper this session starts.
        self.lock = lock
        self.attach_at_start = attach
        self.sink = sink
        self.resume_at_start = resume
        self.armed = armed
        self.linger = linger  # keep watching after the controller ends (console), until closed
        self.research: dict[str, Any] = read_json(spec.out / "research.json")
        self.backend: str = self.research.get("backend", "process")
        self.prefix = f"{self.research.get('containerPrefix', 'inforsi')}-{spec.id}-"
        self.runtime: Runtime = runtime if runtime is not None else open_runtime(self.backend)
        self._owns_runtime = runtime is None  # one given by the caller is the caller's to close
        self.recorder = EventRecorder(self.prefix, self.runtime.history)
        self.accounts = Accounts()
        self.issues: list[LedgerIssue] = []
        self.issue_count = 0
        self.controller: Controller | None = None
        self.state = State.STARTING
        self.containers: dict[str, dict[str, Any]] = {}
        self._tail = LedgerTail(spec.ledger)
        self._notifier = Notifier()
        self._changed = asyncio.Event()
        self._resume_event = asyncio.Event()
        self._close_event = asyncio.Event()
        self._kill_task: asyncio.Task[None] | None = None
        self._killing: killproto.Kill | None = None
        self._kill_error: str | None = None  # a kill that could not be seen through: the session stops
        self._windows: dict[int, killproto.Kill] = {}  # kills whose window is open
        self._closing: dict[int, asyncio.Task[None]] = {}
        self._watch_faults_recorded = 0  # of the tail's faults, how many are in ledger-watch.jsonl
        self._frozen_reads: list[tuple[list[Record], list[LedgerIssue], float]] = []
        self._pumping = True
        self._stopping = False
        self._end_watchers: set[asyncio.Task[Ending]] = set()
        self._stream_stop = threading.Event()
        self._samples = 0
        self._tree = TreeCPU()
        self._timeline_fd = -1
        self._timeline_path = spec.out / "timeline.jsonl"
        self._loop: asyncio.AbstractEventLoop | None = None
        # The first evidence write that failed (disk full, I/O error): the session
        # then stops the study, so that nothing happens that is not recorded.
        self._write_error: EvidenceWriteError | None = None
        self._write_failed = asyncio.Event()

    # --- events --------------------------------------------------------------
    def emit(self, event: StudyEvent) -> None:
        self.sink(event)

    def set_state(self, state: str, detail: str = "") -> None:
        self.state = state
        self.emit(StateChanged(self.spec.id, state, detail))

    def kill_step(self, number: int, step: str, detail: str = "") -> None:
        self.emit(KillStep(self.spec.id, number, step, detail))

    # --- actions (called by front ends) -------------------------------------
    def arm(self, on: bool = True) -> None:
        """Arm (or disarm) the kill at the first diagnosis start."""
        if on == self.armed:
            return
        self.armed = on
        append_jsonl(self.spec.out / "arms.jsonl", {"event": "arm" if on else "disarm", "at": rfc3339_ms()})
        self.emit(ArmChanged(self.spec.id, on))
        if on:
            self._react_now()

    def kill_now(self, auto_resume: bool = True) -> bool:
        """Kill the controller now; targets are the runs in flight.  False if it is not running."""
        if self._killing is not None or self.controller is None or self.controller.ending is not None:
            return False
        self.drain()
        if self._killing is not None:
            return False
        return self._begin_kill("manual", None, None, time.time(), auto_resume)

    def resume(self) -> bool:
        """Resume a study whose controller is not running and that has not finished."""
        if self.controller is not None and self.controller.ending is None:
            return False
        if self.state in (State.FINISHED_OK, State.FINISHED_FAIL):
            return False
        self._resume_event.set()
        return True

    def is_running(self) -> bool:
        """Whether the controller runs (a frozen or mid-kill one counts)."""
        return self.controller is not None and self.controller.ending is None

    def stop(self, then_close: bool = False) -> bool:
        """Ask the controller to stop (SIGINT; SIGKILL after the grace period).

        ``then_close``: stop watching once it has ended (quitting the console).
        """
        if then_close:
            self._stopping = True
        if not self.is_running():
            if then_close:
                self.close()
            return False
        self._stopping = True
        self.set_state(State.STOPPING, "SIGINT sent")
        controller = self.controller
        assert controller is not None
        asyncio.ensure_future(controller.stop())
        return True

    def close(self) -> None:
        """Stop watching (after the controller ended, or to detach)."""
        self._close_event.set()
        self._resume_event.set()

    # --- the run -------------------------------------------------------------
    async def run(self) -> SessionResult:
        self._loop = asyncio.get_running_loop()
        await asyncio.to_thread(killproto.warm_up)
        self._timeline_fd = os.open(
            self._timeline_path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644
        )
        self._watch_folders()
        stream = threading.Thread(target=self._stream_containers, name=f"containers-{self.spec.id}", daemon=True)
        stream.start()
        pump: asyncio.Task[None] | None = None
        ending: Ending | None = None
        try:
            if self.attach_at_start or self.resume_at_start:
                self._restore_arming()
            await self._catch_up_existing()
            if self.attach_at_start or self.resume_at_start:
                await self._continue_windows()
            pump = asyncio.create_task(self._pump(), name=f"pump-{self.spec.id}")
            if self.attach_at_start:
                self.controller = find_running(self.spec.out)
                if self.controller is not None:
                    if self.controller.is_stopped():
                        # A console died between freeze and kill: let the study go on.
                        self.controller.thaw()
                        self.emit(Problem(self.spec.id, "the controller was found stopped (SIGSTOP); sent SIGCONT"))
                    self.emit(ProcessStarted(self.spec.id, self.controller.pid, False))
                    self._report_end(self.controller)
                    self.set_state(State.RUNNING, f"attached to pid {self.controller.pid}")
                    self._react_now()
            elif self.resume_at_start and self._ended_cleanly():
                # The controller ended on its own already; what is left is to write the reports.
                self.controller = None
            else:
                await self.relaunch(resume=self.resume_at_start)
            while True:
                if self._write_error is not None:
                    raise self._write_error
                if self.controller is None:
                    ending = self._recorded_ending()
                else:
                    ending = await self._wait_end()
                    if ending is None:
                        self.set_state(State.DETACHED, f"pid {self.controller.pid} left running")
                        return SessionResult(self.spec.id, self.spec.out, False, None, None,
                                             "detached: the controller is still running", detached=True)
                    await self._drain_all()
                    if self._kill_task is not None and not self._kill_task.done():
                        await self._kill_task
                    self._kill_task = None
                    self._killing = None
                    if self.controller.ending is None:
                        self._after_kill_state()
                        continue
                    ending = self.controller.ending
                if ending is not None and ending.code == 0:
                    break
                self._unfinished_state(ending)
                if self._kill_error is not None:
                    self.emit(Problem(self.spec.id, self._kill_error, resume_command([self.spec])))
                if not self.linger or self._close_event.is_set():
                    break
                # Waited for, then cleared: a resume asked before we got here is not lost.
                await self._resume_event.wait()
                self._resume_event.clear()
                if self._close_event.is_set():
                    break
                self._stopping = False
                self._kill_error = None
                await self.relaunch(resume=True)
            if self._write_error is not None:
                raise self._write_error
            return await self._finish(ending)
        except EvidenceWriteError as exc:
            return await self._stopped_for_write(exc, ending)
        except Exception as exc:  # noqa: BLE001 - the scene is kept, the operator is told
            if self.controller is not None:
                self.controller.thaw()
            self.set_state(State.ERROR, str(exc))
            hint = (f"studymon attach {self.spec.out}" if self.is_running() else resume_command([self.spec]))
            self.emit(Problem(self.spec.id, f"{type(exc).__name__}: {exc}", hint))
            return SessionResult(self.spec.id, self.spec.out, False, None, ending, f"{type(exc).__name__}: {exc}")
        finally:
            self._pumping = False
            for kill in self._windows.values():
                kill.leave()
            if pump is not None:
                pump.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await pump  # its write errors were handled through _note_write_error
            self._stream_stop.set()
            if self._timeline_fd >= 0:
                os.close(self._timeline_fd)
                self._timeline_fd = -1
            self._notifier.close()
            self._tail.close()
            if self.lock is not None:
                self.lock.release()  # keepers that still run hold their share
            if self.controller is not None and self.controller.ending is None:
                self.controller.release()  # detached: the study runs on; its pidfd is not ours to keep
            # The stream ends within moments of its stop; a stuck engine call is not waited for long.
            await asyncio.to_thread(stream.join, 5.0)
            if self._owns_runtime:
                _close_runtime(self.runtime)

    async def _wait_end(self) -> Ending | None:
        """The controller's end, or None when the session was closed (detached) first."""
        assert self.controller is not None
        ender = asyncio.ensure_future(self.controller.wait())
        closer = asyncio.ensure_future(self._close_event.wait())
        failed = asyncio.ensure_future(self._write_failed.wait())
        await asyncio.wait({ender, closer, failed}, return_when=asyncio.FIRST_COMPLETED)
        failed.cancel()
        if ender.done():
            closer.cancel()
            return ender.result()
        if self._write_error is not None:
            closer.cancel()
            ender.cancel()
            raise self._write_error
        if self._killing is not None or self._stopping:
            # A kill or a stop in progress ends this controller; see it through.
            return await ender
        ender.cancel()
        return None

    def _report_end(self, controller: Controller) -> None:
        """Emit ProcessEnded when ``controller`` ends, whoever is waiting for it."""

        def done(task: asyncio.Task[Ending]) -> None:
            if not task.cancelled() and task.exception() is None:
                ending = task.result()
                self.emit(ProcessEnded(self.spec.id, controller.pid, ending.code, ending.signal))

        task = asyncio.ensure_future(controller.wait())
        task.add_done_callback(done)
        self._end_watchers.add(task)
        task.add_done_callback(self._end_watchers.discard)

    def _ended_cleanly(self) -> bool:
        ending = self._recorded_ending()
        return ending is not None and ending.code == 0

    def _recorded_ending(self) -> Ending | None:
        ending, ended = last_ending(self.spec.out)
        if not ended or ending is None:
            return None
        return Ending(ending.get("code"), ending.get("signal"))

    def _restore_arming(self) -> None:
        """An attached or resumed session keeps an arming that has not fired yet."""
        armed = False
        for line in read_jsonl(self.spec.out / "arms.jsonl"):
            event = line.get("event")
            armed = event == "arm" if event in ("arm", "disarm", "fired", "missed") else armed
        self.armed = armed
        if armed:
            self.emit(ArmChanged(self.spec.id, True))

    async def relaunch(self, resume: bool) -> None:
        """Start the controller (``--resume`` when ``resume``), with its heavy snapshot first."""
        if resume:
            for kill in self._windows.values():
                if not (kill.folder / "container-before-resume.json").exists():
                    await kill.before_resume()
        await self.heavy_snapshot("resume" if resume else "start")
        env = dict(os.environ)
        env["STUDYMON_STUDY"] = self.spec.id
        env["STUDYMON_OUT"] = str(self.spec.out)
        argv = controller_argv(self.research, self.spec.out, resume)
        lock = self._hold_lock()
        self.controller = await Controller.launch(argv, self.spec.out, env, resume, keep_fds=(lock.fileno(),))
        self.emit(ProcessStarted(self.spec.id, self.controller.pid, resume))
        self._report_end(self.controller)
        self.set_state(State.RESUMING if resume else State.RUNNING, f"pid {self.controller.pid}")
        self._watch_folders()

    async def _stopped_for_write(self, exc: EvidenceWriteError, ending: Ending | None) -> SessionResult:
        """An evidence file could not be written: stop the study (SIGINT, then SIGKILL), keep the scene, say how to go on.

        A study that went on while its console cannot record would leave
        evidence with holes; stopped, it is resumed once there is room, and
        its ledger tells the resumed console everything it missed.
        """
        self._write_error = self._write_error or exc
        controller = self.controller
        if controller is not None and controller.ending is None:
            self._stopping = True
            self.set_state(State.STOPPING, "the console cannot write its evidence: stopping the study (SIGINT)")
            with contextlib.suppress(Exception):
                ending = await controller.stop()
        message = (f"{self._write_error}: the study was stopped so that nothing goes unrecorded; "
                   "free space (or fix the folder), then resume it")
        self.set_state(State.ERROR, message)
        self.emit(Problem(self.spec.id, message, resume_command([self.spec])))
        return SessionResult(self.spec.id, self.spec.out, False, None, ending, message)

    def _hold_lock(self) -> StudyLock:
        """The study's lock, claimed now if this session does not hold it yet (attached, or after a kill).

        The previous keeper of this very study may still be letting go of it
        (its controller was just killed): that is waited for, briefly.  Any
        other holder is another study with this id, and the launch is refused.
        """
        if self.lock is None or not self.lock.held:
            identity = studylock.engine_identity(self.backend, self.runtime)
            prefix = str(self.research.get("containerPrefix", "inforsi"))
            self.lock = studylock.claim(
                self.spec.id, self.spec.out, identity, prefix, wait_for_own=studylock.OWN_KEEPER_WAIT
            )
        return self.lock

    async def _finish(self, ending: Ending | None) -> SessionResult:
        self._check_windows()
        if self._closing:
            await asyncio.gather(*self._closing.values(), return_exceptions=True)
        finished = ending is not None and ending.code == 0
        out = self.spec.out
        tail_issues = self._tail.finish()
        if tail_issues:
            self._note_issues(tail_issues)
        # Each file is written only if it is not there yet: a finish that failed half way
        # (a full disk) is completed by ``--resume`` without touching what it wrote.
        if finished and not (out / "outcome.json").exists():
            write_json(out / "outcome.json", ending.as_json())
            await self.heavy_snapshot("end")
        judgement = await asyncio.to_thread(judge, out)
        if finished:
            documents: list[tuple[str, Callable[[Path], Any]]] = [
                ("accounts.json", lambda p: write_json(p, judgement.accounts)),
                ("kill-report.json", lambda p: write_json(p, {"study": self.spec.id, "kills": judgement.kills})
                 if judgement.kills else None),
                ("report.svg", lambda p: write_text(p, table_svg(self.spec.id, judgement.checks))),
                # Last: report.json says the study is done, so it comes when everything else is.
                ("report.json", lambda p: write_json(p, judgement.report_json())),
            ]
            for name, write in documents:
                if not (out / name).exists():
                    write(out / name)
            self.set_state(State.FINISHED_OK if judgement.ok else State.FINISHED_FAIL)
        hint = None if finished else resume_command([self.spec])
        self.emit(Verdicts(self.spec.id, tuple(judgement.checks), judgement.ok, finished, hint))
        message = "" if finished else (self._kill_error or self._unfinished_message(ending))
        return SessionResult(self.spec.id, out, finished, judgement, ending, message)

    # --- states --------------------------------------------------------------
    def _unfinished_message(self, ending: Ending | None) -> str:
        if ending is None:
            return "the controller did not end"
        if ending.code == 75:
            return "exit 75: a temporary failure (serviceError)"
        if ending.code == 130:
            return "exit 130: stopped on SIGINT"
        if ending.signal:
            return f"killed by {ending.signal}"
        return f"crashed with exit {ending.code} ({last_log_line(self.spec.out / 'study.log')})"

    def _unfinished_state(self, ending: Ending | None) -> None:
        if ending is None:
            self.set_state(State.STOPPED, "not running")
        elif ending.code == 75:
            self.set_state(State.SERVICE_ERROR, "exit 75")
        elif ending.code == 130:
            self.set_state(State.STOPPED, "exit 130")
        else:
            self.set_state(State.CRASHED, self._unfinished_message(ending))

    def _after_kill_state(self) -> None:
        self.set_state(State.RUNNING, f"pid {self.controller.pid if self.controller else '?'}")

    def enter_killed(self, number: int) -> None:
        self.set_state(State.KILLED, f"kill {number}: waiting for resume")

    async def resume_requested(self) -> bool:
        """Wait for :meth:`resume` (True) or :meth:`close` (False)."""
        await self._resume_event.wait()
        self._resume_event.clear()
        return not self._close_event.is_set()

    # --- the ledger ----------------------------------------------------------
    def _watch_folders(self) -> None:
        # OUT is watched only for OUT/study to appear: the engine's own writes
        # there (timeline, kills) must not wake the ledger reader.
        self._notifier.watch(self.spec.out, IN_CREATE | IN_MOVED_TO)
        self._notifier.watch(self.spec.study_dir)

    async def _pump(self) -> None:
        try:
            await self._pump_records()
        except EvidenceWriteError as exc:
            self._note_write_error(exc)

    def _note_write_error(self, exc: EvidenceWriteError) -> None:
        """Remember the first failed evidence write and wake the session, which stops the study."""
        if self._write_error is None:
            self._write_error = exc
            self._write_failed.set()

    async def _pump_records(self) -> None:
        while self._pumping:
            if self._tail.behind:
                # A burst is read a slice per wake-up, so that another study's
                # trigger never waits behind this one's backlog.  A timer, not
                # sleep(0): that would put this session back at the head of the
                # loop's queue, ahead of a woken armed study (measured: up to 3
                # slices of wait, against about one).
                await asyncio.sleep(1e-6)
            else:
                woke = await self._notifier.wait_async(SAFETY_WAKE if self._notifier.active else NO_NOTICE_POLL)
                if woke and not self.armed and self._killing is None:
                    # Nothing to react to: let a burst of appends gather, so a busy
                    # ledger costs a read and an event per interval, not per line.
                    # Armed, the trigger is read at once.
                    await asyncio.sleep(GATHER)
                self._watch_folders()
            self.drain(READ_SLICE)

    async def _catch_up_existing(self) -> None:
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
            size = self.spec.ledger.stat().st_size
        except FileNotFoundError:
            size = 0
        if size > 4 * PREVIEW_BYTES:
            preview, preview_end = await asyncio.to_thread(read_last_records, self.spec.ledger, PREVIEW_BYTES)
            if preview:
                self.emit(RecordsSeen(self.spec.id, tuple(preview), skipped=max(0, preview[0].seq - 1)))
        shown, issues, total = await asyncio.to_thread(self._catch_up_work)
        if not total and not issues:
            return
        self._note_issues(issues)
        if preview:
            shown = [r for r in shown if r.offset >= preview_end]
        purposes = tuple((a.run, str(a.purpose or "")) for a in self.accounts.runs.values() if a.plan is not None)
        self.emit(RecordsSeen(self.spec.id, tuple(shown), tuple(issues[:MAX_ISSUES_KEPT]),
                              skipped=0 if preview else total - len(shown), purposes=purposes))
        self._progress()

    def _catch_up_work(self) -> tuple[list[Record], list[LedgerIssue], int]:
        last = last_timeline_seq(self.spec.out / "timeline.jsonl")
        shown: collections.deque[Record] = collections.deque(maxlen=SHOWN_ON_CATCH_UP)
        issues: list[LedgerIssue] = []
        total = 0
        seen = time.time()
        # Parsed records are short-lived garbage here; the cyclic collector
        # would only re-scan them (it cost more than the parsing).
        collecting = gc.isenabled()
        gc.disable()
        try:
            for records, chunk_issues in self._tail.read_chunks():
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

    def _write_timeline(self, records: list[Record], seen: float) -> None:
        if self._timeline_fd < 0:
            return
        seen_at = rfc3339_ms(seen)
        for r in records:
            # One line per write keeps each append whole even if the console dies mid-batch.
            line = {"seq": r.seq, "kind": r.kind, "at": r.at, "seenAt": seen_at}
            append_line_fd(self._timeline_fd, self._timeline_path, (json.dumps(line, ensure_ascii=False) + "\n").encode())

    def drain(self, max_bytes: int | None = None) -> None:
        """Read what is new in the ledger (at most about ``max_bytes``); react, record, report.

        Synchronous on purpose: the trigger is acted on before anything is
        written or emitted.  The controller is frozen in this wake-up and,
        when its group is already stopped (the usual case), the ledger is read
        to its end and the thread that inspects and sends SIGKILL started.
        """
        records, issues = self._tail.read_new(max_bytes)
        if not records and not issues:
            return
        seen = time.time()
        for r in records:
            self.accounts.add(r)
        if self._check_trigger(seen):
            # Reported once SIGKILL is sent: until then the loop stays idle, so the
            # inspecting thread has the interpreter to itself.
            self._frozen_reads.insert(0, (records, issues, seen))
            return
        self._record(records, issues, seen)

    async def _drain_all(self) -> None:
        """Read the ledger to its end, a slice per wake-up (a study may end in the middle of a burst)."""
        self.drain(READ_SLICE)
        while self._tail.behind:
            await asyncio.sleep(1e-6)
            self.drain(READ_SLICE)

    def _record(self, records: list[Record], issues: list[LedgerIssue], seen: float) -> None:
        self._write_timeline(records, seen)
        if records and self.state == State.RESUMING:
            self.set_state(State.RUNNING, f"pid {self.controller.pid if self.controller else '?'}")
        self._note_issues(issues)
        self.emit(RecordsSeen(self.spec.id, tuple(records), tuple(issues)))
        self._progress()
        if self._windows and any(r.kind == "runResult" for r in records):
            self._check_windows()
        self._changed.set()

    def _note_issues(self, issues: list[LedgerIssue]) -> None:
        if issues:
            self._record_watch_faults()
        self.issue_count += len(issues)
        room = MAX_ISSUES_KEPT - len(self.issues)
        if room > 0:
            self.issues.extend(issues[:room])

    def _progress(self) -> None:
        acc = self.accounts
        self.emit(
            Progress(
                self.spec.id,
                acc.round,
                acc.stage,
                acc.balance,
                acc.budget,
                tuple((a.run, a.container) for a in acc.in_flight()),
            )
        )

    # --- the kill ------------------------------------------------------------
    def _check_trigger(self, seen: float) -> bool:
        """Begin the armed kill if its trigger is in the accounts; whether it began."""
        if not self.armed or self._killing is not None:
            return False
        if self.controller is None or self.controller.ending is not None:
            return False
        first = self.accounts.first_diagnosis
        if first is None:
            return False
        acct = self.accounts.runs[first]
        if not acct.starts:
            return False
        if acct.results:
            self._missed(first, f"{first} already had its result (seq {acct.results[0].seq}) when its start was seen")
            return False
        return self._begin_kill("auto", acct.starts[0], first, seen, True)

    def _react_now(self) -> None:
        """Check the trigger against what was read already (on arming, on attach)."""
        self._check_trigger(time.time())

    def _missed(self, run: str | None, detail: str) -> None:
        self.armed = False
        append_jsonl(self.spec.out / "arms.jsonl", {"event": "missed", "at": rfc3339_ms(), "run": run, "detail": detail})
        self.emit(ArmChanged(self.spec.id, False))
        self.kill_step(0, "missed", detail)

    def _begin_kill(self, trigger: str, record: Record | None, only: str | None, seen: float,
                    auto_resume: bool) -> bool:
        """Freeze the controller now, in this wake-up; the rest of the kill follows in a task."""
        number = killproto.next_kill_number(self.spec.out)
        kill = killproto.Kill(
            number=number,
            folder=self.spec.out / "kills" / str(number),
            trigger=trigger,
            prefix=self.prefix,
            runtime=self.runtime,
            recorder=self.recorder,
            controller=self.controller,
            trigger_seq=record.seq if record else None,
            trigger_at=record.at if record else None,
        )
        if not kill.freeze(seen):
            return False
        self._killing = kill
        try:
            kill.decide_now(self._read_frozen, self.accounts, only)
        except Exception:  # noqa: BLE001 - the task's strike sees it through (or lets the controller go)
            pass
        self._kill_task = asyncio.ensure_future(self._run_kill(kill, only, auto_resume))
        return True

    async def _run_kill(self, kill: killproto.Kill, only: str | None, auto_resume: bool) -> None:
        """Strike, capture, resume: the kill after its freeze, to the point where its window waits for results."""
        n = kill.number
        try:
            try:
                struck = await kill.strike(self._read_frozen, self.accounts, only)
            except killproto.KillAbandoned as exc:
                self._killing = None
                self._record_frozen()
                if kill.trigger == "auto":
                    self._missed(only, f"kill abandoned before SIGKILL: {exc}; the controller was let go")
                else:
                    self.kill_step(n, "abandoned", f"{exc}; the controller was let go (SIGCONT)")
                return
            if not struck:
                self._killing = None
                self._record_frozen()
                acct = self.accounts.runs.get(only or "")
                seq = acct.results[0].seq if acct and acct.results else "?"
                self._missed(only, f"{only} had its result (seq {seq}) before the kill could land")
                return
            self._record_frozen()
            self._announce(kill)
            await kill.capture(self.drain, self.spec.ledger)
            self._windows[n] = kill
            await self.heavy_snapshot("after-kill")
            self.kill_step(n, "captured", "container after the kill, machine snapshot")
            if kill.capture_error:
                self._kill_error = f"kill {n}: {kill.capture_error}; the controller was killed, not resumed"
                self.kill_step(n, "error", self._kill_error)
                self.enter_killed(n)
                return
            if not auto_resume:
                self.enter_killed(n)
                if not await self.resume_requested():
                    self.kill_step(n, "left", "closed before a resume; resume later with --resume")
                    return
            await self.relaunch(resume=True)
            self.kill_step(n, "resumed", f"pid {self.controller.pid if self.controller else '?'}")
            self._check_windows()
        except Exception as exc:  # noqa: BLE001 - the scene is kept; the session stops and says how to go on
            self._kill_error = f"kill {n}: {type(exc).__name__}: {exc}"
            self.kill_step(n, "error", self._kill_error)

    def _read_frozen(self) -> None:
        """The last read before SIGKILL: records are accounted now and reported once the signal is sent."""
        records, issues = self._tail.read_new()
        for r in records:
            self.accounts.add(r)
        if records or issues:
            self._frozen_reads.append((records, issues, time.time()))

    def _record_frozen(self) -> None:
        reads, self._frozen_reads = self._frozen_reads, []
        for records, issues, seen in reads:
            self._record(records, issues, seen)

    def _announce(self, kill: killproto.Kill) -> None:
        """Everything visible once SIGKILL was sent: arming, state, step."""
        if kill.trigger == "auto":
            self.armed = False
            append_jsonl(
                self.spec.out / "arms.jsonl",
                {"event": "fired", "at": rfc3339_ms(), "run": self.accounts.first_diagnosis, "kill": kill.number},
            )
            self.emit(ArmChanged(self.spec.id, False))
        self.set_state(State.KILLED, f"kill {kill.number} ({kill.trigger})")
        self.kill_step(kill.number, "killed", f"SIGKILL to pid {self.controller.pid if self.controller else '?'}; "
                       f"targets: {[t.run for t in kill.targets] or 'none'}")

    def _check_windows(self) -> None:
        """Close every open window whose targets all have their results."""
        for number, kill in list(self._windows.items()):
            if number not in self._closing and kill.result_seen(self.accounts):
                self._closing[number] = asyncio.ensure_future(self._close_window(kill))

    async def _close_window(self, kill: killproto.Kill) -> None:
        try:
            await kill.close()
        except Exception as exc:  # noqa: BLE001 - the window stays open; a resume continues it
            self.emit(Problem(self.spec.id, f"kill {kill.number}: the window could not be closed: {exc}"))
            return
        self._windows.pop(kill.number, None)
        self.kill_step(kill.number, "settled", "every target has its result; the window is closed")

    async def _continue_windows(self) -> None:
        """Take over the kill windows an earlier console left open (resume, attach)."""
        folders = killproto.open_windows(self.spec.out)
        if not folders:
            return
        await asyncio.to_thread(self.recorder.wait_live, 10.0)
        for folder in folders:
            try:
                kill = killproto.Kill.reopen(folder, self.prefix, self.runtime, self.recorder)
                if not self.attach_at_start:
                    # A resume: nothing of the study runs yet, so a capture cut short is finished truly now.
                    written = await kill.complete_capture(self.spec.ledger)
                    if written:
                        self.kill_step(kill.number, "captured", f"completed before the resume: {', '.join(written)}")
                await asyncio.to_thread(kill.continue_recording)
            except Exception as exc:  # noqa: BLE001 - that kill's checks will say what is missing
                self.emit(Problem(self.spec.id, f"kill {folder.name}: cannot continue its window: {exc}"))
                continue
            self._windows[kill.number] = kill
            self.kill_step(kill.number, "continued", "window still open: recording its container events again")
        self._check_windows()

    def _record_watch_faults(self) -> None:
        """Each truncation or replacement of the ledger seen while watched is written down, so ``report`` sees it too."""
        faults = self._tail.faults
        while self._watch_faults_recorded < len(faults):
            line = dict(faults[self._watch_faults_recorded])
            line["at"] = rfc3339_ms()
            append_jsonl(self.spec.out / "ledger-watch.jsonl", line)
            self._watch_faults_recorded += 1

    # --- containers and the machine -----------------------------------------
    def _stream_containers(self) -> None:
        try:
            runtime = open_runtime(self.backend)
            for inspect in runtime.list(self.prefix):
                name = str(inspect.get("Name", "")).lstrip("/")
                state = inspect.get("State") or {}
                code = state.get("ExitCode") if state.get("Status") in ("exited", "dead") else None
                self._post(ContainerChanged(self.spec.id, name, "exists", inspect, str(state.get("Status", "")), code))
            try:
                runtime.stream(
                    lambda e: self._on_container_event(runtime, e),
                    self._stream_stop,
                    on_live=self.recorder.on_live,
                    on_gap=self.recorder.on_gap,
                )
            finally:
                _close_runtime(runtime)
        except Exception as exc:  # noqa: BLE001 - the console goes on without the live list
            self.recorder.on_down(time.time())
            self._post(Problem(self.spec.id, f"container event stream stopped: {exc}"))

    def _on_container_event(self, runtime: Runtime, event: dict[str, Any]) -> None:
        self.recorder.on_event(event)
        name = str(((event.get("Actor") or {}).get("Attributes") or {}).get("name", "")).lstrip("/")
        if not name.startswith(self.prefix):
            return
        action = str(event.get("Action") or event.get("status") or "").split(":", 1)[0]
        if action not in ("create", "start", "die", "destroy", "kill", "stop", "pause", "unpause", "restart"):
            return
        inspect = None if action == "destroy" else runtime.inspect(name)
        code: int | None = None
        if action == "die":
            try:
                code = int(((event.get("Actor") or {}).get("Attributes") or {}).get("exitCode"))
            except (TypeError, ValueError):
                code = None
        status = _STATUS_AFTER.get(action) or str(((inspect or {}).get("State") or {}).get("Status", action))
        self._post(ContainerChanged(self.spec.id, name, action, inspect, status, code))

    def _post(self, event: StudyEvent) -> None:
        loop = self._loop
        if loop is not None and not loop.is_closed():
            loop.call_soon_threadsafe(self._on_posted, event)

    def _on_posted(self, event: StudyEvent) -> None:
        if isinstance(event, ContainerChanged):
            if event.inspect is None:
                self.containers.pop(event.name, None)
            else:
                self.containers[event.name] = event.inspect
        self.emit(event)

    async def heavy_snapshot(self, label: str) -> None:
        containers = await asyncio.to_thread(self.runtime.list, self.prefix)
        controller = self.controller
        own = controller.pid if controller is not None and controller.ending is None else None
        try:
            snap = await asyncio.to_thread(heavy_snapshot, label, containers, own)
        except Exception as exc:  # noqa: BLE001 - a snapshot that failed is recorded as such, never fatal
            snap = {"label": label, "containers": containers, "error": f"{type(exc).__name__}: {exc}"}
        append_jsonl(self.spec.out / "machine.jsonl", snap)

    def tree_cpu(self, children: dict[int, list[int]]) -> float:
        """The controller's process-tree CPU since the last call (called from the sampler's thread)."""
        controller = self.controller
        pid = controller.pid if controller is not None and controller.ending is None else None
        return self._tree.percent(pid, children)

    def on_sample(self, sample: dict[str, Any], tree_cpu: float) -> None:
        """A light machine sample from the supervisor's sampler."""
        self._samples += 1
        if self._samples % WRITE_EVERY == 1 and self._write_error is None:
            try:
                append_jsonl(self.spec.out / "machine.jsonl", sample)
            except EvidenceWriteError as exc:
                self._note_write_error(exc)
        self.emit(Sample(self.spec.id, sample, tree_cpu))


_STATUS_AFTER = {
    "create": "created",
    "start": "running",
    "restart": "running",
    "unpause": "running",
    "pause": "paused",
    "die": "exited",
    "destroy": "removed",
}


def _close_runtime(runtime: Runtime) -> None:
    """Let go of a runtime's connections (a Docker client's sockets); runtimes without any have no ``close``."""
    close = getattr(runtime, "close", None)
    if close is not None:
        with contextlib.suppress(Exception):
            close()
