"""The kill protocol: freeze, confirm, capture, SIGKILL, capture, resume, record the window.

A :class:`Kill` is one kill of a study's controller, armed ("at the first
diagnosis start") or manual ("now").  The session that owns the study drives
it through its phases and gives it only what it needs: the controller, the
runtime, the event recorder, a function that reads the ledger, and the
accounts.  It knows nothing of the session.

1. :meth:`Kill.freeze` sends SIGSTOP to the controller's process group, in
   the very wake-up that read the trigger.
2. :meth:`Kill.strike` confirms that every process of the group has stopped
   (SIGSTOP lands asynchronously), reads the ledger to its end, takes the
   targets (every run started and without a result), inspects their
   containers in a thread, and sends SIGKILL.  Nothing in it blocks the event
   loop and it is bounded: the controller is never frozen for more than
   :data:`FREEZE_LIMIT`.  Whatever fails, the controller is never left
   stopped: once the targets are known the kill is decided and SIGKILL is
   sent anyway (the failure is recorded as ``captureError``); before that,
   it is let go with SIGCONT and the kill is abandoned.
3. :meth:`Kill.capture` writes ``kill.json`` and the first snapshot, starts
   the live recording of container events, waits until no process of the
   group is left, and records the ledger and the containers after the kill.
4. :meth:`Kill.before_resume` records the containers just before the resume.
5. :meth:`Kill.result_seen` is told of each target's result; once every
   target has one, :meth:`Kill.close` saves the runtime's events for the
   window and ``container-events-window.json``.  A window whose targets lack
   a result when the console leaves stays open; :meth:`Kill.reopen`
   continues it in the next console.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import json
import os
import queue
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from studymon.engine.contract.accounts import Accounts, RunAccount, round_key, story_end
from studymon.engine.contract.folder import EvidenceFolder, KillFolder
from studymon.engine.contract.ledger import iter_records
from studymon.engine.contract.targets import CHARGED, UNRECORDED, UNSETTLED
from studymon.engine.evidence.records import (
    KillRecord,
    KillTarget,
    TimelineLine,
    WindowRecord,
    parse_kill,
    parse_timeline,
    started,
)
from studymon.engine.evidence.writer import read_json, write_json, write_json_list, write_text
from studymon.engine.kill.recording import SEAM, EventRecorder, last_seen
from studymon.engine.launch.launcher import Controller
from studymon.engine.runtimes import Runtime

# The longest the controller stays frozen before SIGKILL, whatever happens.
FREEZE_LIMIT = 2.5
# Of that, what confirming the stop may use; the rest is for the inspects.  The
# confirmation takes about 0.1 ms, but a stopped task only shows T once it is
# scheduled, or once it is out of an uninterruptible wait (a page fault, an
# exec): on a starved machine that was seen to take longer than 300 ms, and a
# kill whose stop was never confirmed has evidence that cannot be trusted (a
# sound study fails killEvidence).  So the wait is long; it is only ever used
# up on such a machine.
CONFIRM_LIMIT = 2.0
# How long the wake-up that decided the kill waits for the strike thread before
# it goes back to the loop.  The wait lets go of the GIL, so the thread inspects
# and sends SIGKILL at once instead of contending with the loop's next slice.
# An inspect that takes longer (a slow Docker engine) goes on in the thread
# under FREEZE_LIMIT; the loop is never held longer than this.
STRIKE_WAIT = 0.002
# How long the wake-up that froze waits in place for the group to show stopped before it
# hands over to the loop.  SIGSTOP takes effect a moment later on a task running on the
# other core; handed over, the kill waits behind whatever the loop does next (a frame of
# the console, 10-16 ms, was measured), so a few checks here are cheaper than that.
STOP_WAIT = 0.003
STOP_WAIT_EXACT = 0.02  # a held write's thread stops after a round trip to the study's file system
STOP_POLL = 0.0001
# How long the killed group may take to be gone before the resume is refused.
GROUP_GONE_LIMIT = 30.0


# Why a point's moment has passed, asked once the ledger is read under the freeze (None: it has not).
Passed = Callable[[], "str | None"]


class KillAbandoned(RuntimeError):
    """The kill could not be made; the controller was let go (SIGCONT)."""


# The runs planned but not started whose containers a kill looks for (after SIGKILL), at most, and how long
# that may take.
WAITING_LOOKED_AT = 64
WAITING_LIMIT = 10.0


def targets_now(accounts: Accounts) -> tuple[list[KillTarget], list[RunAccount]]:
    """What the kill leaves unfinished (contract §7): the targets the ledger shows, and the runs planned but not
    started, whose containers may have been started already (unrecorded targets)."""
    targets: list[KillTarget] = []
    waiting: list[RunAccount] = []
    for a in accounts.runs.values():
        plan_seq = a.plan.seq if a.plan else None
        if a.starts:
            if not a.results:
                targets.append(KillTarget(a.run, a.cell, a.round, plan_seq, a.starts[-1].seq, a.container))
            elif a.purpose == "diagnosis" and round_key(a.round) not in accounts.settlements:
                targets.append(KillTarget(a.run, a.cell, a.round, plan_seq, a.starts[-1].seq, a.container, UNSETTLED))
        elif a.plan is not None and not a.results and len(waiting) < WAITING_LOOKED_AT:
            waiting.append(a)
    return targets, waiting


@dataclass
class Kill:
    """One kill, from the freeze until its window closes."""

    number: int
    folder: KillFolder
    trigger: str  # "auto" or "manual"
    stem: str
    runtime: Runtime
    recorder: EventRecorder
    controller: Controller | None = None
    trigger_seq: int | None = None
    trigger_at: str | None = None
    trigger_seen: float = 0.0
    frozen_at: float = 0.0
    since: float = 0.0  # the runtime's clock at the freeze: the window opens here
    stopped_confirmed: bool = False
    targets: list[KillTarget] = field(default_factory=list)
    before: dict[str, Any] = field(default_factory=dict)
    capture_error: str | None = None
    kill_sent: float = 0.0
    kill_returned: float = 0.0
    signalled: bool = False
    before_kill_seq: int = 0
    results: dict[str, dict[str, Any]] = field(default_factory=dict)  # run -> resultSeq, resultSeenEpoch
    closed: bool = False
    decided: bool = False  # the targets are known: from here on the kill is made whatever happens
    frozen_mono: float = 0.0
    killed_pid: int | None = None  # a window reopened by a later console: the pid its kill.json names
    point: str | None = None  # the point an automatic kill fires at
    trigger_event: dict[str, Any] | None = None  # a container point's event
    missed: str | None = None  # why the point's moment had passed under the freeze (the kill was not made)
    exact: bool = False  # the study's file system held the point's write: it could not go past it (§9.1)
    _work: asyncio.Future[dict[str, Any]] | None = field(default=None, repr=False)
    _waiting: list[RunAccount] = field(default_factory=list, repr=False)  # runs planned, not started, at the kill
    _kill_lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    # --- 1. freeze (synchronous, in the wake-up that read the trigger) ------
    def freeze(self, seen: float) -> bool:
        assert self.controller is not None
        self.trigger_seen = seen
        if not self.controller.freeze():
            return False
        # The window opens at the freeze, no later than kill.json's frozenEpoch says (contract §6.9: since <= the
        # freeze <= killSentEpoch): the runtime's clock is read first.
        self.since = self.runtime.now()
        self.frozen_at = time.time()
        self.frozen_mono = time.monotonic()
        return True

    # --- 2. strike ------------------------------------------------------------
    def decide_now(self, read_ledger: Callable[[], None], accounts: Accounts, passed: Passed | None) -> bool | None:
        """The strike's fast path, in the wake-up that froze: None unless the group is stopped within
        ``STOP_WAIT`` (``STOP_WAIT_EXACT`` when the point's write was held: its thread stops once the file system's
        reply to the release has reached it).

        Usually it is at once: then the ledger is read to its end, the targets taken
        and the inspect-then-SIGKILL thread started before this wake-up
        does anything else.  False: the point's moment had passed (``passed`` says why; missed).
        """
        assert self.controller is not None
        self.stopped_confirmed = self.controller.group_stopped()
        if not self.stopped_confirmed:
            waited_until = time.monotonic() + (STOP_WAIT_EXACT if self.exact else STOP_WAIT)
            while not self.stopped_confirmed and time.monotonic() < waited_until:
                time.sleep(STOP_POLL)  # lets go of the GIL: other threads run meanwhile
                self.stopped_confirmed = self.controller.group_stopped()
        if not self.stopped_confirmed:
            return None
        return self._decide(read_ledger, accounts, passed)

    def _decide(self, read_ledger: Callable[[], None], accounts: Accounts, passed: Passed | None) -> bool:
        assert self.controller is not None
        # Stopped, the study cannot write more; what it wrote before the freeze is read now.
        read_ledger()
        self.missed = passed() if passed is not None else None
        if self.missed is not None:
            self.controller.thaw()
            return False
        self.targets, self._waiting = targets_now(accounts)
        self.before_kill_seq = accounts.last_seq
        self.decided = True
        _hand_over_gil(True)
        names = [t.container for t in self.targets if t.container]
        # The thread that inspects sends SIGKILL as soon as it has the snapshot:
        # coming back to the event loop first would cost a GIL hand-over (up to
        # 5 ms on a busy machine).  The loop only keeps the deadline.
        work, finished = _STRIKER.submit(self._inspect_then_kill, names)
        with contextlib.suppress(queue.Empty):
            finished.get(timeout=STRIKE_WAIT)
        self._work = asyncio.wrap_future(work)
        return True

    async def strike(self, read_ledger: Callable[[], None], accounts: Accounts, passed: Passed | None) -> bool:
        """Confirm, read, inspect, SIGKILL; False when the point's moment had passed (missed).

        Picks up after :meth:`decide_now` (or does its work when the group
        was not stopped yet).  Raises :class:`KillAbandoned` when the kill
        could not be decided; the controller has been let go then.
        """
        controller = self.controller
        assert controller is not None
        deadline = self.frozen_mono + FREEZE_LIMIT
        try:
            if self.missed is not None:
                return False
            if not self.decided:
                confirm_by = self.frozen_mono + CONFIRM_LIMIT
                while not self.stopped_confirmed and time.monotonic() < confirm_by:
                    await asyncio.sleep(0)
                    self.stopped_confirmed = controller.group_stopped()
                if not self._decide(read_ledger, accounts, passed):
                    return False
            if not self.stopped_confirmed:
                why = controller.not_stopped or "?"
                self.capture_error = f"the controller's process group was not seen stopped before the last read ({why})"
            work = self._work
            assert work is not None
            names = [t.container for t in self.targets if t.container]
            try:
                self.before = await asyncio.wait_for(asyncio.shield(work), max(0.0, deadline - time.monotonic()))
            except Exception as exc:  # noqa: BLE001 - recorded; the kill goes on
                if not work.done():
                    work.add_done_callback(_retrieve)
                self.before = dict.fromkeys(names)
                reason = "timed out" if isinstance(exc, asyncio.TimeoutError) else f"{type(exc).__name__}: {exc}"
                self.capture_error = f"the containers could not be inspected while frozen ({reason})"
        except BaseException as exc:
            if not self.decided:
                controller.thaw()
                if isinstance(exc, Exception):
                    raise KillAbandoned(f"{type(exc).__name__}: {exc}") from exc
                raise
            self.capture_error = self.capture_error or f"{type(exc).__name__}: {exc}"
            self._sigkill()
            raise
        self._sigkill()
        await self._look_at_waiting()
        return True

    def _inspect_then_kill(self, names: list[str]) -> dict[str, Any]:
        """In a thread: the targets' snapshot, then SIGKILL (also when the inspect fails)."""
        try:
            return _inspect_many(self.runtime, names)
        finally:
            self._sigkill()

    async def _look_at_waiting(self) -> None:
        """After SIGKILL: the containers of the runs planned but not started; some are targets too.

        Looked at once the controller is gone, so that a study that plans many
        runs ahead is not held frozen for them: nothing of the study changes
        its containers any more.
        """
        if not self._waiting:
            return
        try:
            more = await asyncio.wait_for(asyncio.to_thread(self._classify, self._waiting), WAITING_LIMIT)
        except Exception as exc:  # noqa: BLE001 - recorded; the judge then finds what was not looked at
            reason = "timed out" if isinstance(exc, asyncio.TimeoutError) else f"{type(exc).__name__}: {exc}"
            self.capture_error = self.capture_error or f"the runs waiting to start could not be looked at ({reason})"
            return
        self.targets += more

    def _classify(self, waiting: list[RunAccount]) -> list[KillTarget]:
        """In a thread: a run planned but not started is an unrecorded target when its container was started, a
        charged one when it was charged; the snapshot of an unrecorded one joins the others."""
        more: list[KillTarget] = []
        for a in waiting:
            name = self.stem + a.run
            try:
                snap = self.runtime.inspect(name)
            except Exception as exc:  # noqa: BLE001 - recorded: the judge then cannot tell
                self.capture_error = self.capture_error or f"{name} could not be inspected after the kill: {exc}"
                snap = None
            plan_seq = a.plan.seq if a.plan else None
            if started(snap):
                self.before[name] = snap
                more.append(KillTarget(a.run, a.cell, a.round, plan_seq, None, name, UNRECORDED))
            elif a.charges:
                more.append(KillTarget(a.run, a.cell, a.round, plan_seq, None, None, CHARGED))
        return more

    def _sigkill(self) -> None:
        """SIGKILL, once: from the inspecting thread, or from the loop when that thread is late."""
        assert self.controller is not None
        with self._kill_lock:
            if self.kill_sent:
                return
            self.kill_sent = time.time()
            self.signalled = self.controller.kill()
            self.kill_returned = time.time()
        _hand_over_gil(False)

    # --- 3. capture -----------------------------------------------------------
    def kill_json(self) -> dict[str, Any]:
        return KillRecord(
            trigger=self.trigger,
            at_epoch=self.kill_sent,
            pid=self.controller.pid if self.controller else None,
            before_kill_seq=self.before_kill_seq,
            targets=self.targets,
            trigger_seq=self.trigger_seq,
            signalled=self.signalled,
            since_epoch=self.since,
            prefix=self.stem,  # kill.json names the stem "prefix"
            capture_error=self.capture_error,
            group_stopped=self.stopped_confirmed,
            trigger_at=self.trigger_at,
            trigger_seen=self.trigger_seen,
            frozen=self.frozen_at,
            kill_returned=self.kill_returned,
            point=self.point,
            trigger_event=self.trigger_event,
            exact=self.exact,
        ).to_json()

    async def capture(self, read_ledger: Callable[[], None], ledger: Path) -> None:
        """Write what the strike saw, start recording, and record the scene after the kill."""
        self.folder.path.mkdir(parents=True, exist_ok=False)
        write_json(self.folder.kill_json, self.kill_json())
        write_json(self.folder.before, self.before)
        ids = {str(s.get("Id")) for s in self.before.values() if isinstance(s, dict) and s.get("Id")}
        await asyncio.to_thread(self.recorder.open, self.number, self.folder, self.since, ids, self.runtime.now())
        assert self.controller is not None
        await self.controller.wait()
        if not await self.controller.wait_group_gone(GROUP_GONE_LIMIT):
            raise RuntimeError(
                f"a process of the killed controller's group (pgid {self.controller.pid}) is still there "
                f"after {GROUP_GONE_LIMIT:.0f} s; not resuming over it"
            )
        read_ledger()
        await asyncio.to_thread(write_ledger_at_kill, self.folder, ledger)
        write_json(self.folder.after, await self._inspect())

    async def before_resume(self) -> None:
        write_json(self.folder.before_resume, await self._inspect())

    async def _inspect(self) -> dict[str, Any]:
        names = [t.container for t in self.targets if t.container]
        return await asyncio.to_thread(_inspect_many, self.runtime, names)

    # --- 5. the window ------------------------------------------------------
    def result_seen(self, accounts: Accounts) -> bool:
        """Note the records that end the targets' stories the accounts now hold: a result, or for a target that
        had its result at the kill, its round's settlement; whether every target's story has ended.

        Each is stamped with when the console saw it, as ``timeline.jsonl`` has it (the window's
        ``resultSeenEpoch`` and the timeline's ``seenAt`` are one fact, §6.9), not with when this is asked:
        that may be a resume or a later read away.  A record the timeline does not hold yet (its line could
        not be written) is noted once it does.
        """
        ends: dict[str, int] = {}
        for t in self.targets:
            if t.run not in self.results:
                seq = story_end(t.kind, t.run, t.round, accounts)
                if seq is not None:
                    ends[t.run] = seq
        if ends:
            seen = seen_in_timeline(self.timeline, set(ends.values()))
            # The window is on the runtime's clock, the timeline on the console's; the offset to the millisecond
            # the timeline is written to (zero for a local runtime).
            offset = round(self.runtime.now() - time.time(), 3)
            for run, seq in ends.items():
                if seq in seen:
                    self.results[run] = {"resultSeq": seq, "resultSeenEpoch": seen[seq] + offset}
        return self.complete

    @property
    def timeline(self) -> Path:
        """``OUT/timeline.jsonl`` (the kill's folder is ``OUT/kills/<n>``)."""
        return EvidenceFolder(self.folder.out).timeline

    @property
    def complete(self) -> bool:
        return all(t.run in self.results for t in self.targets)

    async def close(self) -> None:
        """Save the runtime's events for the window and the window itself; stop recording."""
        until = self.runtime.now()
        try:
            events = await asyncio.to_thread(self.runtime.events, self.since, until)
        finally:
            self.recorder.close(self.number)
        write_text(self.folder.readback, "".join(_line(e) for e in events))
        results = {t.run: self.results.get(t.run, {"resultSeq": None, "resultSeenEpoch": None}) for t in self.targets}
        write_json(self.folder.window, WindowRecord(self.since, until, results).to_json())
        self.closed = True

    def leave(self) -> None:
        """The console leaves with the window open: stop recording; the next console continues."""
        self.recorder.close(self.number)

    @classmethod
    def reopen(cls, folder: KillFolder, stem: str, runtime: Runtime, recorder: EventRecorder) -> Kill:
        """The kill of an open window in ``folder``, as an earlier console left it."""
        data = read_json(folder.kill_json)
        if not isinstance(data, dict):
            raise ValueError(f"{folder.kill_json} is not a JSON object")  # noqa: TRY004 - bad content, not a bad argument
        record = parse_kill(data, stem)
        kill = cls(folder.number, folder, str(record.trigger), stem, runtime, recorder)
        kill.since = record.since_epoch or 0.0
        kill.before_kill_seq = record.before_kill_seq or 0
        kill.targets = record.targets
        before_file = folder.before
        before = read_json(before_file) if before_file.is_file() else {}
        kill.before = before if isinstance(before, dict) else {}
        kill.killed_pid = record.pid
        return kill

    async def complete_capture(self, ledger: Path) -> list[str]:
        """Write what a console that died in the middle of the capture left out; the files written.

        Called before a resume, while no controller of the study runs: the
        ledger then is still the ledger at the kill, and the containers are
        still as the kill left them, so both can be recorded truly now.  Not
        when a process of the killed group is still there.
        """
        if self.killed_pid:
            try:
                os.killpg(self.killed_pid, 0)
            except ProcessLookupError:
                pass
            except PermissionError:
                return []
            else:
                return []  # the killed group is still there: its scene is not settled
        written = []
        if not self.folder.at_kill.exists():
            await asyncio.to_thread(write_ledger_at_kill, self.folder, ledger)
            written.append(KillFolder.AT_KILL)
        if not self.folder.after.exists():
            write_json(self.folder.after, await self._inspect())
            written.append(KillFolder.AFTER)
        return written

    def continue_recording(self) -> None:
        """Continue an open window's recording from where the last console stopped (in a thread)."""
        last = last_seen(self.folder.live)
        start = self.since if last is None else max(self.since, last - SEAM)
        ids = {str(s.get("Id")) for s in self.before.values() if isinstance(s, dict) and s.get("Id")}
        self.recorder.open(self.number, self.folder, start, ids, self.runtime.now())


