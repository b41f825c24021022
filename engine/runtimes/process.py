"""The process runtime: studymon's embedded container runtime for machines
without a Docker engine.

A *container* here is a detached process tree that outlives whoever started
it: ``run`` launches a small *shim* (this module, hidden ``_shim`` command),
double-forked into its own session so it is reparented away from the caller;
the shim starts the command in its own process group, records its start, waits
for it, and records its exit.  The controller that called ``run`` may be
SIGKILLed at any moment; the run goes on and its exit is still recorded.

Everything lives in one folder (``$STUDYMON_PROCESS_RUNTIME``, default
``$XDG_STATE_HOME/studymon/process-runtime``)::

    containers/<name>/state.json   the inspect, Docker-shaped; replaced whole (temp + rename)
    containers/<name>/shim.json    the shim's pid and start time, and the command's
    containers/<name>/stdout.log   the command's standard output (``logs``)
    containers/<name>/stderr.log   its standard error
    containers/<name>/shim.log     the shim's own output (diagnostics only)
    events.jsonl                   lifecycle events, Docker-shaped, one line per single O_APPEND write

An event is always appended *before* the state that it announces is written,
so whoever reads ``exited`` in a state can rely on the ``die`` being in
``events.jsonl`` already (the kill checks read the events after the result).

The module is also a small CLI, so studies written in other languages can use
the runtime: ``python -m engine.runtimes.process ps|inspect|events|logs|rm|run|wait``.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any, Callable

import psutil

from engine.clock import parse_rfc3339, rfc3339_ns
from engine.evidence import append_jsonl, read_jsonl
from engine.notify import Notifier
from engine.runtimes.base import ContainerConflict, Event, Inspect, NoSuchContainer

ROOT_ENV = "STUDYMON_PROCESS_RUNTIME"
DEFAULT_IMAGE = "process"
ZERO_TIME = "0001-01-01T00:00:00Z"  # Docker's "never"

# Docker's rule for container names; also keeps names safe as folder names.
NAME_RE = re.compile(r"^[a-zA-Z0-9][a-zA-Z0-9_.-]+$")

# How long ``stream`` and ``wait`` sleep at most between looks: the bound on
# noticing ``stop`` (the inotify watch wakes them at once on a real change).
_TICK = 0.5
# How long ``run`` and ``remove`` give the shim to start or finish.
_SHIM_DEADLINE = 15.0
# A shim whose process start time differs by more than this is another process (pid reused).
_START_TIME_SLACK = 0.05
# Exit codes in the Docker manner: killed by SIGKILL, lost (the shim died unseen).
_EXIT_KILLED = 128 + signal.SIGKILL
_EXIT_LOST = 255

_PROJECT_ROOT = Path(__file__).resolve().parents[2]
# The shim is started by path, so it works without the project being installed.
_BOOT = "import sys; sys.path.insert(0, sys.argv[1]); from engine.runtimes.process import main; sys.exit(main(sys.argv[2:]))"


def default_root() -> Path:
    """``$STUDYMON_PROCESS_RUNTIME``, else ``$XDG_STATE_HOME/studymon/process-runtime``."""
    explicit = os.environ.get(ROOT_ENV)
    if explicit:
        return Path(explicit).expanduser()
    state_home = os.environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    return Path(state_home) / "studymon" / "process-runtime"


# --- small file helpers ------------------------------------------------------
def _write_json_at(dir_fd: int, filename: str, obj: Any) -> None:
    """Replace ``filename`` in the folder ``dir_fd`` whole: readers see the old or the new, never half.

    Working through a folder descriptor means a shim whose container was
    removed (folder renamed away) can never write into a new container that
    reuses the name.
    """
    data = (json.dumps(obj, indent=1) + "\n").encode()
    tmp = f".{filename}.{os.getpid()}.{secrets.token_hex(3)}.tmp"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644, dir_fd=dir_fd)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
    finally:
        os.close(fd)
    os.replace(tmp, filename, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)


def _read_json(path: Path) -> Any | None:
    try:
        with open(path, encoding="utf-8") as fh:
            return json.load(fh)
    except (FileNotFoundError, NotADirectoryError, json.JSONDecodeError):
        return None


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


def _exit_code(returncode: int) -> int:
    """Docker's convention: a command killed by signal N exits 128 + N."""
    return 128 - returncode if returncode < 0 else returncode


