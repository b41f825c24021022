"""The shim of a process-runtime container: the process that starts its command, records its start, waits for it
and records its exit.

:meth:`~studymon.engine.runtimes.process.ProcessRuntime.run` starts it
(``main(["--detach", ROOT, NAME])``): it forks once more into a session of its
own, so that it is reparented away from whoever called ``run`` (a controller
SIGKILLed at any moment leaves its runs going, and their exits recorded), and
it takes no signal sent to the caller's process group.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import psutil

from studymon.engine.io.clock import rfc3339_ns
from studymon.engine.runtimes.base import Inspect
from studymon.engine.runtimes.process import GROUP_SIGNALS, ProcessRuntime, exit_code, lifecycle_event


def _shim(root: Path, name: str) -> int:
    """Start the command of ``name``, record its start, wait, record its exit."""
    runtime = ProcessRuntime(root)
    with runtime._container(name) as dir_fd:
        state = runtime._read(dir_fd, name, "state.json")
        if state is None:
            raise RuntimeError(f"{runtime.containers / name / 'state.json'} is missing or not JSON")
        me = {"Pid": os.getpid(), "StartTime": psutil.Process().create_time()}
        runtime.state.write_json(dir_fd, "shim.json", me)
        config = state["Config"]
        child = _start_command(runtime, dir_fd, name, config)
        if isinstance(child, OSError):
            _record_start_failure(runtime, dir_fd, state, child)
            return 0
        me.update(CommandPid=child.pid, CommandStartTime=_start_time_of(child.pid))
        runtime.state.write_json(dir_fd, "shim.json", me)
        _record_start(runtime, dir_fd, state, child.pid)
        _forward_termination(child)
        code = exit_code(child.wait())
        _record_exit(runtime, dir_fd, state, code)
    return 0


def _start_time_of(pid: int) -> float:
    try:
        return psutil.Process(pid).create_time()
    except psutil.Error:
        return 0.0  # already gone: nothing will ever need to kill it


def _start_command(
    runtime: ProcessRuntime, dir_fd: int, name: str, config: dict[str, Any]
) -> subprocess.Popen[bytes] | OSError:
    env = dict(os.environ)
    env.update(item.split("=", 1) for item in config.get("Env") or [] if "=" in item)
    flags = os.O_WRONLY | os.O_CREAT | os.O_APPEND
    # Never through a link: a root run must not append to a file someone pointed these names at.
    out = runtime.state.open_file(dir_fd, "stdout.log", flags, runtime.containers / name / "stdout.log")
    try:
        err = runtime.state.open_file(dir_fd, "stderr.log", flags, runtime.containers / name / "stderr.log")
    except BaseException:
        os.close(out)
        raise
    try:
        return subprocess.Popen(
            config["Cmd"],
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=err,
            env=env,
            cwd=config.get("WorkingDir") or None,
            process_group=0,  # its own group: ``remove`` kills the whole tree at once
            close_fds=True,
        )
    except OSError as exc:
        return exc
    finally:
        os.close(out)
        os.close(err)


def _record_start_failure(runtime: ProcessRuntime, dir_fd: int, state: Inspect, exc: OSError) -> None:
    # Docker leaves such a container "created" with 127 (not found) or 126 (not executable).
    code = 127 if isinstance(exc, FileNotFoundError) else 126
    state["State"].update(ExitCode=code, Error=f"cannot start {state['Config']['Cmd'][0]!r}: {exc.strerror or exc}")
    runtime.state.write_json(dir_fd, "state.json", state)


def _record_start(runtime: ProcessRuntime, dir_fd: int, state: Inspect, pid: int) -> None:
    # The state first, then the event, as Docker does: whoever saw the event and inspects then sees it started.
    # Stamped before the state is written: the creator returns once it reads the state, and the study records its
    # run's start then, so the start is never dated after that record (Docker logs it before its start call returns).
    ns = time.time_ns()
    state["State"].update(Status="running", Running=True, Pid=pid, StartedAt=rfc3339_ns(ns))
    runtime.state.write_json(dir_fd, "state.json", state)
    runtime._append_event(lifecycle_event("start", state, ns))


def _record_exit(runtime: ProcessRuntime, dir_fd: int, state: Inspect, code: int) -> None:
    # The die first, then the state: whoever waits for the exit (a study, then the console closing a window at its
    # result) finds the die recorded by then.
    ns = time.time_ns()
    runtime._append_event(lifecycle_event("die", state, ns, exitCode=str(code)))
    state["State"].update(Status="exited", Running=False, Pid=0, ExitCode=code, FinishedAt=rfc3339_ns(ns))
    runtime.state.write_json(dir_fd, "state.json", state)


def _forward_termination(child: subprocess.Popen[bytes]) -> None:
    """SIGTERM to the shim stops the container the way ``docker stop`` does: the group gets it."""

    def forward(signum: int, _frame: object) -> None:
        with contextlib.suppress(ProcessLookupError):  # the group has ended already
            os.killpg(child.pid, signum)

    signal.signal(signal.SIGTERM, forward)


def discard_group_signals() -> None:
    """Drop what was sent to the creator's process group before this process had a session of its own.

    The creator blocks :data:`GROUP_SIGNALS` around the fork, so such a signal is pending here, not acted on;
    ignoring a pending signal discards it.  Then the usual dispositions, unblocked.
    """
    for sig in GROUP_SIGNALS:
        signal.signal(sig, signal.SIG_IGN)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, GROUP_SIGNALS)
    for sig in GROUP_SIGNALS:
        signal.signal(sig, signal.default_int_handler if sig == signal.SIGINT else signal.SIG_DFL)


def _detach_and_shim(root: Path, name: str) -> int:
    """The second fork: the parent (child of ``run``) exits now, the shim is reparented."""
    if os.fork() != 0:
        os._exit(0)
    try:
        code = _shim(root, name)
    except BaseException as exc:  # noqa: BLE001 - the shim has nobody to raise to: say it in shim.log
        print(f"shim of {name!r} failed: {exc!r}", file=sys.stderr, flush=True)
        code = 1
    sys.stdout.flush()
    os._exit(code)


def main(argv: list[str] | None = None) -> int:
    """``[--detach] ROOT NAME``: run the container ``NAME`` of the runtime in ``ROOT`` (``--detach``: in a session
    of its own)."""
    parser = argparse.ArgumentParser(prog="studymon.engine.runtimes.shim", description=__doc__.splitlines()[0])
    parser.add_argument("--detach", action="store_true")
    parser.add_argument("root")
    parser.add_argument("name")
    args = parser.parse_args(argv)
    if args.detach:
        discard_group_signals()
        return _detach_and_shim(Path(args.root), args.name)
    return _shim(Path(args.root), args.name)