async def after_end(
    number: int,
    folder: KillFolder,
    trigger: str,
    stem: str,
    runtime: Runtime,
    recorder: EventRecorder,
    controller: Controller,
    accounts: Accounts,
    ledger: Path,
) -> Kill | None:
    """The window of an end the console did not make (contract §7): a crash, a signal from elsewhere, exit 75, a stop.

    The controller has ended and its ledger was read to its end: what it
    left unfinished are the targets, judged as a kill's.  Their containers
    are recorded at once (before and after the end are the same moment
    now), the live recording opens where the end was seen, and the window
    waits, as a kill's does, for the resume.  None when nothing was left
    unfinished: there is nothing to judge.
    """
    kill = Kill(number, folder, trigger, stem, runtime, recorder, controller=controller)
    # In the order of a kill's own times (§6.9): the end was seen, the window opens, then the one moment that
    # stands for the freeze and the kill.
    kill.trigger_seen = time.time()
    kill.since = runtime.now()
    kill.kill_sent = kill.frozen_at = kill.kill_returned = time.time()
    kill.targets, kill._waiting = targets_now(accounts)
    kill.before_kill_seq = accounts.last_seq
    names = [t.container for t in kill.targets if t.container]
    kill.before = await asyncio.to_thread(_inspect_many, runtime, names)
    await kill._look_at_waiting()
    if not kill.targets:
        return None
    await asyncio.to_thread(folder.path.mkdir, parents=True, exist_ok=False)
    write_json(folder.kill_json, kill.kill_json())
    write_json(folder.before, kill.before)
    ids = {str(s.get("Id")) for s in kill.before.values() if isinstance(s, dict) and s.get("Id")}
    await asyncio.to_thread(recorder.open, number, folder, kill.since, ids, runtime.now())
    await asyncio.to_thread(write_ledger_at_kill, folder, ledger)
    write_json(folder.after, await kill._inspect())
    return kill


