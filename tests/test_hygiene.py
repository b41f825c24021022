"""A console that runs for hours gives back what each study took: descriptors and threads.

Studies run in this very process, through the engine as a front end drives
it; the open descriptors (``/proc/self/fd``) and the threads
(``threading.enumerate()``) are counted before and after a study that runs to
its end, one that is detached while a run is in flight, and the attach that
takes it over to its end.
"""

from __future__ import annotations

import asyncio
import os
import threading
from pathlib import Path
from typing import Any, Callable

import pytest

from studymon.engine.contract.spec import StudySpec
from studymon.engine.kill import protocol as killproto
from studymon.engine.launch.prepare import create_fresh, plan_fresh
from studymon.engine.live.session import SessionResult
from studymon.engine.live.supervisor import Supervisor
from tests.studies import template
from tests.waits import until, until_async

pytestmark = pytest.mark.slow

# Threads and descriptors that a session leaves behind may take a moment to go
# (a stream thread sees its stop within milliseconds, but nobody waits for it);
# more than this is a leak.
SETTLE = 3.0


def open_fds() -> dict[int, str]:
    """This process's open descriptors and what each one is."""
    found: dict[int, str] = {}
    for entry in os.listdir("/proc/self/fd"):
        try:
            found[int(entry)] = os.readlink(f"/proc/self/fd/{entry}")
        except OSError:
            pass  # the descriptor listdir itself used, closed meanwhile
    return found


def thread_names() -> list[str]:
    return sorted(t.name for t in threading.enumerate())


class Level:
    """The descriptors and threads at one moment, to compare a later moment with."""

    def __init__(self) -> None:
        self.fds = open_fds()
        self.threads = thread_names()

    def extra(self, allowed_threads: tuple[str, ...] = ()) -> tuple[dict[int, str], list[str]]:
        """What is open now and was not then (threads named with an allowed prefix aside)."""
        fds = {fd: what for fd, what in open_fds().items() if self.fds.get(fd) != what}
        threads = thread_names()
        for name in self.threads:
            if name in threads:
                threads.remove(name)
        return fds, [t for t in threads if not t.startswith(allowed_threads)]

    def assert_back(self, when: str, allowed_threads: tuple[str, ...] = ()) -> None:
        def left() -> str:
            """What is still open or running; empty once all is back."""
            fds, threads = self.extra(allowed_threads)
            return f"left open {fds or 'no descriptor'}; left running {threads or 'no thread'}" if fds or threads else ""

        until(lambda: not left(), SETTLE, f"every descriptor closed and thread ended {when}", step=0.05, seen=left)


def fresh(tmp_path: Path, study: str, backend: str) -> StudySpec:
    t = template(tmp_path, f"{study}.json", backend=backend, budget=20, diagnosisSeconds=1)
    specs, tpl, resolved = plan_fresh([f"{study}={tmp_path / study}"], t, [], backend)
    create_fresh(specs, tpl, resolved)
    return specs[0]


def run(spec: StudySpec, attach: bool = False, until: Callable[[Any], bool] | None = None) -> SessionResult:
    """Run ``spec``'s session in a loop of its own; with ``until``, detach once it holds."""

    async def scenario() -> SessionResult:
        supervisor = Supervisor(lambda event: None)
        session = supervisor.add(spec, resume=False, armed=False, attach=attach)
        task = asyncio.ensure_future(supervisor.run())
        if until is not None:
            await until_async(lambda: until(session), 60, "the study to reach the moment to detach", step=0.02)
            session.close()
        return (await asyncio.wait_for(task, 240))[0]

    return asyncio.run(scenario())


@pytest.mark.parametrize("backend", ["process", "docker"])
def test_descriptors_and_threads_return_to_their_level(tmp_path: Path, backend: str, request: pytest.FixtureRequest) -> None:
    if backend == "docker":
        request.getfixturevalue("docker_engine")
    killproto.warm_up()  # the strike threads live as long as the process, by design
    start = Level()

    ended = run(fresh(tmp_path, "whole", backend))
    assert ended.finished and ended.judgement is not None and ended.judgement.ok, ended
    start.assert_back("after a study ran to its end")

    spec = fresh(tmp_path, "left", backend)
    detached = run(spec, until=lambda s: bool(s.accounts.in_flight()))
    assert detached.detached, detached
    # The controller's keeper is still this process's child: asyncio keeps a
    # thread waiting for it until it ends (the keeper outlives the console by design).
    start.assert_back("after a detach", allowed_threads=("asyncio-waitpid",))

    attached = run(spec, attach=True)
    assert attached.finished and attached.judgement is not None and attached.judgement.ok, attached
    start.assert_back("after the attach that took the study to its end")
