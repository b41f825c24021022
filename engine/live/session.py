"""One study, start to end: an asyncio task that launches, watches, kills, resumes and judges.

A :class:`StudySession` owns every side effect on its study and its evidence
folder.  It launches the controller (or attaches to it), waits for its end,
relaunches it after a kill or on the operator's resume, and reports
everything as typed events (:mod:`studymon.engine.events`) to one sink;
front ends render those and call :meth:`arm`, :meth:`kill_now`,
:meth:`resume` and :meth:`stop`.  The work in between is done by its parts:

* :class:`~studymon.engine.live.pump.LedgerPump` reads the ledger when its notice
  source says the folder changed (never on a fixed poll), keeps the accounts,
  appends ``timeline.jsonl`` and reports the records;
* :class:`~studymon.engine.kill.driver.KillDriver` keeps the arming, checks the
  trigger on every read and drives the kill protocol
  (:mod:`studymon.engine.kill.protocol`) through to each kill's window;
* :class:`~studymon.engine.live.containers.ContainerWatch` follows the study's
  containers through the runtime's event stream;
* :func:`~studymon.engine.live.finish.finish` judges the study and publishes its
  reports once it has ended.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
from collections.abc import Callable
from typing import Any

from studymon.engine.contract.accounts import Accounts
from studymon.engine.contract.killpoint import KillPoint
from studymon.engine.contract.rules import stem
from studymon.engine.contract.spec import StudySpec, container_prefix, controller_argv
from studymon.engine.events import (
    ControllerEnded,
    ControllerStarted,
    Problem,
    Sample,
    State,
    StateChanged,
    StudyEvent,
    StudyLoad,
)
from studymon.engine.evidence.writer import EvidenceWriteError, append_jsonl, append_line, read_json
from studymon.engine.kill import protocol as killproto
from studymon.engine.kill.driver import KillDriver
from studymon.engine.kill.reads import LedgerReads
from studymon.engine.launch import lock as studylock
from studymon.engine.launch.launcher import Controller, ControllerEnd, find_running, first_start
from studymon.engine.launch.lock import StudyLock
from studymon.engine.live.containers import ContainerWatch
from studymon.engine.live.finish import (
    SessionResult,
    ended_cleanly,
    finish,
    recorded_ending,
    resume_command,
    stop_for_write,
    unfinished_state,
)
from studymon.engine.live.pump import LedgerPump, last_timeline_seq
from studymon.engine.load.proctree import ProcessTable
from studymon.engine.load.sampler import heavy_snapshot
from studymon.engine.load.studyload import LoadMeter, load_line
from studymon.engine.runtimes import Runtime, close_runtime, open_runtime
from studymon.engine.runtimes.cli import study_environment

# SessionResult, resume_command and last_timeline_seq live with what they describe; front ends take them from here.
__all__ = ["SessionResult", "Sink", "StudySession", "last_timeline_seq", "resume_command"]

Sink = Callable[[StudyEvent], None]


class StudySession:
    """A study under watch.  ``await run()`` returns when it has ended (or was detached)."""

    def __init__(
        self,
        spec: StudySpec,
        sink: Sink,
        *,
        resume: bool = False,
        linger: bool = False,
        attach: bool = False,
        runtime: Runtime | None = None,
        lock: StudyLock | None = None,
        trace: bool = False,
    ) -> None:
        """``trace``: record every container event of the study in ``OUT/container-events-trace.jsonl``."""
        self.spec = spec
        # The study's lock (one study per id), claimed by the command before the
        # study was created or resumed; passed to every keeper this session starts.
        self.lock = lock
        self.attach_at_start = attach
        self.sink = sink
        self.resume_at_start = resume
        self.linger = linger  # keep watching after the controller ends (console), until closed
        self.research: dict[str, Any] = read_json(spec.folder.research)
        self.backend: str = self.research.get("backend", "process")
        self.stem = stem(container_prefix(self.research), spec.id)
        self.runtime: Runtime = runtime if runtime is not None else open_runtime(self.backend)
        self._owns_runtime = runtime is None  # one given by the caller is the caller's to close
        self.accounts = Accounts()
        self.controller: Controller | None = None
        self.launching = False  # a controller is being started, its pid not handed over yet
        self.state = State.STARTING
        reads = LedgerReads(spec.folder.ledger, self.accounts)
        self.kills = KillDriver(
            self,
            reads,
            spec,
            stem=self.stem,
            runtime=self.runtime,
            trace=trace,
        )
        self.recorder = self.kills.recorder
        # Every read asks the kill first, before anything is recorded.
        self.pump = LedgerPump(
            spec,
            reads,
            self.emit,
            kill=self.kills,
            on_records=self._records_arrived,
            on_write_error=self._note_write_error,
        )
        self.watch = ContainerWatch(spec.id, self.backend, self.stem, self.recorder, self.emit)
        self._resume_event = asyncio.Event()
        self._close_event = asyncio.Event()
        self._stopping = False
        self._stopper: asyncio.Future[ControllerEnd] | None = None
        self._end_watchers: set[asyncio.Task[ControllerEnd]] = set()
        self.load = LoadMeter(spec.id, self.backend)
        # The first evidence write that failed (disk full, I/O error): the session
        # then stops the study, so that nothing happens that is not recorded.
        self._write_error: EvidenceWriteError | None = None
        self._write_failed = asyncio.Event()

    # --- events --------------------------------------------------------------
    def emit(self, event: StudyEvent) -> None:
        self.sink(event)

    def set_state(self, state: State, detail: str = "") -> None:
        self.state = state
        self.emit(StateChanged(self.spec.id, state, detail))

    # --- actions (called by front ends) -------------------------------------
    @property
    def armed(self) -> bool:
        """Whether a kill point is armed."""
        return self.kills.armed

    @property
    def point(self) -> KillPoint | None:
        """The armed point counting now, if any."""
        return self.kills.point

    def moments(self) -> list[str]:
        """The points this study has shown a moment of so far (kinds of record, container actions), first seen
        first: what the console offers to arm, after the seed's."""
        return self.kills.moments()

    def arm(self, on: bool = True, point: KillPoint | None = None) -> None:
        """Arm one more kill point (the seed's, the first diagnosis start, by default), or disarm them all."""
        self.kills.arm(on, point)

    def kill_now(self, auto_resume: bool = True) -> bool:
        """Kill the controller now; targets are the runs in flight.  False if it is not running."""
        return self.kills.kill_now(auto_resume)

    def drain(self, max_bytes: int | None = None) -> None:
        """Read what is new in the ledger now (see :meth:`LedgerPump.drain`)."""
        self.pump.drain(max_bytes)

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
        self._stopper = asyncio.ensure_future(controller.stop())  # kept: the loop holds tasks only weakly
        return True

    def close(self) -> None:
        """Stop watching (after the controller ended, or to detach)."""
        self._close_event.set()
        self._resume_event.set()

    async def resume_requested(self) -> bool:
        """Wait for :meth:`resume` (True) or :meth:`close` (False)."""
        await self._resume_event.wait()
        self._resume_event.clear()
        return not self._close_event.is_set()

    # --- the run -------------------------------------------------------------
    async def run(self) -> SessionResult:
        await asyncio.to_thread(killproto.warm_up)
        self.pump.open()
        self.watch.start()
        pump: asyncio.Task[None] | None = None
        ending: ControllerEnd | None = None
        try:
            if self.attach_at_start or self.resume_at_start:
                self.kills.restore_arming()
            await self.pump.catch_up()
            if self.attach_at_start or self.resume_at_start:
                await self.kills.continue_windows(resuming=not self.attach_at_start)
            self.kills.start_counting()
            pump = asyncio.create_task(self.pump.run(), name=f"pump-{self.spec.id}")
            if self.attach_at_start:
                self._attach()
            elif self.resume_at_start and ended_cleanly(self.spec.out):
                # The controller ended on its own already; what is left is to write the reports.
                self.controller = None
            else:
                await self.relaunch(resume=self.resume_at_start)
            while True:
                if self._write_error is not None:
                    raise self._write_error
                if self.controller is None:
                    ending = recorded_ending(self.spec.out)
                else:
                    ending = await self._wait_end()
                    if ending is None:
                        self.set_state(State.DETACHED, f"pid {self.controller.pid} left running")
                        return SessionResult(
                            self.spec.id,
                            self.spec.out,
                            False,
                            None,
                            None,
                            "detached: the controller is still running",
                            detached=True,
                        )
                    await self.pump.drain_all()
                    await self.kills.see_through()
                    if self.controller.ending is None:
                        # A kill ended the controller and resumed the study: watch the new one.
                        self.set_state(State.RUNNING, f"pid {self.controller.pid}")
                        continue
                    ending = self.controller.ending
                    if ending is not None:
                        await self.kills.after_end(ending, self._stopping)
                if ending is not None and ending.code == 0:
                    break
                self.set_state(*unfinished_state(ending, self.spec.out))
                if self.kills.error is not None:
                    self.emit(Problem(self.spec.id, self.kills.error, resume_command([self.spec])))
                if not self.linger or self._close_event.is_set():
                    break
                # Waited for, then cleared: a resume asked before we got here is not lost.
                if not await self.resume_requested():
                    break
                self._stopping = False
                self.kills.error = None
                await self.relaunch(resume=True)
            if self._write_error is not None:
                raise self._write_error
            await self.kills.close_settled_windows(finished=ending is not None and ending.code == 0)
            self.pump.finish()
            return await finish(self, self.spec, ending, self.kills.error)
        except EvidenceWriteError as exc:
            self._write_error = self._write_error or exc
            return await stop_for_write(self, self.spec, self._write_error, self.controller, ending)
        except Exception as exc:  # noqa: BLE001 - the scene is kept, the operator is told
            if self.controller is not None:
                self.controller.thaw()
            self.set_state(State.ERROR, str(exc))
            hint = f"studymon attach {self.spec.out}" if self.is_running() else resume_command([self.spec])
            self.emit(Problem(self.spec.id, f"{type(exc).__name__}: {exc}", hint))
            return SessionResult(self.spec.id, self.spec.out, False, None, ending, f"{type(exc).__name__}: {exc}")
        finally:
            await self._let_go(pump)

    def _attach(self) -> None:
        """Watch the controller that is running already, if there is one."""
        self.controller = find_running(self.spec.out)
        if self.controller is None:
            return
        if self.controller.is_stopped():
            # A console died between freeze and kill: let the study go on.
            self.controller.thaw()
            self.emit(Problem(self.spec.id, "the controller was found stopped (SIGSTOP); sent SIGCONT"))
        self.emit(ControllerStarted(self.spec.id, self.controller.pid, False, first_start(self.spec.out)))
        self._report_end(self.controller)
        self.set_state(State.RUNNING, f"attached to pid {self.controller.pid}")

    async def _let_go(self, pump: asyncio.Task[None] | None) -> None:
        """Stop watching and let go of everything the run holds; a controller still running runs on."""
        self.pump.stop()
        self.kills.leave()
        if pump is not None:
            pump.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await pump  # its write errors were handled through _note_write_error
        self.watch.stop()
        self.pump.close()
        if self.lock is not None:
            self.lock.release()  # keepers that still run hold their share
        if self.controller is not None and self.controller.ending is None:
            self.controller.release()  # detached: the study runs on; its pidfd is not ours to keep
        await self.watch.join()
        if self._owns_runtime:
            close_runtime(self.runtime)
        self.load.close()

    async def _wait_end(self) -> ControllerEnd | None:
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
        if self.kills.killing is not None or self._stopping:
            # A kill or a stop in progress ends this controller; see it through.
            return await ender
        ender.cancel()
        return None

    def _report_end(self, controller: Controller) -> None:
        """Emit ControllerEnded when ``controller`` ends, whoever is waiting for it."""

        def done(task: asyncio.Task[ControllerEnd]) -> None:
            if not task.cancelled() and task.exception() is None:
                ending = task.result()
                self.emit(ControllerEnded(self.spec.id, controller.pid, ending.code, ending.signal))

        task = asyncio.ensure_future(controller.wait())
        task.add_done_callback(done)
        self._end_watchers.add(task)
        task.add_done_callback(self._end_watchers.discard)

    async def relaunch(self, resume: bool) -> None:
        """Start the controller (``--resume`` when ``resume``), with its heavy snapshot first."""
        if resume:
            await self.kills.before_resume()
        await self.heavy_snapshot("resume" if resume else "start")
        env = dict(os.environ)
        env["STUDYMON_STUDY"] = self.spec.id
        env["STUDYMON_OUT"] = str(self.spec.out)
        env.update(study_environment(self.backend, self.runtime))  # STUDYMON_RUNTIME, and where its state is
        argv = controller_argv(self.research, self.spec.out, resume)
        lock = self._hold_lock()
        self.launching = True
        try:
            self.controller = await Controller.launch(
                argv, self.spec.out, env, resume, keep_fds=(lock.fileno(),), hold=self.kills.hold_at_launch()
            )
        finally:
            self.launching = False
        self.emit(
            ControllerStarted(
                self.spec.id,
                self.controller.pid,
                resume,
                first_start(self.spec.out),
                self.controller.exact,
                self.controller.no_mount,
            )
        )
        self._report_end(self.controller)
        self.set_state(State.RESUMING if resume else State.RUNNING, f"pid {self.controller.pid}")
        self.pump.watch_folders()
        self.kills.launched()

    def _hold_lock(self) -> StudyLock:
        """The study's lock, claimed now if this session does not hold it yet (attached, or after a kill).

        The previous keeper of this very study may still be letting go of it
        (its controller was just killed): that is waited for, briefly.  Any
        other holder is another study with this id, and the launch is refused.
        """
        if self.lock is None or not self.lock.held:
            identity = studylock.engine_identity(self.backend, self.runtime)
            prefix = container_prefix(self.research)
            self.lock = studylock.claim(
                self.spec.id, self.spec.out, identity, prefix, wait_for_own=studylock.OWN_KEEPER_WAIT
            )
        return self.lock

    def _records_arrived(self) -> None:
        # A resumed controller is running again once it writes to its ledger.
        if self.state == State.RESUMING:
            self.set_state(State.RUNNING, f"pid {self.controller.pid if self.controller else '?'}")

    def _note_write_error(self, exc: EvidenceWriteError) -> None:
        """Remember the first failed evidence write and wake the session, which stops the study."""
        if self._write_error is None:
            self._write_error = exc
            self._write_failed.set()

    # --- the machine -----------------------------------------------------------
    async def heavy_snapshot(self, label: str) -> None:
        containers = await asyncio.to_thread(self.runtime.list, self.stem)
        controller = self.controller
        own = controller.pid if controller is not None and controller.ending is None else None
        try:
            snap = await asyncio.to_thread(heavy_snapshot, label, containers, own)
        except Exception as exc:  # noqa: BLE001 - a snapshot that failed is recorded as such, never fatal
            snap = {"label": label, "containers": containers, "error": f"{type(exc).__name__}: {exc}"}
        append_jsonl(self.spec.folder.machine, snap)

    def measure_load(self, table: ProcessTable) -> tuple[StudyLoad | None, float]:
        """The study's load now, and its controller tree's CPU (called from the sampler's thread).

        A failed reading gives no sample, never an exception: the sampler serves every study.
        """
        controller = self.controller
        pid = controller.pid if controller is not None and controller.ending is None else None
        try:
            return self.load.measure(pid, self.watch.running(), table)
        except Exception:  # noqa: BLE001 - no sample this time
            return None, 0.0

    def on_load(self, load: StudyLoad) -> None:
        """A sample of the study's own load: a line of ``load.jsonl`` and the event."""
        if self._write_error is None:
            try:
                append_jsonl(self.spec.folder.load, load_line(load))
            except EvidenceWriteError as exc:
                self._note_write_error(exc)
        self.emit(load)

    def on_sample(self, sample: dict[str, Any], tree_cpu: float, *, record: bytes | None) -> None:
        """A light machine sample from the supervisor's sampler; ``record``: its line, which goes to
        ``machine.jsonl`` too (encoded once for every study)."""
        if record is not None and self._write_error is None:
            try:
                append_line(self.spec.folder.machine, record)
            except EvidenceWriteError as exc:
                self._note_write_error(exc)
        self.emit(Sample(self.spec.id, sample, tree_cpu))
