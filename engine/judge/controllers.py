"""Controllers and kills, replayed: ``launches.jsonl``, each kill's moment and ``timeline.jsonl`` on one timeline.

Three machines (:data:`CONTROLLER`, :data:`CONTROLLERS`, :data:`KILL`)
take the events of :mod:`.timeline` in the order of time.  What they
reject is kept for the checks that read it: ``exitedCleanly`` (one
controller at a time, each started before it ends, a file in time order),
``killDelivered`` (the killed controller's end, no resume over it, one kill
a controller) and the records written while no controller started after a
kill ran (the targets' checks and ``killEvidence``).  What the replay
finds is put where the checks read it: :class:`~.facts.Launches` and each
:class:`~.facts.KillEvidence`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path

from studymon.engine.contract.automata import Machine, Row, Where, proof, unexpected
from studymon.engine.contract.exits import STOPPED
from studymon.engine.contract.folder import EvidenceFolder
from studymon.engine.evidence.records import LaunchEnd, LaunchStart
from studymon.engine.judge.facts import KillEvidence, Launches
from studymon.engine.judge.machines import (
    CONTROLLER,
    CONTROLLERS,
    GONE,
    KILL_MACHINE,
    RESUME,
    RESUMED_OVER,
    RUNNING,
    UNSTARTED_SAYS,
    KillStory,
)
from studymon.engine.judge.timeline import (
    END,
    KILL,
    START,
    Event,
    KilledAt,
    Stream,
    kill_events,
    launch_events,
    merged,
)


@dataclass
class _Controller:
    """One controller's story so far."""

    start: LaunchStart
    state: str = "running"
    killed_by: list[int] = field(default_factory=list)  # the kills of it, in the order of time
    end: LaunchEnd | None = None
    end_where: Where | None = None
    overlapped_at: float | None = None  # when a later controller was started while this one ran


# Ends other than exit 0 followed one by one for the kill folders that claim them: a study crashes a few times.
UNCLEAN_KEPT = 64
# Controllers' lives held to date the records by: a study resumes a few times, a hostile file many more.
LIVES_KEPT = 4096


