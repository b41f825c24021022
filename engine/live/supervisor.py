"""Many studies in one event loop: their sessions, one machine sampler, one event sink.

The supervisor is the engine's face to a front end: it runs the sessions as
asyncio tasks, feeds them machine samples, forwards their events to one sink,
and gives the overall exit status (3 if any study could not finish, else 1 if
any check failed, else 0).
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from studymon.engine.contract.killpoint import SEED, KillPoint
from studymon.engine.contract.spec import StudySpec
from studymon.engine.events import StudyEvent, StudyLoad
from studymon.engine.evidence.writer import jsonl_line
from studymon.engine.launch.lock import StudyLock
from studymon.engine.live.session import SessionResult, Sink, StudySession, resume_command
from studymon.engine.load.proctree import ProcessTable
from studymon.engine.load.sampler import MACHINE_EVERY, QUIET_SAMPLE_EVERY, SAMPLE_EVERY, light_sample
from studymon.engine.runtimes import Runtime


class Supervisor:
    """Runs several :class:`StudySession` at once."""

    def __init__(self, sink: Sink) -> None:
        self.sink = sink
        self.sessions: dict[str, StudySession] = {}
        self._graphs_shown = False
        self._pace_changed = asyncio.Event()  # made here, used only inside the running loop

    @property
    def graphs_shown(self) -> bool:
        """Whether samples come at the graphs' pace (see :meth:`show_graphs`)."""
        return self._graphs_shown

    def show_graphs(self, shown: bool) -> None:
        """Whether a front end shows a study's load graph now: samples come every 2.5 s while one does,
        every 4.5 s while none does (the overview, the headless run); a graph shown brings the next sample forward."""
        if shown != self._graphs_shown:
            self._graphs_shown = shown
            self._pace_changed.set()

    def add(
        self,
        spec: StudySpec,
        *,
        resume: bool,
        armed: bool | Sequence[KillPoint],
        linger: bool = False,
        attach: bool = False,
        runtime: Runtime | None = None,
        lock: StudyLock | None = None,
        trace: bool = False,
    ) -> StudySession:
        session = StudySession(
            spec, self._emit, resume=resume, linger=linger, attach=attach, runtime=runtime, lock=lock, trace=trace
        )
        self.sessions[spec.id] = session
        # ``armed``: the seed's point (True), or the points in order.  Armed through arm(), which records
        # each in arms.jsonl.
        for point in [SEED] if armed is True else [] if armed is False else armed:
            session.arm(True, point)
        return session

    def _emit(self, event: StudyEvent) -> None:
        self.sink(event)

    def _measure(self) -> tuple[dict[str, Any], dict[str, tuple[StudyLoad | None, float]]]:
        # In a thread: reading /proc and cgroup files (or asking Docker) would otherwise stall the loop, and a kill.
        sample = light_sample()
        table = ProcessTable()  # one per sample: the fallback's walk of the process table serves every study
        loads = {sid: s.measure_load(table) for sid, s in list(self.sessions.items())}
        return sample, loads

    async def _sample(self) -> None:
        light_sample()  # prime psutil's CPU counters
        loop = asyncio.get_running_loop()
        last = loop.time()  # when the last sample began
        recorded = -math.inf  # when machine.jsonl last took one
        first = True
        while True:
            # One sample every SAMPLE_EVERY (QUIET_SAMPLE_EVERY) from the start of the last, the
            # measuring included (load.jsonl wants one at most 5 s apart, and a run read through the
            # Docker API can take a second); a change of pace works the wait out again.  The first
            # comes at the graphs' pace whatever is shown: a short study has its sample, and the
            # machine line its figures, as soon as they would have.
            self._pace_changed.clear()
            every = SAMPLE_EVERY if self._graphs_shown or first else QUIET_SAMPLE_EVERY
            wait = last + every - loop.time()
            if wait > 0:
                try:
                    await asyncio.wait_for(self._pace_changed.wait(), wait)
                    continue
                except TimeoutError:
                    pass
            began = last = loop.time()
            first = False
            sample, loads = await asyncio.to_thread(self._measure)
            record = None
            if began - recorded >= MACHINE_EVERY:
                recorded = began
                record = jsonl_line(sample)  # the same line in every study's machine.jsonl: encoded once
            for sid, session in list(self.sessions.items()):
                load, tree_cpu = loads.get(sid, (None, 0.0))
                session.on_sample(sample, tree_cpu, record=record)
                if load is not None:
                    session.on_load(load)

    async def run(self) -> list[SessionResult]:
        sampler = asyncio.create_task(self._sample(), name="sampler")
        try:
            return list(await asyncio.gather(*(s.run() for s in self.sessions.values())))
        finally:
            sampler.cancel()

    def resume_hint(self, results: list[SessionResult]) -> str | None:
        """The command that continues what did not finish (attach for detached studies)."""
        detached = [str(r.out) for r in results if r.detached]
        stopped = [self.sessions[r.study].spec for r in results if not r.finished and not r.detached]
        hints = []
        if stopped:
            hints.append(resume_command(stopped))
        if detached:
            hints.append("studymon attach " + " ".join(detached))
        return "\n  ".join(hints) if hints else None

    def outs(self) -> list[Path]:
        return [s.spec.out for s in self.sessions.values()]
