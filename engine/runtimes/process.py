"""The process runtime: studymon's embedded container runtime for machines
without a Docker engine.

A *container* here is a detached process tree that outlives whoever started
it: ``run`` launches a small *shim* (:mod:`.shim`),
double-forked into its own session so it is reparented away from the caller;
the shim starts the command in its own process group, records its start, waits
for it, and records its exit.  The controller that called ``run`` may be
SIGKILLed at any moment; the run goes on and its exit is still recorded.

Everything lives in one folder (``$STUDYMON_PROCESS_RUNTIME``, default
``$XDG_STATE_HOME/studymon/process-runtime``), the user's alone (``0700``,
checked on every use, never followed through links: :mod:`.statedir`)::

    containers/<name>/state.json   the inspect, Docker-shaped; replaced whole (temp + rename)
    containers/<name>/shim.json    the shim's pid and start time, and the command's
    containers/<name>/stdout.log   the command's standard output (``logs``)
    containers/<name>/stderr.log   its standard error
    containers/<name>/shim.log     the shim's own output (diagnostics only)
    events/                        lifecycle events, Docker-shaped, in bounded segments (:mod:`.journal`)

An event is always appended *before* the state that it announces is written,
so whoever reads ``exited`` in a state can rely on the ``die`` being in the
journal already (the kill checks read the events after the result).

The shim is :mod:`.shim`; the command line is ``studymon runtime``
(:mod:`.cli`), which answers in docker's shapes and is what
``$STUDYMON_RUNTIME`` names.
"""

from __future__ import annotations

import builtins
import contextlib
import errno
import os
import re
import secrets
import select
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import psutil

from studymon.engine.io.clock import rfc3339_ns
from studymon.engine.io.notify import DEFAULT_MASK, IN_DONT_FOLLOW, Notifier
from studymon.engine.runtimes.base import ContainerConflict, Event, Inspect, NoSuchContainer
from studymon.engine.runtimes.journal import KEEP_SEGMENTS, SEGMENT_BYTES, Journal, event_ns
from studymon.engine.runtimes.statedir import StateDir

ROOT_ENV = "STUDYMON_PROCESS_RUNTIME"
DEFAULT_IMAGE = "process"
ZERO_TIME = "0001-01-01T00:00:00Z"  # Docker's "never"

# Docker's rule for container names; also keeps names safe as folder names.
NAME_RE = re.compile(r"^[a-zA-Z0-9][a-zA-Z0-9_.-]+$")

# How long ``wait`` sleeps at most between looks: the bound on noticing a change the
# folder watch missed.
_TICK = 0.5
# The same for ``stream``, which runs for as long as a console watches a study, one per
# study: woken at once by the watch and by ``stop``, its look at the journal for what the
# watch missed is a backstop, so it comes rarely (every 0.5 s, three streams were a quarter
# of an idle console's CPU; every 5 s, 48 idle studies' streams and their wakers still woke
# it twenty times a second).  Without a watch (a timer notifier) it is the only way events
# are seen, so it is short then.
_STREAM_TICK = 30.0
_STREAM_POLL = 0.1
# How long ``run`` and ``remove`` give the shim to start or finish.
_SHIM_DEADLINE = 15.0
# What a console or a terminal sends a study's whole process group; a shim must not get it on the way out.
GROUP_SIGNALS = frozenset({signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT})
# A container's folder while its creator fills it (``.unborn-<pid>-<hex>``), before it takes its name.
_UNBORN = ".unborn-"
# A shim whose process start time differs by more than this is another process (pid reused).
_START_TIME_SLACK = 0.05
# Exit codes in the Docker manner: killed by SIGKILL, lost (the shim died unseen).
_EXIT_KILLED = 128 + signal.SIGKILL
_EXIT_LOST = 255
# Watches never follow a link planted in place of a folder (it would only
# bring wake-ups from elsewhere, but there is no reason to take them).
_WATCH_MASK = DEFAULT_MASK | IN_DONT_FOLLOW

# The shim runs from the installed package, with no working folder on its import path.
# (Imported rather than run with ``-m``: the module is then loaded once, under its own name.)
_SHIM = ("-P", "-c", "import sys; from studymon.engine.runtimes.shim import main; sys.exit(main(sys.argv[1:]))")