class _Strikers:
    """Threads kept for strikes, started ahead of time and woken through a ``SimpleQueue``.

    A thread made at the trigger would cost its creation on the kill's path,
    and a ``ThreadPoolExecutor`` hand-over costs two to three times the
    C-level queue's (measured here: 150 µs against 50-65 µs at p50).  A
    thread whose inspect hangs (a stuck Docker engine) is not given the next
    strike: another is started when none is idle.
    """

    def __init__(self) -> None:
        self._idle: list[queue.SimpleQueue[Any]] = []
        self._lock = threading.Lock()

    def submit(
        self, fn: Callable[..., Any], *args: Any
    ) -> tuple[concurrent.futures.Future[Any], queue.SimpleQueue[None]]:
        """Run ``fn(*args)`` in an idle strike thread: its future, and a queue that gets one item when it is done."""
        with self._lock:
            jobs = self._idle.pop() if self._idle else self._start()
        future: concurrent.futures.Future[Any] = concurrent.futures.Future()
        finished: queue.SimpleQueue[None] = queue.SimpleQueue()
        jobs.put((fn, args, future, finished))
        return future, finished

    def warm_up(self, count: int = 2) -> None:
        with self._lock:
            while len(self._idle) < count:
                self._idle.append(self._start())

    def _start(self) -> queue.SimpleQueue[Any]:
        jobs: queue.SimpleQueue[Any] = queue.SimpleQueue()
        threading.Thread(target=self._serve, args=(jobs,), name="studymon-strike", daemon=True).start()
        return jobs

    def _serve(self, jobs: queue.SimpleQueue[Any]) -> None:
        while True:
            fn, args, future, finished = jobs.get()
            try:
                result = fn(*args)
            except BaseException as exc:  # noqa: BLE001 - handed to the waiting loop
                future.set_exception(exc)
            else:
                future.set_result(result)
            finished.put(None)
            with self._lock:
                self._idle.append(jobs)