def _event(action: str, state: Inspect, ns: int, **extra: str) -> Event:
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
    return since <= int(event.get("timeNano", 0)) / 1e9 <= until


def _new_state(name: str, command: list[str], image: str | None, env: dict[str, str], labels: dict[str, str], ns: int) -> Inspect:
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


class ProcessRuntime:
    """Containers as detached process trees, recorded under one folder."""

    kind = "process"

    def __init__(self, root: Path | str | None = None) -> None:
        self.root = Path(root) if root is not None else default_root()
        self.containers = self.root / "containers"
        self.trash = self.root / "trash"
        self.events_path = self.root / "events.jsonl"
        self.containers.mkdir(parents=True, exist_ok=True)

    # --- paths and records -------------------------------------------------
    def _folder(self, name: str) -> Path:
        if not NAME_RE.match(name):
            raise ValueError(f"invalid container name {name!r}: use [a-zA-Z0-9][a-zA-Z0-9_.-]+")
        return self.containers / name

    def _append_event(self, event: Event) -> None:
        append_jsonl(self.events_path, event)

    def _shim_record(self, folder: Path) -> dict[str, Any]:
        return _read_json(folder / "shim.json") or {}

    # --- watching ------------------------------------------------------------
    def now(self) -> float:
        return time.time()

    def inspect(self, name: str) -> Inspect | None:
        try:
            folder = self._folder(name)
        except ValueError:
            return None
        state = _read_json(folder / "state.json")
        if state is None:
            return None
        return self._with_liveness(folder, state)

    def _with_liveness(self, folder: Path, state: Inspect) -> Inspect:
        """Report ``dead`` when the state says the shim is at work but the shim is gone."""
        st = state["State"]
        at_work = st["Status"] == "running" or (st["Status"] == "created" and not st.get("Error"))
        if not at_work:
            return state
        shim = self._shim_record(folder)
        if not shim:
            return state  # ``run`` is still launching it
        if _process_alive(int(shim.get("Pid", 0)), float(shim.get("StartTime", 0))):
            return state
        # The shim may have written its final state and exited between our read
        # and the liveness check: read again before calling it dead.
        fresh = _read_json(folder / "state.json")
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
        try:
            entries = sorted(e.name for e in os.scandir(self.containers) if e.is_dir())
        except FileNotFoundError:
            return []
        out: list[Inspect] = []
        for name in entries:
            if name.startswith(prefix) and NAME_RE.match(name):
                found = self.inspect(name)
                if found is not None:
                    out.append(found)
        return out

    def events(self, since: float, until: float) -> list[Event]:
        """Events with ``since <= timeNano/1e9 <= until``, oldest first.

        Reads the whole journal: it holds a few lines per run, so even a long
        history is small; unlike Docker's 256-event memory it is never cut.
        """
        found = [e for e in read_jsonl(self.events_path) if isinstance(e, dict) and _in_window(e, since, until)]
        found.sort(key=lambda e: int(e.get("timeNano", 0)))  # stable: ties keep journal order
        return found

    def history(self, since: float, until: float) -> list[Event] | None:
        """The window's events: the journal keeps every event, so it always shows them all."""
        return self.events(since, until)

    def stream(
        self,
        callback: Callable[[Event], None],
        stop: threading.Event,
        on_live: Callable[[float], None] | None = None,
        on_gap: Callable[[float, float], None] | None = None,
    ) -> None:
        """Tail ``events.jsonl`` from its end until ``stop`` is set.

        An inotify watch on the root folder wakes the loop when the journal
        grows; the timeout only bounds how late ``stop`` is noticed.  A
        journal that shrank was replaced: what was appended to the old one
        after the last read is lost, and ``on_gap`` says so.
        """
        with Notifier() as notifier:
            notifier.watch(self.root)
            offset = self._journal_size()  # after the watch: nothing falls between
            if on_live is not None:
                on_live(self.now())
            while not stop.is_set():
                read_at = self.now()
                offset, replaced = self._deliver_from(offset, callback)
                if replaced and on_gap is not None:
                    on_gap(read_at, self.now())
                notifier.wait(_TICK)

    def _journal_size(self) -> int:
        try:
            return self.events_path.stat().st_size
        except FileNotFoundError:
            return 0

    def _deliver_from(self, offset: int, callback: Callable[[Event], None]) -> tuple[int, bool]:
        """Hand over every complete line after ``offset``: the offset after the last one, and
        whether the journal was replaced (it shrank) since the last read."""
        replaced = False
        try:
            with open(self.events_path, "rb") as fh:
                if os.fstat(fh.fileno()).st_size < offset:
                    offset, replaced = 0, True  # journal replaced: start over
                fh.seek(offset)
                data = fh.read()
        except FileNotFoundError:
            return 0, offset > 0
        end = data.rfind(b"\n")
        if end < 0:
            return offset, replaced  # only a torn line so far: wait for its end
        for line in data[: end + 1].splitlines():
            try:
                event = json.loads(line)
            except json.JSONDecodeError:
                continue
            if isinstance(event, dict):
                callback(event)
        return offset + end + 1, replaced

    # --- running -------------------------------------------------------------
    def run(
        self,
        name: str,
        command: list[str],
        *,
        image: str | None = None,
        env: dict[str, str] | None = None,
        labels: dict[str, str] | None = None,
    ) -> Inspect:
        if not command:
            raise ValueError("a container needs a command")
        folder = self._folder(name)
        try:
            folder.mkdir()  # the atomic claim of the name
        except FileExistsError as exc:
            raise ContainerConflict(f"a container named {name!r} exists already") from exc
        ns = time.time_ns()
        state = _new_state(name, command, image, env or {}, labels or {}, ns)
        dir_fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
        try:
            self._append_event(_event("create", state, ns))
            _write_json_at(dir_fd, "state.json", state)
        finally:
            os.close(dir_fd)
        self._launch_shim(folder, name)
        return self._await_start(folder, name)

    def _launch_shim(self, folder: Path, name: str) -> None:
        """Start the shim fully detached: a new session, and a fork whose parent exits at once.

        The shim is then nobody's child here (no zombie left for this process
        to reap) and shares no group, terminal or pipe with the caller.
        """
        log_fd = os.open(folder / "shim.log", os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
        try:
            intermediate = subprocess.Popen(
                [sys.executable, "-c", _BOOT, str(_PROJECT_ROOT), "_shim", "--detach", str(self.root), name],
                stdin=subprocess.DEVNULL,
                stdout=log_fd,
                stderr=log_fd,
                start_new_session=True,
                close_fds=True,
            )
        finally:
            os.close(log_fd)
        code = intermediate.wait(timeout=_SHIM_DEADLINE)
        if code != 0:
            raise RuntimeError(f"the process runtime could not start the shim of {name!r}: {self._shim_log(folder)}")

    def _shim_log(self, folder: Path) -> str:
        try:
            return (folder / "shim.log").read_text(errors="replace").strip()[-2000:] or "(no output)"
        except OSError:
            return "(no shim.log)"

    def _await_start(self, folder: Path, name: str) -> Inspect:
        """The state once the shim has started the command (or failed to)."""
        deadline = time.monotonic() + _SHIM_DEADLINE
        with Notifier() as notifier:
            notifier.watch(folder)
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
                    raise RuntimeError(f"container {name!r} did not start within {_SHIM_DEADLINE:g} s: {self._shim_log(folder)}")
                notifier.wait(min(_TICK, remaining))

    def wait(self, name: str, timeout: float | None = None) -> int | None:
        """The exit code once ``name`` has exited, or None after ``timeout`` seconds.

        A container whose shim died is waited for until its command is gone
        too, and gives 255 (its real exit code was not seen by anyone).
        """
        folder = self._folder(name)
        deadline = None if timeout is None else time.monotonic() + timeout
        with Notifier() as notifier:
            notifier.watch(folder)
            while True:
                state = self.inspect(name)
                if state is None:
                    raise NoSuchContainer(name)
                code = self._final_code(folder, state)
                if code is not None:
                    return code
                remaining = None if deadline is None else deadline - time.monotonic()
                if remaining is not None and remaining <= 0:
                    return None
                notifier.wait(_TICK if remaining is None else min(_TICK, remaining))

    def _final_code(self, folder: Path, state: Inspect) -> int | None:
        st = state["State"]
        if st["Status"] == "exited" or (st["Status"] == "created" and st.get("Error")):
            return int(st["ExitCode"])
        if st["Status"] == "dead" and not self._command_alive(folder):
            return int(st["ExitCode"])
        return None

    def _command_alive(self, folder: Path) -> bool:
        shim = self._shim_record(folder)
        return _process_alive(int(shim.get("CommandPid", 0)), float(shim.get("CommandStartTime", 0)))

    def logs(self, name: str) -> str:
        folder = self._folder(name)
        if not (folder / "state.json").exists():
            raise NoSuchContainer(name)
        try:
            return (folder / "stdout.log").read_bytes().decode("utf-8", errors="replace")
        except FileNotFoundError:
            return ""

    def remove(self, name: str, force: bool = False) -> None:
        """Remove ``name``; with ``force`` a running one is SIGKILLed first (its die is recorded)."""
        folder = self._folder(name)
        state = self.inspect(name)
        if state is None:
            raise NoSuchContainer(name)
        if state["State"]["Status"] == "created" and not state["State"].get("Error"):
            state = self._await_start(folder, name)  # removing mid-start: let the start finish first
        status = state["State"]["Status"]
        if status == "running":
            if not force:
                raise ContainerConflict(f"container {name!r} is running; stop it or remove it with force")
            state = self._kill_running(folder, name, state)
            status = state["State"]["Status"]
        if status == "dead" and self._command_alive(folder):
            if not force:
                raise ContainerConflict(f"container {name!r} still has a running command; remove it with force")
            self._kill_orphan(folder, state)
        self._destroy(folder, state)

    def _kill_running(self, folder: Path, name: str, state: Inspect) -> Inspect:
        """SIGKILL the command's group and let the shim record the die."""
        self._kill_command_group(folder, state)
        shim = self._shim_record(folder)
        deadline = time.monotonic() + _SHIM_DEADLINE
        # The shim exits right after writing ``exited``; polling psutil briefly is the
        # simplest sure sign that it is done (it is not our child, no waitpid).
        while _process_alive(int(shim.get("Pid", 0)), float(shim.get("StartTime", 0))):
            if time.monotonic() > deadline:
                raise RuntimeError(f"container {name!r} did not stop within {_SHIM_DEADLINE:g} s after SIGKILL")
            time.sleep(0.01)
        return self.inspect(name) or state

    def _kill_command_group(self, folder: Path, state: Inspect) -> bool:
        """SIGKILL the command's process group, recording ``kill`` first as Docker does."""
        shim = self._shim_record(folder)
        pid = int(shim.get("CommandPid", 0))
        if not _process_alive(pid, float(shim.get("CommandStartTime", 0))):
            return False
        self._append_event(_event("kill", state, time.time_ns(), signal=str(int(signal.SIGKILL))))
        try:
            os.killpg(pid, signal.SIGKILL)  # the command leads its own group
        except ProcessLookupError:
            return False
        return True

    def _kill_orphan(self, folder: Path, state: Inspect) -> None:
        """A dead shim cannot record the die of the command it left: record it here, once it is dead.

        SIGKILL lands asynchronously; like Docker's forced remove, this returns
        only when the command is gone, so the ``die`` is never early.
        """
        if self._kill_command_group(folder, state):
            shim = self._shim_record(folder)
            pid, start = int(shim.get("CommandPid", 0)), float(shim.get("CommandStartTime", 0))
            deadline = time.monotonic() + _SHIM_DEADLINE
            while _process_alive(pid, start):
                if time.monotonic() > deadline:
                    raise RuntimeError(f"the command of {state['Name']!r} did not die within {_SHIM_DEADLINE:g} s")
                time.sleep(0.01)
            self._append_event(_event("die", state, time.time_ns(), exitCode=str(_EXIT_KILLED)))

    def _destroy(self, folder: Path, state: Inspect) -> None:
        """Free the name atomically (rename away), record ``destroy``, then delete the files."""
        self.trash.mkdir(exist_ok=True)
        grave = self.trash / f"{folder.name}-{state['Id'][:12]}-{secrets.token_hex(3)}"
        try:
            os.rename(folder, grave)
        except FileNotFoundError as exc:
            raise NoSuchContainer(folder.name) from exc
        self._append_event(_event("destroy", state, time.time_ns()))
        shutil.rmtree(grave, ignore_errors=True)


# --- the shim ------------------------------------------------------------------
def _shim(root: Path, name: str) -> int:
    """Start the command of ``name``, record its start, wait, record its exit."""
    runtime = ProcessRuntime(root)
    folder = runtime.containers / name
    dir_fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    state = _read_json(folder / "state.json")
    me = {"Pid": os.getpid(), "StartTime": psutil.Process().create_time()}
    _write_json_at(dir_fd, "shim.json", me)
    config = state["Config"]
    child = _start_command(dir_fd, config)
    if isinstance(child, OSError):
        _record_start_failure(dir_fd, state, child)
        return 0
    me.update(CommandPid=child.pid, CommandStartTime=_start_time_of(child.pid))
    _write_json_at(dir_fd, "shim.json", me)
    _record_start(runtime, dir_fd, state, child.pid)
    _forward_termination(child)
    code = _exit_code(child.wait())
    _record_exit(runtime, dir_fd, state, code)
    return 0


def _start_time_of(pid: int) -> float:
    try:
        return psutil.Process(pid).create_time()
    except psutil.Error:
        return 0.0  # already gone: nothing will ever need to kill it


def _start_command(dir_fd: int, config: dict[str, Any]) -> subprocess.Popen[bytes] | OSError:
    env = dict(os.environ)
    env.update(item.split("=", 1) for item in config.get("Env") or [] if "=" in item)
    out = os.open("stdout.log", os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644, dir_fd=dir_fd)
    err = os.open("stderr.log", os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644, dir_fd=dir_fd)
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


def _record_start_failure(dir_fd: int, state: Inspect, exc: OSError) -> None:
    # Docker leaves such a container "created" with 127 (not found) or 126 (not executable).
    code = 127 if isinstance(exc, FileNotFoundError) else 126
    state["State"].update(ExitCode=code, Error=f"cannot start {state['Config']['Cmd'][0]!r}: {exc.strerror or exc}")
    _write_json_at(dir_fd, "state.json", state)


def _record_start(runtime: ProcessRuntime, dir_fd: int, state: Inspect, pid: int) -> None:
    ns = time.time_ns()
    runtime._append_event(_event("start", state, ns))
    state["State"].update(Status="running", Running=True, Pid=pid, StartedAt=rfc3339_ns(ns))
    _write_json_at(dir_fd, "state.json", state)


def _record_exit(runtime: ProcessRuntime, dir_fd: int, state: Inspect, code: int) -> None:
    ns = time.time_ns()
    runtime._append_event(_event("die", state, ns, exitCode=str(code)))
    state["State"].update(Status="exited", Running=False, Pid=0, ExitCode=code, FinishedAt=rfc3339_ns(ns))
    _write_json_at(dir_fd, "state.json", state)


def _forward_termination(child: subprocess.Popen[bytes]) -> None:
    """SIGTERM to the shim stops the container the way ``docker stop`` does: the group gets it."""

    def forward(signum: int, _frame: object) -> None:
        try:
            os.killpg(child.pid, signum)
        except ProcessLookupError:
            pass

    signal.signal(signal.SIGTERM, forward)


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


# --- the command line ------------------------------------------------------------
def _time_arg(text: str) -> float:
    """Epoch seconds, or an RFC 3339 time."""
    try:
        return float(text)
    except ValueError:
        return parse_rfc3339(text)


def _pairs(items: list[str] | None) -> dict[str, str]:
    out: dict[str, str] = {}
    for item in items or []:
        key, sep, value = item.partition("=")
        if not sep:
            raise SystemExit(f"expected KEY=VALUE, got {item!r}")
        out[key] = value
    return out


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m engine.runtimes.process",
        description=f"studymon's process container runtime (state in ${ROOT_ENV}, default {default_root()}).",
    )
    sub = parser.add_subparsers(dest="cmd", required=True)
    ps = sub.add_parser("ps", help="list containers")
    ps.add_argument("--prefix", default="", help="only names starting with this")
    ps.add_argument("--json", action="store_true", help="print the inspects as a JSON list")
    sub.add_parser("inspect", help="print a container's inspect (JSON)").add_argument("name")
    ev = sub.add_parser("events", help="print lifecycle events in a window, one JSON per line")
    ev.add_argument("--since", type=_time_arg, default=0.0, help="epoch seconds or RFC 3339 (default: the beginning)")
    ev.add_argument("--until", type=_time_arg, default=None, help="epoch seconds or RFC 3339 (default: now)")
    sub.add_parser("logs", help="print a container's standard output").add_argument("name")
    rm = sub.add_parser("rm", help="remove a container")
    rm.add_argument("-f", "--force", action="store_true", help="kill it first when it runs")
    rm.add_argument("name")
    run = sub.add_parser("run", help="start a detached container; prints its inspect")
    run.add_argument("--name", required=True)
    run.add_argument("--image", default=None, help="recorded only")
    run.add_argument("-e", "--env", action="append", help="KEY=VALUE added to the environment")
    run.add_argument("-l", "--label", action="append", help="KEY=VALUE label")
    run.add_argument("command", nargs=argparse.REMAINDER, help="the command (after --)")
    wait = sub.add_parser("wait", help="wait for a container to exit; prints its exit code")
    wait.add_argument("--timeout", type=float, default=None)
    wait.add_argument("name")
    shim = sub.add_parser("_shim", help=argparse.SUPPRESS)
    shim.add_argument("--detach", action="store_true")
    shim.add_argument("root")
    shim.add_argument("name")
    return parser