def default_root() -> Path:
    """``$STUDYMON_PROCESS_RUNTIME``, else ``$XDG_STATE_HOME/studymon/process-runtime``."""
    explicit = os.environ.get(ROOT_ENV)
    if explicit:
        return Path(explicit).expanduser()
    state_home = os.environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    return Path(state_home) / "studymon" / "process-runtime"


def check_state_folder(root: Path | str | None = None) -> Path:
    """Make (``0700``) and check the state folder, before a command writes anything of its own.

    Raises :class:`UnsafeStateFolder` (a ``BadInput``: one line, exit 2) when
    it is not the user's alone; returns the folder otherwise.
    """
    return ProcessRuntime(root).root


def _process_alive(pid: int, start_time: float) -> bool:
    """Whether ``pid`` is still the process that started at ``start_time`` (pids get reused)."""
    if pid <= 0:
        return False
    try:
        proc = psutil.Process(pid)
        if abs(proc.create_time() - start_time) > _START_TIME_SLACK:
            return False
        return proc.status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:  # includes ZombieProcess
        return False
    except psutil.AccessDenied:
        return True  # someone else's live process: it exists


def exit_code(returncode: int) -> int:
    """Docker's convention: a command killed by signal N exits 128 + N."""
    return 128 - returncode if returncode < 0 else returncode


def lifecycle_event(action: str, state: Inspect, ns: int, **extra: str) -> Event:
    """A lifecycle event shaped like Docker's ``/events`` objects."""
    cid = state["Id"]
    image = state["Config"]["Image"]
    attributes = {**(state["Config"].get("Labels") or {}), "image": image, "name": state["Name"].lstrip("/"), **extra}
    return {
        "status": action,
        "id": cid,
        "from": image,
        "Type": "container",
        "Action": action,
        "Actor": {"ID": cid, "Attributes": dict(sorted(attributes.items()))},
        "scope": "local",
        "time": ns // 1_000_000_000,
        "timeNano": ns,
    }


def _in_window(event: Event, since: float, until: float) -> bool:
    return since <= event_ns(event) / 1e9 <= until


def _new_state(
    name: str, command: list[str], image: str | None, env: dict[str, str], labels: dict[str, str], ns: int
) -> Inspect:
    """The inspect of a container just created, with Docker's field names and zero times."""
    return {
        "Id": secrets.token_hex(32),
        "Created": rfc3339_ns(ns),
        "Path": command[0],
        "Args": command[1:],
        "State": {
            "Status": "created",
            "Running": False,
            "Paused": False,
            "Restarting": False,
            "OOMKilled": False,
            "Dead": False,
            "Pid": 0,
            "ExitCode": 0,
            "Error": "",
            "StartedAt": ZERO_TIME,
            "FinishedAt": ZERO_TIME,
        },
        "Name": "/" + name,
        "RestartCount": 0,
        "Driver": "process",
        "Platform": sys.platform,
        "Config": {
            "Hostname": socket.gethostname(),
            "Env": [f"{k}={v}" for k, v in env.items()],
            "Cmd": list(command),
            "Image": image or DEFAULT_IMAGE,
            "WorkingDir": os.getcwd(),
            "Labels": dict(labels),
        },
    }


class _StopWaker(threading.Thread):
    """Makes a pipe readable as soon as ``stop`` is set, so a ``select`` wakes at once.

    It waits in slices so that it also ends when the stream returns for
    another reason (within a slice, then); it closes the pipe once it ends
    and the stream has called :meth:`finish`.
    """

    def __init__(self, stop: threading.Event) -> None:
        super().__init__(name="process-events-waker", daemon=True)
        self._stop_event = stop
        self._done = threading.Event()
        self._closed = threading.Event()  # the stream is done with the pipe
        self.read_fd, self._write_fd = os.pipe2(os.O_CLOEXEC | os.O_NONBLOCK)

    def run(self) -> None:
        try:
            while not self._done.is_set():
                if self._stop_event.wait(_STREAM_TICK):
                    with contextlib.suppress(OSError):
                        os.write(self._write_fd, b"!")
                    return
        finally:
            self._closed.wait()  # the stream no longer selects on the pipe: it is the waker's to close
            os.close(self.read_fd)
            os.close(self._write_fd)

    def finish(self) -> None:
        """The stream is done: the waker ends at ``stop`` or within a slice, closing its pipe then.

        Joined when ``stop`` was set (it ends at once then); not when the stream returned
        without it (an error), which must not wait a slice.
        """
        self._done.set()
        self._closed.set()
        if self._stop_event.is_set():
            self.join()


