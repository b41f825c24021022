"""The study's side of its kills: the arming, the trigger, and each kill driven through its phases.

A :class:`KillDriver` keeps a study's arming (``arms.jsonl``), checks the
armed trigger on every read of the ledger, and drives each
:class:`~studymon.engine.kill.Kill` from its freeze to its window: freeze in
the very wake-up that read the trigger, then strike, capture and resume in a
task, then close the window once every target has its result.  Windows an
earlier console left open are taken over on resume and attach.

The kill protocol itself is :mod:`studymon.engine.kill`.  The driver speaks
to the study through two small interfaces: :class:`KillHost` (its controller,
its events, a snapshot, a relaunch) and :class:`FrozenReads` (the ledger
pump's reads while the controller is frozen).
"""

from __future__ import annotations

import asyncio
import time
from typing import Protocol

from studymon.engine import kill as killproto
from studymon.engine.accounts import Accounts
from studymon.engine.events import ArmChanged, KillStep, Problem, State, StudyEvent
from studymon.engine.evidence import append_jsonl, read_jsonl
from studymon.engine.folder import EvidenceFolder, KillFolder
from studymon.engine.launcher import Controller
from studymon.engine.ledger import Record
from studymon.engine.recording import EventRecorder
from studymon.engine.records import ArmLine
from studymon.engine.runtimes import Runtime
from studymon.engine.spec import StudySpec


class KillHost(Protocol):
    """What the driver needs of the study whose controller it kills (a :class:`StudySession` is one)."""

    controller: Controller | None

    def emit(self, event: StudyEvent) -> None: ...

    def set_state(self, state: State, detail: str = "") -> None: ...

    async def heavy_snapshot(self, label: str) -> None: ...

    async def relaunch(self, resume: bool) -> None: ...

    async def resume_requested(self) -> bool: ...


class FrozenReads(Protocol):
    """The ledger reads a kill makes (a :class:`~studymon.engine.pump.LedgerPump` makes them)."""

    def drain(self, max_bytes: int | None = None) -> None: ...

    def read_frozen(self) -> None: ...

    def record_frozen(self) -> None: ...