class ControllerReplay:
    """The controllers and kills of one study, replayed over launches.jsonl and the kill folders' moments.

    What the replay finds goes where the checks read it: the launches view
    (:class:`Launches`: the final controller and its end, two at once,
    lines that tell no sound story) and each kill's ``keeper_end``,
    ``end_claimed_by``, ``resumed_over`` and ``story``.
    """

    def __init__(self, out: Path, kills: list[KillEvidence]) -> None:
        self.out = out
        self.kills = {ev.number: ev for ev in kills}
        self.launches = Launches()
        self.stream = Stream(EvidenceFolder.LAUNCHES)
        self.stories = {ev.number: KillStory(ev.number, ev.kill.pid) for ev in kills if ev.kill is not None}
        self.controllers: list[_Controller] = []  # every start, in the order of time
        self.live: dict[int, _Controller] = {}  # those running now (or killed, not yet ended), in the order started
        self.by_pid: dict[int | None, _Controller] = {}  # each pid's latest controller
        # Kills of a pid that did not run at the kill, by pid: §6.3 still reads that pid's first end after the kill.
        self.unheld: dict[int, list[int]] = {}
        self.taken: set[Row] = set()  # every row the replay took (the tests hold each row to a case)

    def _step(self, machine: Machine, state: str, event: str) -> Row | None:
        row = machine.step(state, event)
        if row is not None:
            self.taken.add(row)
        return row

    def run(self) -> Launches:
        moments = [KilledAt(ev.number, ev.kill) for ev in self.kills.values() if ev.kill is not None]
        for event in merged(launch_events(self.out, self.stream), kill_events(moments)):
            if event.what == START:
                self._start(event)
            elif event.what == END:
                self._end(event)
            else:
                self._kill(event)
        for ev in self.kills.values():
            ev.story = self.stories.get(ev.number)
        return self._view()

    def _running(self) -> list[_Controller]:
        return list(self.live.values())

    def _moved(self, c: _Controller, state: str) -> None:
        """A controller's new state; the running ones are kept apart, so a start finds them at once however many
        controllers came before (a file of 40 000 lines is judged in a second, not in minutes)."""
        c.state = state
        if state in RUNNING:
            self.live[id(c)] = c
        else:
            self.live.pop(id(c), None)

    def _start(self, e: Event) -> None:
        start: LaunchStart = e.fact
        running = self._running()
        slot = "busy" if running else "idle" if self.controllers else "none"
        row = self._step(CONTROLLERS, slot, RESUME if start.resume else START)
        if row is not None and row.breaks is not None:
            if running:
                self.launches.overlap(running[-1].start, start)
                for c in running:
                    if c.overlapped_at is None:
                        c.overlapped_at = start.at
            else:
                says = row.says.format(pid=start.pid)
                self.launches.bad(f"{e.where}: {says}", proof(e.where, f"pid {start.pid} starts", says))
        mine = self.by_pid.get(start.pid)
        state = mine.state if mine is not None else CONTROLLER.start
        if self._step(CONTROLLER, state, START) is None:
            says = unexpected(CONTROLLER, state, START)
            self.launches.bad(f"{e.where}: {says} (pid {start.pid})", proof(e.where, f"pid {start.pid} starts", says))
        c = _Controller(start)
        self.controllers.append(c)
        self._moved(c, c.state)
        self.by_pid[start.pid] = c
        self.launches.final, self.launches.final_end, self.launches.final_end_where = start, None, None
        if self.launches.first is None:
            self.launches.first, self.launches.first_where = start, e.where
        for story in self.stories.values():
            krow = self._step(KILL_MACHINE, story.state, START)
            if krow is None:
                continue
            if krow.breaks is not None:
                self.kills[story.number].resumed_over = True
            story.move(e.time, krow.next)

    def _end(self, e: Event) -> None:
        end: LaunchEnd = e.fact
        for number in self.unheld.pop(end.pid, []) if end.pid is not None else []:
            self.kills[number].keeper_end = end
        mine = self.by_pid.get(end.pid)
        state = mine.state if mine is not None else CONTROLLER.start
        if end.pid is None and mine is None and not self._running():
            # The keeper could not start the controller (a start without a pid, then this end): keep its status.
            self.launches.final_end, self.launches.final_end_where = end, e.where
            return
        row = self._step(CONTROLLER, state, END)
        if row is not None and row.breaks is None and state not in RUNNING:
            return
        if row is None or row.breaks is not None or mine is None:
            says = row.says.format(pid=end.pid) if row is not None else unexpected(CONTROLLER, state, END)
            self.launches.bad(f"{e.where}: {says}", proof(e.where, f"pid {end.pid} ends", says))
            return
        mine.end, mine.end_where = end, e.where
        self._moved(mine, row.next)
        # A stop (SIGINT, exit 130) is not asked for its folder: the console stops a study when it cannot write its
        # evidence (a full disk), and then it cannot write that folder either.
        stopped = end.code == STOPPED or end.signal == "SIGINT"
        if not end.clean and not stopped and len(self.launches.unclean) < UNCLEAN_KEPT:
            self.launches.unclean.append((end.pid, end.at, e.where))
        if self.launches.final is mine.start:
            self.launches.final_end, self.launches.final_end_where = end, e.where
        for number in mine.killed_by:
            self.kills[number].keeper_end = end
            story = self.stories[number]
            krow = self._step(KILL_MACHINE, story.state, END)
            if krow is not None:
                story.move(e.time, krow.next)

    def _kill(self, e: Event) -> None:
        made: KilledAt = e.fact
        story = self.stories[made.number]
        ev = self.kills[made.number]
        made_row = self._step(KILL_MACHINE, story.state, KILL)
        if made_row is not None:
            story.move(e.time, made_row.next)
        pid = made.kill.pid
        mine = self.by_pid.get(pid) if pid is not None else None
        state = mine.state if mine is not None else CONTROLLER.start
        row = self._step(CONTROLLER, state, KILL) if pid is not None else None
        if mine is None or state not in RUNNING:
            gone = self._step(KILL_MACHINE, story.state, GONE)
            if gone is not None:
                story.move(e.time, gone.next)
            if row is not None and row.breaks is not None and mine is not None and mine.end_where is not None:
                ev.ended_before = row.says.format(pid=pid, where=mine.end_where)
            elif pid is not None:
                if mine is None:
                    # No start of that pid by the kill: kill.json names a pid launches.jsonl holds no controller of.
                    ev.unstarted = UNSTARTED_SAYS.format(pid=pid)
                self.unheld.setdefault(pid, []).append(made.number)
            return
        if mine.overlapped_at is not None and mine.overlapped_at >= e.time - RESUMED_OVER:
            ev.resumed_over = True
        if row is not None and row.breaks is not None and mine.killed_by:
            ev.end_claimed_by = mine.killed_by[0]
        mine.killed_by.append(made.number)
        if row is not None:
            self._moved(mine, row.next)

    def _lives(self) -> None:
        """Each controller's life, in the order of the starts, with the latest end so far (to date records by)."""
        lives = self.launches
        if len(self.controllers) > LIVES_KEPT:
            lives.lives_cut = True
            return
        latest = -math.inf
        for c in self.controllers:
            latest = max(latest, c.end.at if c.end is not None else math.inf)
            lives.starts.append(c.start.at)
            lives.lived_until.append(latest)

    def _view(self) -> Launches:
        if self.stream.problem is not None:
            return Launches(problem=self.stream.problem)
        self._lives()
        # The file's own faults first (its lines that are not launches, its order), then what the replay found.
        replayed, self.launches.problems = self.launches.problems, []
        count, self.launches.problem_count = self.launches.problem_count, 0
        if self.stream.disorder is not None:
            self.launches.bad(self.stream.disorder, self.stream.disorder_proof)
        for reason, where in zip(self.stream.bad, self.stream.bad_at, strict=True):
            self.launches.bad(reason, proof(where, "a line", "it is not a launch the keeper or the console writes"))
        # A line that is not a launch leaves every kill's delivery untold; lines out of order still tell it by time.
        self.launches.fault = self.stream.bad[0] if self.stream.bad else None
        self.launches.problem_count += self.stream.bad_count - len(self.stream.bad)
        for reason in replayed:
            self.launches.bad(reason)
        self.launches.problem_count += count - len(replayed)
        return self.launches


def replay_controllers(out: Path, kills: list[KillEvidence]) -> Launches:
    """Replay launches.jsonl and the kills' moments; each kill's findings go into its evidence."""
    launches = ControllerReplay(out, kills).run()
    for ev in kills:
        # A file a kill's delivery is read from that is not whole tells no delivery either (§6.9).
        ev.launches_problem = launches.problem or (
            f"launches.jsonl cannot be relied on: {launches.fault}" if launches.fault is not None else None
        )
    return launches