class ProcessRuntime:
    """Containers as detached process trees, recorded under one folder."""

    kind = "process"

    def __init__(
        self,
        root: Path | str | None = None,
        *,
        segment_bytes: int = SEGMENT_BYTES,
        keep_segments: int = KEEP_SEGMENTS,
    ) -> None:
        """Open (and make, ``0700``) the state folder; :class:`UnsafeStateFolder` when it is not the user's alone."""
        self.root = Path(root) if root is not None else default_root()
        self.containers = self.root / "containers"
        self.trash = self.root / "trash"
        self.state = StateDir(self.root)
        self.state.prepare()
        with self.state.folder("containers", create=True):
            pass
        self.journal = Journal(self.state, segment_bytes, keep_segments)
        self.journal.prepare()

    # --- paths and records -------------------------------------------------
    def _check_name(self, name: str) -> None:
        if not NAME_RE.match(name):
            raise ValueError(f"invalid container name {name!r}: use [a-zA-Z0-9][a-zA-Z0-9_.-]+")

    @contextlib.contextmanager
    def _container(self, name: str) -> Iterator[int]:
        """The descriptor of the folder of ``name`` (:class:`FileNotFoundError` when there is none)."""
        self._check_name(name)
        with self.state.folder("containers", name) as dir_fd:
            yield dir_fd

    def _read(self, dir_fd: int, name: str, filename: str) -> dict[str, Any] | None:
        """A container's JSON file (state, shim, creator): None when missing, not (yet) JSON or not an object."""
        found = self.state.read_json(dir_fd, filename, self.containers / name / filename)
        return found if isinstance(found, dict) else None

    def _append_event(self, event: Event) -> None:
        self.journal.append(event)

    def _shim_record(self, name: str) -> dict[str, Any]:
        try:
            with self._container(name) as dir_fd:
                return self._read(dir_fd, name, "shim.json") or {}
        except FileNotFoundError:
            return {}

    # --- watching ------------------------------------------------------------
    def now(self) -> float:
        return time.time()

    def inspect(self, name: str) -> Inspect | None:
        try:
            self._check_name(name)
        except ValueError:
            return None
        try:
            with self._container(name) as dir_fd:
                state = self._read(dir_fd, name, "state.json")
        except FileNotFoundError:
            return None
        if state is None:
            return None
        return self._with_liveness(name, state)

    def _with_liveness(self, name: str, state: Inspect) -> Inspect | None:
        """Report ``dead`` when the state says the shim is at work but the shim is gone (None: removed meanwhile)."""
        st = state["State"]
        at_work = st["Status"] == "running" or (st["Status"] == "created" and not st.get("Error"))
        if not at_work:
            return state
        shim = self._shim_record(name)
        if not shim:
            try:
                with self._container(name) as dir_fd:
                    creator = self._read(dir_fd, name, "creator.json") or {}
            except FileNotFoundError:
                return state  # removed meanwhile
            if not creator or _process_alive(int(creator.get("Pid", 0)), float(creator.get("StartTime", 0))):
                return state  # ``run`` is still launching it
            if self._shim_record(name):
                return self.inspect(name)  # the shim came up as its creator ended: read it again
            # Created, and the process launching it ended before any shim: it never starts.
            st["Error"] = "its creator ended before starting it"
            return state
        if _process_alive(int(shim.get("Pid", 0)), float(shim.get("StartTime", 0))):
            return state
        # The shim may have written its final state and exited between our read
        # and the liveness check: read again before calling it dead.
        try:
            with self._container(name) as dir_fd:
                fresh = self._read(dir_fd, name, "state.json")
        except FileNotFoundError:
            fresh = None
        if fresh is not None and fresh["State"]["Status"] not in ("running", "created"):
            return fresh
        st.update(
            Status="dead",
            Running=False,
            Dead=True,
            ExitCode=_EXIT_LOST,
            Error=f"process runtime shim (pid {shim.get('Pid')}) is gone",
        )
        return state

    def list(self, prefix: str) -> list[Inspect]:
        with self.state.folder("containers", create=True) as containers_fd, os.scandir(containers_fd) as entries:
            # A link in place of a container folder is not a container: skipped, never followed.
            names = sorted(e.name for e in entries if e.is_dir(follow_symlinks=False))
        out: list[Inspect] = []
        for name in names:
            if name.startswith(prefix) and NAME_RE.match(name):
                found = self.inspect(name)
                if found is not None:
                    out.append(found)
        return out

    def events(self, since: float, until: float) -> builtins.list[Event]:
        """Events with ``since <= timeNano/1e9 <= until``, oldest first (of those the journal still keeps)."""
        return self._window(since, until)[0]

    def history(self, since: float, until: float) -> builtins.list[Event] | None:
        """The window's events, or None when the journal dropped some of them (rotated away)."""
        found, complete = self._window(since, until)
        return found if complete else None

    def _window(self, since: float, until: float) -> tuple[builtins.list[Event], bool]:
        # The journal selects segments by whole nanoseconds; a microsecond of
        # margin each way, then the float comparison callers have always had.
        window = self.journal.window(int(since * 1e9) - 1000, int(until * 1e9) + 1000)
        found = [e for e in window.events if _in_window(e, since, until)]
        found.sort(key=event_ns)  # stable: ties keep journal order
        return found, window.complete

    def stream(
        self,
        callback: Callable[[Event], None],
        stop: threading.Event,
        on_live: Callable[[float], None] | None = None,
        on_gap: Callable[[float, float], None] | None = None,
    ) -> None:
        """Tail the journal from its end until ``stop`` is set, following its rotations.

        A watch (:mod:`studymon.engine.io.notify`) on the journal's folder wakes
        the loop when a segment grows or a new one begins, and a helper makes
        ``stop`` wake it too, so it returns at once (the helper is joined
        before it does).  Lines lost to a segment truncated, or dropped before
        it was read, are told to ``on_gap``.
        """
        waker = _StopWaker(stop)
        waker.start()
        try:
            with Notifier() as notifier:
                notifier.watch(self.journal.folder_path, _WATCH_MASK)
                at = self.journal.tail_start()  # after the watch: nothing falls between
                if on_live is not None:
                    on_live(self.now())
                watched = [fd for fd in (notifier.fileno(), waker.read_fd) if fd >= 0]
                tick = _STREAM_TICK if notifier.active else _STREAM_POLL
                while not stop.is_set():
                    read_at = self.now()
                    at, lost = self.journal.tail(at, callback)
                    if lost and on_gap is not None:
                        on_gap(read_at, self.now())
                    if stop.is_set():
                        break
                    select.select(watched, [], [], tick)
                    notifier.drain()
        finally:
            waker.finish()

    # --- running -------------------------------------------------------------
    def run(
        self,
        name: str,
        command: builtins.list[str],
        *,
        image: str | None = None,
        env: dict[str, str] | None = None,
        labels: dict[str, str] | None = None,
    ) -> Inspect:
        if not command:
            raise ValueError("a container needs a command")
        self._check_name(name)
        with self.state.folder("containers", create=True) as containers_fd:
            self._sweep_unborn(containers_fd)
            ns = time.time_ns()
            state = _new_state(name, command, image, env or {}, labels or {}, ns)
            # Who is launching it: if that process dies before the shim is up
            # (a study killed between create and start), nobody ever will.
            me = psutil.Process()
            # A container appears whole: its folder is filled under a hidden name,
            # then renamed to its own (the atomic claim of the name).  A creator
            # killed at any moment leaves either nothing under the name, or a
            # created container whose creator is gone (reported in error, and
            # removable), never a folder that blocks the name for good.
            unborn = f"{_UNBORN}{me.pid}-{secrets.token_hex(4)}"
            os.mkdir(unborn, 0o700, dir_fd=containers_fd)
            claimed = False
            try:
                dir_fd = self.state.open_dir(containers_fd, unborn, self.containers / unborn)
                try:
                    self.state.write_json(dir_fd, "creator.json", {"Pid": me.pid, "StartTime": me.create_time()})
                    self.state.write_json(dir_fd, "state.json", state)
                    self._claim(containers_fd, unborn, name)
                    claimed = True
                    self._append_event(lifecycle_event("create", state, ns))
                except BaseException:
                    os.close(dir_fd)
                    raise
            except BaseException:
                # Nothing runs yet (the journal or the folder refused): give the
                # name back, so that a retry once it is fixed is no conflict.
                shutil.rmtree(name if claimed else unborn, dir_fd=containers_fd, ignore_errors=True)
                raise
        try:
            self._launch_shim(dir_fd, name)
        finally:
            os.close(dir_fd)
        return self._await_start(name)

    def _claim(self, containers_fd: int, unborn: str, name: str) -> None:
        """Rename the filled folder ``unborn`` to ``name``; a container already there is a conflict.

        A rename onto a folder that is not empty fails, and every container's
        folder holds its state.  One exception: a folder with no state whose
        creator is gone, left by a creator killed mid-way before containers
        were made whole; it holds nothing of anybody's, and is cleared once.
        """
        for attempt in (1, 2):
            try:
                os.rename(unborn, name, src_dir_fd=containers_fd, dst_dir_fd=containers_fd)
            except OSError as exc:
                if exc.errno not in (errno.ENOTEMPTY, errno.EEXIST, errno.ENOTDIR, errno.EISDIR):
                    raise
                if attempt == 1 and self._clear_stillborn(containers_fd, name):
                    continue
                raise ContainerConflict(f"a container named {name!r} exists already") from exc
            else:
                return

    def _clear_stillborn(self, containers_fd: int, name: str) -> bool:
        """Remove ``name`` if it is a folder without ``state.json`` whose creator has ended."""
        try:
            dir_fd = self.state.open_dir(containers_fd, name, self.containers / name)
        except OSError:
            return False  # not a folder (or a link): never touched
        try:
            if self._read(dir_fd, name, "state.json") is not None:
                return False
            creator = self._read(dir_fd, name, "creator.json") or {}
        except (OSError, ValueError):
            return False
        finally:
            os.close(dir_fd)
        if creator and _process_alive(int(creator.get("Pid", 0)), float(creator.get("StartTime", 0))):
            return False
        if not creator and time.time() - os.stat(name, dir_fd=containers_fd, follow_symlinks=False).st_mtime < 60:
            return False  # made a moment ago, its creator may be writing it still
        grave = f".stillborn-{name}-{secrets.token_hex(3)}"
        try:
            os.rename(name, grave, src_dir_fd=containers_fd, dst_dir_fd=containers_fd)
        except OSError:
            return False
        shutil.rmtree(grave, dir_fd=containers_fd, ignore_errors=True)
        return True

    def _sweep_unborn(self, containers_fd: int) -> None:
        """Delete folders that creators killed mid-way left under a hidden name."""
        with os.scandir(containers_fd) as entries:
            hidden = [
                e.name
                for e in entries
                if e.name.startswith((_UNBORN, ".stillborn-")) and e.is_dir(follow_symlinks=False)
            ]
        for entry in hidden:
            if entry.startswith(_UNBORN):
                pid = entry[len(_UNBORN) :].partition("-")[0]
                if pid.isdigit() and psutil.pid_exists(int(pid)):
                    continue  # its creator may be filling it now
            shutil.rmtree(entry, dir_fd=containers_fd, ignore_errors=True)

    def _launch_shim(self, dir_fd: int, name: str) -> None:
        """Start the shim fully detached: a new session, and a fork whose parent exits at once.

        The shim is then nobody's child here (no zombie left for this process
        to reap) and shares no group, terminal or pipe with the caller.
        """
        log_fd = self.state.open_file(
            dir_fd, "shim.log", os.O_WRONLY | os.O_CREAT | os.O_APPEND, self.containers / name / "shim.log"
        )
        # From the fork to its new session the child is in the caller's process group: a signal sent to that
        # group then (a console stopping the study with SIGINT) killed it before it ran, and the container
        # could not be made.  Blocked here, such a signal stays pending in the child, which discards it.
        blocked = signal.pthread_sigmask(signal.SIG_BLOCK, GROUP_SIGNALS)
        try:
            intermediate = subprocess.Popen(
                [sys.executable, *_SHIM, "--detach", str(self.root), name],
                stdin=subprocess.DEVNULL,
                stdout=log_fd,
                stderr=log_fd,
                start_new_session=True,
                close_fds=True,
            )
        finally:
            signal.pthread_sigmask(signal.SIG_SETMASK, blocked)
            os.close(log_fd)
        code = intermediate.wait(timeout=_SHIM_DEADLINE)
        if code != 0:
            raise RuntimeError(f"the process runtime could not start the shim of {name!r}: {self._shim_log(name)}")

    def _shim_log(self, name: str) -> str:
        try:
            with self._container(name) as dir_fd:
                data = self.state.read_bytes(dir_fd, "shim.log", self.containers / name / "shim.log")
        except OSError:
            return "(no shim.log)"
        return data.decode(errors="replace").strip()[-2000:] or "(no output)"

    def _await_start(self, name: str) -> Inspect:
        """The state once the shim has started the command (or failed to)."""
        deadline = time.monotonic() + _SHIM_DEADLINE
        with Notifier() as notifier:
            notifier.watch(self.containers / name, _WATCH_MASK)
            while True:
                state = self.inspect(name)
                if state is None:
                    raise NoSuchContainer(name)
                st = state["State"]
                if st.get("Error") and st["Status"] == "created":
                    raise RuntimeError(f"container {name!r} did not start: {st['Error']}")
                if st["Status"] != "created":
                    return state
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise RuntimeError(
                        f"container {name!r} did not start within {_SHIM_DEADLINE:g} s: {self._shim_log(name)}"
                    )
                notifier.wait(min(_TICK, remaining))

    def wait(self, name: str, timeout: float | None = None) -> int | None:
        """The exit code once ``name`` has exited, or None after ``timeout`` seconds.

        A container whose shim died is waited for until its command is gone
        too, and gives 255 (its real exit code was not seen by anyone).
        """
        self._check_name(name)
        deadline = None if timeout is None else time.monotonic() + timeout
        with Notifier() as notifier:
            notifier.watch(self.containers / name, _WATCH_MASK)
            while True:
                state = self.inspect(name)
                if state is None:
                    raise NoSuchContainer(name)
                code = self._final_code(name, state)
                if code is not None:
                    return code
                remaining = None if deadline is None else deadline - time.monotonic()
                if remaining is not None and remaining <= 0:
                    return None
                notifier.wait(_TICK if remaining is None else min(_TICK, remaining))

    def _final_code(self, name: str, state: Inspect) -> int | None:
        st = state["State"]
        if st["Status"] == "exited" or (st["Status"] == "created" and st.get("Error")):
            return int(st["ExitCode"])
        if st["Status"] == "dead" and not self._command_alive(name):
            return int(st["ExitCode"])
        return None

    def _command_alive(self, name: str) -> bool:
        shim = self._shim_record(name)
        return _process_alive(int(shim.get("CommandPid", 0)), float(shim.get("CommandStartTime", 0)))

    def logs(self, name: str, stderr: bool = False) -> str:
        """What the container wrote to standard output (to standard error with ``stderr``)."""
        filename = "stderr.log" if stderr else "stdout.log"
        try:
            with self._container(name) as dir_fd:
                if self._read(dir_fd, name, "state.json") is None:
                    raise NoSuchContainer(name)
                try:
                    data = self.state.read_bytes(dir_fd, filename, self.containers / name / filename)
                except FileNotFoundError:
                    return ""
        except FileNotFoundError as exc:
            raise NoSuchContainer(name) from exc
        return data.decode("utf-8", errors="replace")

    def remove(self, name: str, force: bool = False) -> None:
        """Remove ``name``; with ``force`` a running one is SIGKILLed first (its die is recorded)."""
        self._check_name(name)
        state = self.inspect(name)
        if state is None:
            raise NoSuchContainer(name)
        if state["State"]["Status"] == "created" and not state["State"].get("Error"):
            state = self._await_start(name)  # removing mid-start: let the start finish first
        status = state["State"]["Status"]
        if status == "running":
            if not force:
                raise ContainerConflict(f"container {name!r} is running; stop it or remove it with force")
            state = self._kill_running(name, state)
            status = state["State"]["Status"]
        if status == "dead" and self._command_alive(name):
            if not force:
                raise ContainerConflict(f"container {name!r} still has a running command; remove it with force")
            self._kill_orphan(name, state)
        self._destroy(name, state)

    def close(self) -> None:
        """Nothing to release: every call opens and closes what it uses."""

    def _kill_running(self, name: str, state: Inspect) -> Inspect:
        """SIGKILL the command's group and let the shim record the die."""
        self._kill_command_group(name, state)
        shim = self._shim_record(name)
        deadline = time.monotonic() + _SHIM_DEADLINE
        # The shim exits right after writing ``exited``; polling psutil briefly is the
        # simplest sure sign that it is done (it is not our child, no waitpid).
        while _process_alive(int(shim.get("Pid", 0)), float(shim.get("StartTime", 0))):
            if time.monotonic() > deadline:
                raise RuntimeError(f"container {name!r} did not stop within {_SHIM_DEADLINE:g} s after SIGKILL")
            time.sleep(0.01)
        return self.inspect(name) or state

    def _kill_command_group(self, name: str, state: Inspect) -> bool:
        """SIGKILL the command's process group, recording ``kill`` first as Docker does."""
        shim = self._shim_record(name)
        pid = int(shim.get("CommandPid", 0))
        if not _process_alive(pid, float(shim.get("CommandStartTime", 0))):
            return False
        self._append_event(lifecycle_event("kill", state, time.time_ns(), signal=str(int(signal.SIGKILL))))
        try:
            os.killpg(pid, signal.SIGKILL)  # the command leads its own group
        except ProcessLookupError:
            return False
        return True

    def _kill_orphan(self, name: str, state: Inspect) -> None:
        """A dead shim cannot record the die of the command it left: record it here, once it is dead.

        SIGKILL lands asynchronously; like Docker's forced remove, this returns
        only when the command is gone, so the ``die`` is never early.
        """
        if self._kill_command_group(name, state):
            shim = self._shim_record(name)
            pid, start = int(shim.get("CommandPid", 0)), float(shim.get("CommandStartTime", 0))
            deadline = time.monotonic() + _SHIM_DEADLINE
            while _process_alive(pid, start):
                if time.monotonic() > deadline:
                    raise RuntimeError(f"the command of {state['Name']!r} did not die within {_SHIM_DEADLINE:g} s")
                time.sleep(0.01)
            self._append_event(lifecycle_event("die", state, time.time_ns(), exitCode=str(_EXIT_KILLED)))

    def _destroy(self, name: str, state: Inspect) -> None:
        """Free the name atomically (rename away), record ``destroy``, then delete the files."""
        grave = f"{name}-{state['Id'][:12]}-{secrets.token_hex(3)}"
        with self.state.folder() as root_fd:
            containers_fd = self.state.open_dir(root_fd, "containers", self.containers)
            try:
                trash_fd = self.state.open_dir(root_fd, "trash", self.trash, create=True)
                try:
                    try:
                        os.rename(name, grave, src_dir_fd=containers_fd, dst_dir_fd=trash_fd)
                    except FileNotFoundError as exc:
                        raise NoSuchContainer(name) from exc
                    self._append_event(lifecycle_event("destroy", state, time.time_ns()))
                    # Through the trash's descriptor: rmtree never follows a link it meets.
                    shutil.rmtree(grave, dir_fd=trash_fd, ignore_errors=True)
                finally:
                    os.close(trash_fd)
            finally:
                os.close(containers_fd)