class KillDriver:
    """One study's arming and kills, from the trigger to each kill's closed window."""

    def __init__(
        self,
        host: KillHost,
        reader: FrozenReads,
        spec: StudySpec,
        *,
        prefix: str,
        runtime: Runtime,
        recorder: EventRecorder,
        accounts: Accounts,
        armed: bool,
    ) -> None:
        self.host = host
        self.reader = reader
        self.spec = spec
        self.prefix = prefix
        self.runtime = runtime
        self.recorder = recorder
        self.accounts = accounts
        self.armed = armed
        self.killing: killproto.Kill | None = None  # from the freeze until the kill has been seen through
        self.error: str | None = None  # a kill that could not be seen through: the session stops
        self.windows: dict[int, killproto.Kill] = {}  # kills whose window is open
        self._task: asyncio.Task[None] | None = None
        self._closing: dict[int, asyncio.Task[None]] = {}

    def _step(self, number: int, step: str, detail: str = "") -> None:
        self.host.emit(KillStep(self.spec.id, number, step, detail, time.time()))

    # --- arming ----------------------------------------------------------------
    def arm(self, on: bool) -> None:
        """Arm (or disarm) the kill at the first diagnosis start, recorded in ``arms.jsonl``."""
        if on == self.armed:
            return
        self.armed = on
        append_jsonl(EvidenceFolder(self.spec.out).arms, ArmLine("arm" if on else "disarm", time.time()).to_json())
        self.host.emit(ArmChanged(self.spec.id, on))
        if on:
            self.react_now()

    def restore_arming(self) -> None:
        """An attached or resumed session keeps an arming that has not fired yet."""
        armed = False
        for line in read_jsonl(EvidenceFolder(self.spec.out).arms):
            event = line.get("event")
            armed = event == "arm" if event in ("arm", "disarm", "fired", "missed") else armed
        self.armed = armed
        if armed:
            self.host.emit(ArmChanged(self.spec.id, True))

    def _missed(self, run: str | None, detail: str) -> None:
        self.armed = False
        line = ArmLine("missed", time.time(), run=run, detail=detail)
        append_jsonl(EvidenceFolder(self.spec.out).arms, line.to_json())
        self.host.emit(ArmChanged(self.spec.id, False))
        self._step(0, "missed", detail)

    # --- the trigger -------------------------------------------------------------
    def reads_at_once(self) -> bool:
        """Armed, or a kill under way: a wake-up's appends are read at once, not gathered."""
        return self.armed or self.killing is not None

    def check_trigger(self, seen: float) -> bool:
        """Begin the armed kill if its trigger is in the accounts; whether it began."""
        if not self.armed or self.killing is not None:
            return False
        controller = self.host.controller
        if controller is None or controller.ending is not None:
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
        return self._begin("auto", acct.starts[0], first, seen, True)

    def react_now(self) -> None:
        """Check the trigger against what was read already (on arming, on attach)."""
        self.check_trigger(time.time())

    def kill_now(self, auto_resume: bool) -> bool:
        """Kill the controller now; targets are the runs in flight.  False if it is not running."""
        controller = self.host.controller
        if self._busy() or controller is None or controller.ending is not None:
            return False
        self.reader.drain()
        if self._busy():  # the armed trigger was among what was just read: that kill goes first
            return False
        return self._begin("manual", None, None, time.time(), auto_resume)

    def _busy(self) -> bool:
        return self.killing is not None

    # --- one kill ----------------------------------------------------------------
    def _begin(self, trigger: str, record: Record | None, only: str | None, seen: float, auto_resume: bool) -> bool:
        """Freeze the controller now, in this wake-up; the rest of the kill follows in a task."""
        folder = EvidenceFolder(self.spec.out).next_kill()
        kill = killproto.Kill(
            number=folder.number,
            folder=folder.path,
            trigger=trigger,
            prefix=self.prefix,
            runtime=self.runtime,
            recorder=self.recorder,
            controller=self.host.controller,
            trigger_seq=record.seq if record else None,
            trigger_at=record.at if record else None,
        )
        if not kill.freeze(seen):
            return False
        self.killing = kill
        # A failure here is seen through by the task's strike (or lets the controller go).  A plain
        # try, not contextlib.suppress: this runs between the freeze and SIGKILL.
        try:  # noqa: SIM105
            kill.decide_now(self.reader.read_frozen, self.accounts, only)
        except Exception:  # noqa: BLE001, S110
            pass
        self._task = asyncio.ensure_future(self._run(kill, only, auto_resume))
        return True

    async def _run(self, kill: killproto.Kill, only: str | None, auto_resume: bool) -> None:
        """Strike, capture, resume: the kill after its freeze, to the point where its window waits for results."""
        n = kill.number
        host = self.host
        try:
            try:
                struck = await kill.strike(self.reader.read_frozen, self.accounts, only)
            except killproto.KillAbandoned as exc:
                self.killing = None
                self.reader.record_frozen()
                if kill.trigger == "auto":
                    self._missed(only, f"kill abandoned before SIGKILL: {exc}; the controller was let go")
                else:
                    self._step(n, "abandoned", f"{exc}; the controller was let go (SIGCONT)")
                return
            if not struck:
                self.killing = None
                self.reader.record_frozen()
                acct = self.accounts.runs.get(only or "")
                seq = acct.results[0].seq if acct and acct.results else "?"
                self._missed(only, f"{only} had its result (seq {seq}) before the kill could land")
                return
            self.reader.record_frozen()
            self._announce(kill)
            await kill.capture(self.reader.drain, self.spec.ledger)
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
            self.check_windows()
        except Exception as exc:  # noqa: BLE001 - the scene is kept; the session stops and says how to go on
            self.error = f"kill {n}: {type(exc).__name__}: {exc}"
            self._step(n, "error", self.error)

    def _wait_for_resume(self, number: int) -> None:
        self.host.set_state(State.KILLED, f"kill {number}: waiting for resume")

    def _announce(self, kill: killproto.Kill) -> None:
        """Everything visible once SIGKILL was sent: arming, state, step."""
        if kill.trigger == "auto":
            self.armed = False
            append_jsonl(
                EvidenceFolder(self.spec.out).arms,
                ArmLine("fired", time.time(), kill=kill.number, run=self.accounts.first_diagnosis).to_json(),
            )
            self.host.emit(ArmChanged(self.spec.id, False))
        controller = self.host.controller
        self.host.set_state(State.KILLED, f"kill {kill.number} ({kill.trigger})")
        self._step(
            kill.number,
            "killed",
            f"SIGKILL to pid {controller.pid if controller else '?'}; "
            f"targets: {[t.run for t in kill.targets] or 'none'}",
        )

    async def see_through(self) -> None:
        """Wait for the kill under way (if any) to reach its window; the next kill may then begin."""
        if self._task is not None and not self._task.done():
            await self._task
        self._task = None
        self.killing = None

    # --- the windows ---------------------------------------------------------------
    def records_recorded(self, records: list[Record]) -> None:
        """A read was recorded: a result among it may close an open window."""
        if self.windows and any(r.kind == "runResult" for r in records):
            self.check_windows()

    def check_windows(self) -> None:
        """Close every open window whose targets all have their results."""
        for number, kill in list(self.windows.items()):
            if number not in self._closing and kill.result_seen(self.accounts):
                self._closing[number] = asyncio.ensure_future(self._close_window(kill))

    async def close_settled_windows(self) -> None:
        """Close the windows whose targets have their results, and wait until they are closed (the study ended)."""
        self.check_windows()
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
        folders = [k.path for k in EvidenceFolder(self.spec.out).open_windows()]
        if not folders:
            return
        await asyncio.to_thread(self.recorder.wait_live, 10.0)
        for folder in folders:
            try:
                kill = killproto.Kill.reopen(folder, self.prefix, self.runtime, self.recorder)
                if resuming:
                    # Nothing of the study runs yet, so a capture cut short is finished truly now.
                    written = await kill.complete_capture(self.spec.ledger)
                    if written:
                        self._step(kill.number, "captured", f"completed before the resume: {', '.join(written)}")
                await asyncio.to_thread(kill.continue_recording)
            except Exception as exc:  # noqa: BLE001 - that kill's checks will say what is missing
                self.host.emit(Problem(self.spec.id, f"kill {folder.name}: cannot continue its window: {exc}"))
                continue
            self.windows[kill.number] = kill
            self._step(kill.number, "continued", "window still open: recording its container events again")
        self.check_windows()

    async def before_resume(self) -> None:
        """Record the containers of every open window just before the controller is resumed (once a window)."""
        for kill in self.windows.values():
            if not (kill.folder / KillFolder.BEFORE_RESUME).exists():
                await kill.before_resume()

    def leave(self) -> None:
        """The console leaves: the open windows stop recording; the next console continues them."""
        for kill in self.windows.values():
            kill.leave()