_STRIKER = _Strikers()


def warm_up() -> None:
    """Start the strike threads now (a session calls this when it starts)."""
    _STRIKER.warm_up()


# While a controller is frozen, the thread that inspects and sends SIGKILL must
# not wait for the GIL behind the event loop's other work (reporting the records
# just read, other studies): CPython hands the GIL over only every 5 ms by
# default.  For the few milliseconds of a strike it changes hands every 0.2 ms.
FROZEN_SWITCH_INTERVAL = 0.0002
_gil_lock = threading.Lock()
_gil_strikes = 0
_gil_saved = 0.005


def _hand_over_gil(striking: bool) -> None:
    # The switch interval is the interpreter's, so the strikes that lowered it are counted process-wide.
    global _gil_strikes, _gil_saved  # noqa: PLW0603
    with _gil_lock:
        if striking:
            if _gil_strikes == 0:
                _gil_saved = sys.getswitchinterval()
                sys.setswitchinterval(FROZEN_SWITCH_INTERVAL)
            _gil_strikes += 1
        elif _gil_strikes > 0:
            _gil_strikes -= 1
            if _gil_strikes == 0:
                sys.setswitchinterval(_gil_saved)


def _retrieve(future: asyncio.Future[Any]) -> None:
    """Mark a late thread's outcome as seen (it was recorded as a capture error already)."""
    if not future.cancelled():
        future.exception()