def _print_ps(items: list[Inspect]) -> None:
    print(f"{'NAME':40} {'STATUS':8} {'EXIT':>4}  {'STARTED':30} ID")
    for item in items:
        st = item["State"]
        print(f"{item['Name'].lstrip('/'):40} {st['Status']:8} {st['ExitCode']:>4}  {st['StartedAt']:30} {item['Id'][:12]}")


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    if args.cmd == "_shim":
        if args.detach:
            return _detach_and_shim(Path(args.root), args.name)
        return _shim(Path(args.root), args.name)
    rt = ProcessRuntime()
    try:
        return _command(rt, args)
    except (NoSuchContainer, ContainerConflict, ValueError, RuntimeError) as exc:
        message = f"No such container: {exc}" if isinstance(exc, NoSuchContainer) else str(exc)
        print(f"Error: {message}", file=sys.stderr)
        return 1


def _command(rt: ProcessRuntime, args: argparse.Namespace) -> int:
    if args.cmd == "ps":
        items = rt.list(args.prefix)
        if args.json:
            print(json.dumps(items, indent=1))
        else:
            _print_ps(items)
    elif args.cmd == "inspect":
        found = rt.inspect(args.name)
        if found is None:
            raise NoSuchContainer(args.name)
        print(json.dumps(found, indent=1))
    elif args.cmd == "events":
        until = rt.now() if args.until is None else args.until
        for event in rt.events(args.since, until):
            print(json.dumps(event))
    elif args.cmd == "logs":
        sys.stdout.write(rt.logs(args.name))
    elif args.cmd == "rm":
        rt.remove(args.name, force=args.force)
        print(args.name)
    elif args.cmd == "run":
        command = args.command[1:] if args.command[:1] == ["--"] else args.command
        found = rt.run(args.name, command, image=args.image, env=_pairs(args.env), labels=_pairs(args.label))
        print(json.dumps(found, indent=1))
    elif args.cmd == "wait":
        code = rt.wait(args.name, args.timeout)
        if code is None:
            print("timeout", file=sys.stderr)
            return 1
        print(code)
    return 0


if __name__ == "__main__":
    sys.exit(main())
