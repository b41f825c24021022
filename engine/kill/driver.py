"""The study's side of its kills: the arming, the trigger, and each kill driven through its phases.

A :class:`KillDriver` keeps a study's arming (``arms.jsonl``), checks the
armed trigger on every read of the ledger, and drives each
:class:`~studymon.engine.kill.protocol.Kill` from its freeze to its window: freeze in
the very wake-up that read the trigger, then strike, capture and resume in a
task, then close the window once every target has its result.  Windows an
earlier console left open are taken over on resume and attach.

The kill protocol itself is :mod:`studymon.engine.kill.protocol`.  The driver speaks
to the study through :class:`KillHost` (its controller, its events, a
snapshot, a relaunch), and reads the ledger through the
:class:`~studymon.engine.kill.reads.LedgerReads` it shares with the pump
(under a freeze, the reads are held there until the kill lets them go); it
never calls the pump.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import time
from typing import Any, Protocol

from studymon.engine.contract.accounts import Accounts
from studymon.engine.contract.exits import STOPPED
from studymon.engine.contract.killpoint import ACTIONS, AFTER, CONTAINER, SEED, ArmedPoint, KillPoint, point_text
from studymon.engine.contract.ledger import Record
from studymon.engine.contract.rules import RUN_KINDS
from studymon.engine.contract.spec import StudySpec
from studymon.engine.events import ArmChanged, KillStep, Problem, State, StudyEvent
from studymon.engine.evidence.records import ArmLine
from studymon.engine.evidence.writer import append_jsonl, read_jsonl
from studymon.engine.fs.mount import MountLink
from studymon.engine.io.loopcall import LoopCall
from studymon.engine.kill import protocol as killproto
from studymon.engine.kill.protocol import Passed
from studymon.engine.kill.reads import LedgerReads
from studymon.engine.kill.recording import EventRecorder, event_name, event_time
from studymon.engine.launch.launcher import Controller, ControllerEnd
from studymon.engine.runtimes import Runtime

# The distinct moments (kind or action, and purpose) a study's console offers as points, at most.
MOMENTS_KEPT = 64


class KillHost(Protocol):
    """What the driver needs of the study whose controller it kills (a :class:`StudySession` is one)."""

    controller: Controller | None
    launching: bool  # a controller is being started: its first records may be read before its pid is known

    def emit(self, event: StudyEvent) -> None: ...

    def set_state(self, state: State, detail: str = "") -> None: ...

    async def heavy_snapshot(self, label: str) -> None: ...

    async def relaunch(self, resume: bool) -> None: ...

    async def resume_requested(self) -> bool: ...


class KillDriver:
    """One study's arming and kills, from the trigger to each kill's closed window."""

    def __init__(
        self,
        host: KillHost,
        reads: LedgerReads,
        spec: StudySpec,
        *,
        stem: str,
        runtime: Runtime,
        trace: bool = False,
    ) -> None:
        """The driver records the study's container events (:attr:`recorder`, told of each as it arrives; with
        ``trace``, every one in the folder's trace as well)."""
        self.host = host
        self.reads = reads
        self.spec = spec
        self.stem = stem
        self.runtime = runtime
        self.recorder = EventRecorder(
            stem, runtime.history, spec.id, listener=self.event_seen, trace=spec.folder.trace if trace else None
        )
        self.accounts: Accounts = reads.accounts
        self.points: list[ArmedPoint] = []  # armed, in order; the first counts its moments
        self._live = False  # the session reads the ledger live: the first point counts
        self._loop: LoopCall | None = None
        self._due: tuple[Record, str | None, float] | None = None  # a moment seen mid-kill, or before the pid was known
        self._killed: set[int] = set()  # the pids this console's kills ended
        # The moments the study has shown so far, as points (the console offers them to arm): kinds of record with
        # their purpose, and container actions.  Bounded: a study has a few kinds and purposes.
        self._moments: dict[str, None] = {}
        self.killing: killproto.Kill | None = None  # from the freeze until the kill has been seen through
        self.error: str | None = None  # a kill that could not be seen through: the session stops
        self.windows: dict[int, killproto.Kill] = {}  # kills whose window is open
        self._task: asyncio.Task[None] | None = None
        self._closing: dict[int, asyncio.Task[None]] = {}
        # The study's file system, where its controller has one: an after: point is armed there too, and held.
        self.mount = MountLink(spec.folder.study)

    def _step(self, number: int, step: str, detail: str = "", point: KillPoint | str | None = None) -> None:
        self.host.emit(KillStep(self.spec.id, number, step, detail, time.time(), str(point) if point else None))

    # --- arming ----------------------------------------------------------------
    @property
    def armed(self) -> bool:
        """Whether a point is armed."""
        return bool(self.points)

    @property
    def point(self) -> KillPoint | None:
        """The point counting now (the first armed one), if any."""
        return self.points[0].point if self.points else None

    def arm(self, on: bool = True, point: KillPoint | None = None) -> None:
        """Arm one more point (the seed's by default), after those armed already; or disarm every point.

        Recorded in ``arms.jsonl``.  A point counts its moments from when it
        becomes the current one: now, or once the points before it fired.
        """
        folder = self.spec.folder
        if not on:
            if not self.points:
                return
            self.points.clear()
            self.mount.ask("disarm")
            append_jsonl(folder.arms, ArmLine("disarm", time.time()).to_json())
            self._announce_arming()
            return
        entry = ArmedPoint(point or SEED)
        self.points.append(entry)
        append_jsonl(folder.arms, ArmLine("arm", time.time(), point=str(entry.point)).to_json())
        self._begin_counting()
        self._announce_arming()

    def restore_arming(self) -> None:
        """An attached or resumed session keeps the points that have neither fired nor been missed.

        A line without a point is the seed's (an older console's).  The
        restored first point counts afresh from where this console starts
        reading live.
        """
        points: list[KillPoint] = []
        for line in read_jsonl(self.spec.folder.arms):
            event = line.get("event")
            if event == "arm":
                named = point_text(line.get("point"))
                points.append(named if named is not None else SEED)
            elif event == "disarm":
                points.clear()
            elif event in ("fired", "missed") and points:
                points.pop(0)
        self.points = [ArmedPoint(p) for p in points]
        if self.points:
            self._announce_arming()

    def start_counting(self) -> None:
        """The session reads the ledger live from here on: the first point begins to count (idempotent)."""
        self._live = True
        with contextlib.suppress(RuntimeError):  # no loop: a point counts records only
            self._loop = LoopCall()
        self._begin_counting()

    def _begin_counting(self) -> None:
        if self._live and self.points and not self.points[0].current:
            self.points[0].begin(self.accounts.last_seq, self.runtime.now())
            self._hold_in_mount()

    def _exact(self) -> bool:
        """Whether the running controller writes through the study's file system (its points can be held)."""
        controller = self.host.controller
        return controller is not None and controller.exact and controller.ending is None

    def _hold_in_mount(self) -> None:
        """The current after: point, armed in the running controller's file system too.  Not while a kill or a
        launch is under way: the next controller's keeper arms it (:meth:`hold_at_launch`) before it starts."""
        if self.killing is None and not self.host.launching and self._exact():
            hold = self.hold_at_launch()
            if hold is not None:
                self.mount.ask("hold", point=hold[0], fromSeq=hold[1])

    def hold_at_launch(self) -> tuple[str, int] | None:
        """The current ``after:`` point and the seq it counts from, for the file system of a controller about to
        start (None: no such point)."""
        entry = self.points[0] if self.points else None
        if entry is None or entry.from_seq is None or not entry.point.on_record:
            return None
        return str(entry.point), entry.from_seq

    def _announce_arming(self) -> None:
        waiting = tuple(str(p.point) for p in self.points[1:])
        self.host.emit(ArmChanged(self.spec.id, self.armed, str(self.point) if self.point else None, waiting))

    def _done_with_point(self, event: str, run: str | None, kill: int | None = None, detail: str | None = None) -> None:
        """The current point fired (``event`` "fired") or was missed: say so; the next point counts from now."""
        entry = self.points.pop(0)
        if event != "fired":  # a held write is let go whole; a fired one was released, cut, by its kill
            self.mount.ask("disarm")
        line = ArmLine(event, time.time(), kill=kill, run=run, detail=detail, point=str(entry.point))
        line = dataclasses.replace(line, from_seq=entry.from_seq)
        append_jsonl(self.spec.folder.arms, line.to_json())
        self._begin_counting()
        self._announce_arming()

    def _missed(self, run: str | None, detail: str) -> None:
        point = self.point
        self._done_with_point("missed", run, detail=detail)
        self._step(0, "missed", f"{point}: {detail}", point)

    # --- the trigger -------------------------------------------------------------
    def reads_at_once(self) -> bool:
        """Armed, or a kill under way: a wake-up's appends are read at once, not gathered."""
        return self.armed or self.killing is not None

    def _purpose(self, run: object) -> str | None:
        acct = self.accounts.runs.get(run) if isinstance(run, str) else None
        purpose = acct.purpose if acct is not None else None
        return purpose if isinstance(purpose, str) else None

    def check_trigger(self, records: list[Record], seen: float) -> bool:
        """Count the records just read against the current ``after:`` point; begin its kill at its moment.

        Whether a kill began.  The moment has passed (missed) when a record
        after it was read with it: the study went on before it could be seen.
        Records read while a kill is under way count too (the resumed
        controller may write before the kill is seen through): a moment among
        them waits for that kill's resume.
        """
        if not self.points:
            return False
        entry = self.points[0]
        if not entry.current or not entry.point.on_record:
            return False
        for i, r in enumerate(records):
            run = r.content.get("run")
            if not entry.count(r.kind, self._purpose(run), seq=r.seq):
                continue
            run_id = run if isinstance(run, str) else None
            if i + 1 < len(records):
                self._missed(run_id, f"seq {r.seq} was followed by seq {records[i + 1].seq} before it was seen")
                return False
            if self.killing is not None or self.host.launching:
                # The resumed controller's record before the kill is seen through, or a new controller's
                # before its keeper has handed over its pid (the study writes at once; the pid comes on a
                # pipe the loop reads after the ledger's wake-up): reacted to once it is known.
                self._due = (r, run_id, seen)
                return False
            return self._fire_at(r, run_id, seen)
        return False

    def launched(self) -> None:
        """The controller just started is known: a moment read while it was being started is reacted to now (a
        resume's waits for its kill to be seen through, as before)."""
        if self.killing is None:
            self._fire_due()

    def _fire_due(self) -> None:
        """React to the moment kept while a kill was under way or a controller was being started, if any."""
        due, self._due = self._due, None
        if due is not None:
            self._fire_at(*due)

    def _fire_at(self, r: Record, run: str | None, seen: float) -> bool:
        """Begin the kill at record ``r``, the current point's moment (or say why it is missed)."""
        trigger_seq = r.seq
        controller = self.host.controller
        if controller is None or controller.ending is not None:
            self._missed(run, f"seq {trigger_seq} was seen while no controller ran")
            return False

        def passed() -> str | None:
            last = self.accounts.last_seq
            return None if last <= trigger_seq else f"seq {last} was written after seq {trigger_seq} before the freeze"

        why = passed()
        if why is not None:
            self._missed(run, why.replace("before the freeze", "before it could be reacted to"))
            return False
        return self._begin("auto", r, run, seen, True, passed)

    # --- container points (the runtime's event stream) ---------------------------
    def event_seen(self, event: dict[str, Any], seen: float) -> None:
        """From the stream's thread: a container event of the study, seen at ``seen`` (its recorded lines' seenAt);
        a container point's moment is reacted to in the event loop at once."""
        action = event.get("Action") or event.get("status")
        if action not in ACTIONS or self._loop is None:
            return
        if len(self._moments) < MOMENTS_KEPT:
            name = event_name(event)
            self._loop.soon(self._moment, CONTAINER, action, name[len(self.stem) :])
        if not self.points or self.points[0].point.on_record:
            return
        self._loop.soon(self._container_moment, event, seen)

    def _container_moment(self, event: dict[str, Any], seen: float) -> None:
        if not self.points or self.killing is not None:
            return
        entry = self.points[0]
        if not entry.current or entry.point.on_record:
            return
        # What the study wrote before the event was seen is read first: the run's plan (its purpose) among it.
        self.reads.read_aside(self.check_trigger)
        if self._busy():
            return
        name = event_name(event)
        run = name[len(self.stem) :] if name.startswith(self.stem) else None
        action = str(event.get("Action") or event.get("status"))
        if not entry.count(action, self._purpose(run), at=event_time(event)):
            return
        controller = self.host.controller
        if controller is None or controller.ending is not None:
            self._missed(run, f"the {action} of {name} was seen after the controller had ended")
            return
        next_kind = "runResult" if action == "die" else "runStarted"

        def passed() -> str | None:
            acct = self.accounts.runs.get(run) if run is not None else None
            done = (acct.results if action == "die" else acct.starts) if acct is not None else []
            return None if not done else f"{run}'s {next_kind} (seq {done[0].seq}) was written before the freeze"

        why = passed()
        if why is not None:
            self._missed(run, f"the {action} of {name}: {why.replace('before the freeze', 'when it was seen')}")
            return
        self._begin("auto", None, run, seen, True, passed, event)

    def _moment(self, source: str, what: str, run: object) -> None:
        purpose = self._purpose(run)
        text = f"{source}:{what}" + (f"/{purpose}" if purpose and (source == CONTAINER or what in RUN_KINDS) else "")
        if text not in self._moments and len(self._moments) < MOMENTS_KEPT:
            self._moments[text] = None

    def moments(self) -> list[str]:
        """The points this study has shown a moment of so far, in the order first seen (each a valid point)."""
        return [text for text in self._moments if point_text(text) is not None]

    def kill_now(self, auto_resume: bool) -> bool:
        """Kill the controller now; targets are the runs in flight.  False if it is not running."""
        controller = self.host.controller
        if self._busy() or controller is None or controller.ending is not None:
            return False
        self.reads.read_aside(self.check_trigger)
        if self._busy():  # the armed trigger was among what was just read: that kill goes first
            return False
        return self._begin("manual", None, None, time.time(), auto_resume)

    def _busy(self) -> bool:
        return self.killing is not None

    # --- one kill ----------------------------------------------------------------
    def _begin(
        self,
        trigger: str,
        record: Record | None,
        run: str | None,
        seen: float,
        auto_resume: bool,
        passed: Passed | None = None,
        event: dict[str, Any] | None = None,
    ) -> bool:
        """Freeze the controller now, in this wake-up; the rest of the kill follows in a task.

        ``passed`` says, once the ledger is read to its end under the freeze,
        why the point's moment has passed (the kill is then missed and the
        controller let go); ``run`` is the run the point's moment belongs to.
        """
        folder = self.spec.folder.next_kill()
        kill = killproto.Kill(
            number=folder.number,
            folder=folder,
            trigger=trigger,
            stem=self.stem,
            runtime=self.runtime,
            recorder=self.recorder,
            controller=self.host.controller,
            trigger_seq=record.seq if record else None,
            trigger_at=record.at if record else None,
            point=str(self.point) if trigger == "auto" and self.point else None,
            trigger_event=event,
        )
        exact = trigger == "auto" and self._exact()
        if not kill.freeze(seen):
            return False
        if exact and record is not None:
            # Frozen: the write held at the point's record may return now (cut there); the thread that made it
            # stops on its way back, with every other thread of the group.
            said = self.mount.ask("release", landRest=False) or {}
            kill.exact = said.get("released") is True and said.get("seq", record.seq) == record.seq
        self.reads.freeze()
        self.killing = kill
        if kill.controller is not None:
            self._killed.add(kill.controller.pid)
        # A failure here is seen through by the task's strike (or lets the controller go).  A plain
        # try, not contextlib.suppress: this runs between the freeze and SIGKILL.
        try:  # noqa: SIM105
            kill.decide_now(self.reads.read_frozen, self.accounts, passed)
        except Exception:  # noqa: BLE001, S110
            pass
        self._task = asyncio.ensure_future(self._run(kill, run, auto_resume, passed))
        return True

    async def _run(self, kill: killproto.Kill, run: str | None, auto_resume: bool, passed: Passed | None) -> None:
        """Strike, capture, resume: the kill after its freeze, to the point where its window waits for results."""
        n = kill.number
        host = self.host
        try:
            try:
                struck = await kill.strike(self.reads.read_frozen, self.accounts, passed)
            except killproto.KillAbandoned as exc:
                self.killing = None
                self.reads.thaw()
                if kill.trigger == "auto":
                    self._missed(run, f"kill abandoned before SIGKILL: {exc}; the controller was let go")
                else:
                    self._step(n, "abandoned", f"{exc}; the controller was let go (SIGCONT)")
                return
            if not struck:
                self.killing = None
                self.reads.thaw()
                self._missed(run, f"{kill.missed or 'the moment passed'}; the controller was let go")
                return
            self._announce(kill, run)
            self.reads.thaw()
            await kill.capture(lambda: self.reads.read_aside(self.check_trigger), self.spec.folder.ledger)
            self.windows[n] = kill
            await host.heavy_snapshot("after-kill")
            self._step(n, "captured", "container after the kill, machine snapshot")
            if kill.capture_error:
                self.error = f"kill {n}: {kill.capture_error}; the controller was killed, not resumed"
                self._step(n, "error", self.error)
                self._wait_for_resume(n)
                return
            if not auto_resume:
                self._wait_for_resume(n)
                if not await host.resume_requested():
                    self._step(n, "left", "closed before a resume; resume later with --resume")
                    return
            await host.relaunch(resume=True)
            self._step(n, "resumed", f"pid {host.controller.pid if host.controller else '?'}")
            self.killing = None  # the next point's kill may begin: it hits the resumed controller
            self.check_windows()
            self._fire_due()
        except Exception as exc:  # noqa: BLE001 - the scene is kept; the session stops and says how to go on
            self.error = f"kill {n}: {type(exc).__name__}: {exc}"
            self._step(n, "error", self.error)

    def _wait_for_resume(self, number: int) -> None:
        self.host.set_state(State.KILLED, f"kill {number}: waiting for resume")

    def _announce(self, kill: killproto.Kill, run: str | None) -> None:
        """Everything visible once SIGKILL was sent: arming, state, step.

        Called before the records read under the freeze are recorded: the next
        point counts from the last of them, which the kill saw.
        """
        if kill.trigger == "auto":
            self._done_with_point("fired", run, kill=kill.number)
        controller = self.host.controller
        self.host.set_state(State.KILLED, f"kill {kill.number} ({kill.point or kill.trigger})")
        self._step(
            kill.number,
            "killed",
            (f"at {kill.point}; " if kill.point else "") + f"SIGKILL to pid {controller.pid if controller else '?'}; "
            f"targets: {[t.run for t in kill.targets] or 'none'}",
            kill.point,
        )

    async def see_through(self) -> None:
        """Wait for the kill under way (if any) to reach its window; the next kill may then begin."""
        while self._task is not None and not self._task.done():
            await self._task  # a kill's resume may begin the next point's kill: that one is seen through too
        self._task = None
        self.killing = None

    # --- the windows ---------------------------------------------------------------
    def records_recorded(self, records: list[Record]) -> None:
        """A read was recorded: the moments it shows are kept for the console's menu (here, not on the trigger's
        path, which runs before a freeze), and a result among it may close an open window."""
        if len(self._moments) < MOMENTS_KEPT:
            for r in records:
                self._moment(AFTER, r.kind, r.content.get("run"))
        # A settlement ends an unsettled target's story as a result ends the others': looked at as it is read, so
        # that the window closes at it (not at the next result, seconds later).
        if self.windows and any(r.kind in killproto.STORY_ENDS for r in records):
            self.check_windows()

    def check_windows(self) -> None:
        """Close every open window whose targets all have their results."""
        for number, kill in list(self.windows.items()):
            if number not in self._closing and kill.result_seen(self.accounts):
                self._closing[number] = asyncio.ensure_future(self._close_window(kill))

    async def close_settled_windows(self, finished: bool = False) -> None:
        """Close the windows whose targets' stories have ended, and wait until they are closed (the study ended).

        ``finished``: the study finished (exit 0), so nothing more of it can
        happen: every open window closes, a target whose story did not end
        with an empty entry (its checks say what never came).
        """
        self.check_windows()
        if finished:
            for number, kill in list(self.windows.items()):
                if number not in self._closing:
                    self._closing[number] = asyncio.ensure_future(self._close_window(kill))
        if self._closing:
            await asyncio.gather(*self._closing.values(), return_exceptions=True)

    async def _close_window(self, kill: killproto.Kill) -> None:
        try:
            await kill.close()
        except Exception as exc:  # noqa: BLE001 - the window stays open; a resume continues it
            self.host.emit(Problem(self.spec.id, f"kill {kill.number}: the window could not be closed: {exc}"))
            return
        self.windows.pop(kill.number, None)
        self._step(kill.number, "settled", "every target has its result; the window is closed")

    async def continue_windows(self, resuming: bool) -> None:
        """Take over the kill windows an earlier console left open (``resuming``: before a resume, else attached)."""
        folders = self.spec.folder.open_windows()
        if not folders:
            return
        await asyncio.to_thread(self.recorder.wait_live, 10.0)
        for folder in folders:
            try:
                kill = killproto.Kill.reopen(folder, self.stem, self.runtime, self.recorder)
                if resuming:
                    # Nothing of the study runs yet, so a capture cut short is finished truly now.
                    written = await kill.complete_capture(self.spec.folder.ledger)
                    if written:
                        self._step(kill.number, "captured", f"completed before the resume: {', '.join(written)}")
                await asyncio.to_thread(kill.continue_recording)
            except Exception as exc:  # noqa: BLE001 - that kill's checks will say what is missing
                self.host.emit(Problem(self.spec.id, f"kill {folder.number}: cannot continue its window: {exc}"))
                continue
            self.windows[kill.number] = kill
            self._step(kill.number, "continued", "window still open: recording its container events again")
        self.check_windows()

    async def before_resume(self) -> None:
        """Record the containers of every open window just before the controller is resumed (once a window)."""
        for kill in self.windows.values():
            if not kill.folder.before_resume.exists():
                await kill.before_resume()

    # --- ends the console did not make ----------------------------------------------
    async def after_end(self, ending: ControllerEnd, stopping: bool) -> None:
        """The controller ended on its own (a crash, a signal from elsewhere, exit 75) or as asked (a stop):
        what it left unfinished is judged as a kill's (contract §7), in a window that waits for the resume.

        Not for an end a kill of this console made, nor a clean exit.
        """
        controller = self.host.controller
        if controller is None or ending.code == 0 or controller.pid in self._killed:
            return
        trigger = "stop" if stopping or ending.code == STOPPED else "crash"
        folder = self.spec.folder.next_kill()
        how = f"exit {ending.code}" if ending.signal is None else f"killed by {ending.signal}"
        try:
            kill = await killproto.after_end(
                folder.number,
                folder,
                trigger,
                self.stem,
                self.runtime,
                self.recorder,
                controller,
                self.accounts,
                self.spec.folder.ledger,
            )
        except Exception as exc:  # noqa: BLE001 - said; the study is resumed as any unfinished one
            self.host.emit(
                Problem(self.spec.id, f"the end ({how}) could not be recorded as kill {folder.number}: {exc}")
            )
            return
        if kill is None:
            return
        self.windows[kill.number] = kill
        targets = ", ".join(t.run for t in kill.targets)
        self._step(
            kill.number, trigger, f"pid {controller.pid} {how} with {targets} unfinished: judged as a kill", trigger
        )

    def leave(self) -> None:
        """The console leaves: the open windows stop recording; the next console continues them."""
        for kill in self.windows.values():
            kill.leave()