# The records that can end a target's story (see accounts.story_end): a read that brings one may close a window.
STORY_ENDS = frozenset({"runResult", "diagnosisSettlement"})
# How much of timeline.jsonl is read at a time, from its end, to find when a record was seen.
TIMELINE_BLOCK = 64 * 1024


def seen_in_timeline(path: Path, seqs: set[int]) -> dict[int, float]:
    """When a console first saw each of ``seqs``, as ``timeline.jsonl`` says (epoch seconds, the console's clock).

    Read from the end, a block at a time, until a line older than every seq
    asked for (seqs only grow in the file): a record that ends a story was
    seen lately, so this reads a block or two, not the file.
    """
    found: dict[int, float] = {}
    if not seqs:
        return found
    lowest = min(seqs)
    try:
        fh = open(path, "rb")  # noqa: SIM115 - closed below; a missing file holds nothing
    except FileNotFoundError:
        return found
    with fh:
        end = fh.seek(0, os.SEEK_END)
        cut = b""  # the start of a line the previous block began inside
        while end > 0:
            start = max(0, end - TIMELINE_BLOCK)
            fh.seek(start)
            lines = (fh.read(end - start) + cut).split(b"\n")
            end = start
            cut = lines.pop(0) if start > 0 else b""
            for raw in reversed(lines):
                line = _timeline_line(raw)
                if line is None:
                    continue
                if line.seq in seqs:
                    found[line.seq] = line.seen_at  # read backwards: the last one kept is the first seen
                if line.seq < lowest:
                    return found
    return found


def _timeline_line(raw: bytes) -> TimelineLine | None:
    if not raw.strip():
        return None
    try:
        line = parse_timeline(json.loads(raw))
    except ValueError:
        return None  # a torn last line
    return None if isinstance(line, str) else line


def _inspect_many(runtime: Runtime, names: list[str]) -> dict[str, Any]:
    return {name: runtime.inspect(name) for name in names}


def write_ledger_at_kill(folder: KillFolder, ledger: Path) -> None:
    """``ledger-at-kill.json``: every record of ``ledger`` as it stands, published whole.

    Written record by record, in a thread: a long ledger built as one list
    (and one text) took its size several times in memory, and the collections
    its objects set off held the event loop (measured: 279 000 tracked objects
    for 100 000 records, full collections of 50-125 ms).
    """
    write_json_list(folder.at_kill, (r.as_json() for r in iter_records(ledger)))


def _line(event: dict[str, Any]) -> str:
    return json.dumps(event, ensure_ascii=False) + "\n"
