"""The Docker container runtime: the :class:`~engine.runtimes.base.Runtime`
interface over the ``docker`` SDK (Engine API), on the engine that
``DOCKER_HOST`` names, or the default socket.

Inspects and events are Docker's own, passed through verbatim; this module only
adds the clock offset to the daemon, exact time windows for ``events`` and a
stream that stops promptly.

Two facts about the engine shape the code (measured on Engine 20.10, API 1.41):

* ``/events`` accepts ``since``/``until`` as ``"<seconds>.<9 digits>"`` and
  compares them with each event's ``timeNano``, inclusively, to the
  nanosecond.  A float of epoch seconds only resolves ~240 ns, so a window is
  widened by a microsecond on the way to the engine and then cut exactly on our
  side: an event belongs to ``[since, until]`` when
  ``since <= timeNano / 1e9 <= until``.
* The engine remembers only its last 256 events (all types, including the
  network connect/disconnect that come with every container run), in memory,
  and forgets them on restart.  ``events`` for a window further back returns
  what is left; whoever needs a complete history must ``stream`` it as it
  happens.

An engine that restarts keeps its ``ID`` (it lives in the data root) and says
nothing about having restarted, so the stream tells a restart by the daemon
process behind a local socket: its pid and start time (``SO_PEERCRED`` names
the process that listens).  A restart is reported with the gap it leaves; on a
remote engine (TCP, SSH) only the gap is.
"""

from __future__ import annotations

import builtins
import contextlib
import os
import re
import socket
import struct
import threading
import time
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

import docker
import docker.errors
import requests.exceptions
import urllib3.exceptions

from studymon.engine.io.clock import parse_rfc3339
from studymon.engine.runtimes.base import ContainerConflict, Event, Inspect, NoSuchContainer, RuntimeUnavailable

if TYPE_CHECKING:
    from docker.types.daemon import CancellableStream

Identity = dict[str, int]

# The characters Docker allows in a container name; a prefix with others matches nothing there.
_NAME_CHARS = re.compile(r"^[a-zA-Z0-9_.-]*$")

# Sub-microsecond slack added to a window sent to the engine (floats resolve ~240 ns
# at today's epoch); the exact cut is made locally.
_WINDOW_SLACK_NS = 1_000

# How long ``stream`` waits before connecting again after the engine dropped it.
_RECONNECT_PAUSE = 1.0
# Where a stream cannot be closed from another thread (SSH), it is read in chunks this long.
_CHUNK = 1.0
_CHUNK_OVERLAP_NS = 500_000_000
# How often the closer thread looks whether its stream ended for another reason than ``stop``;
# it is what joining it at the stream's end may cost.
_CLOSER_SLICE = 0.2


def docker_answers(timeout: float = 3.0) -> bool:
    """Whether a Docker engine answers a ping on ``DOCKER_HOST`` within ``timeout``; never raises."""
    client = None
    try:
        # A float timeout is handed to requests, which takes one; the SDK's stubs say int.
        client = docker.from_env(timeout=max(timeout, 0.1))  # type: ignore[arg-type]
        return bool(client.ping())
    except Exception:  # noqa: BLE001 - any failure means "no engine answers"
        return False
    finally:
        if client is not None:
            with contextlib.suppress(Exception):
                client.close()


def daemon_identity(socket_path: str | None, timeout: float = 2.0) -> Identity | None:
    """The process listening on a local engine socket: ``{"pid", "started"}``, or None when unknown.

    ``started`` is the process's start time in clock ticks since boot
    (``/proc/<pid>/stat``), so that a pid reused by a later daemon still
    reads as another process.  None for a remote engine, a socket that does
    not answer, or a daemon outside our pid namespace (the kernel gives pid 0).
    """
    if not socket_path:
        return None
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        sock.settimeout(timeout)
        sock.connect(socket_path)
        creds = sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
    except OSError:
        return None
    finally:
        sock.close()
    pid = struct.unpack("3i", creds)[0]
    if pid <= 0:
        return None
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            stat = fh.read()
        # The command name (field 2) may hold spaces and parentheses: count from the last ")".
        started = int(stat[stat.rindex(b")") + 2 :].split()[19])
    except (OSError, ValueError, IndexError):
        return None
    return {"pid": pid, "started": started}


def _ns_text(ns: int) -> str:
    """``"<seconds>.<9 digits>"``, the form the engine parses to the nanosecond."""
    sec, frac = divmod(max(ns, 0), 1_000_000_000)
    return f"{sec}.{frac:09d}"


def _events(
    api: docker.APIClient, since_ns: int, until_ns: int | None, filters: dict[str, str] | None = None
) -> CancellableStream[dict[str, Any]]:
    """The engine's ``/events`` from ``since_ns`` (to ``until_ns``, or on and on), decoded."""
    # The SDK hands since and until to the engine as they are, and "seconds.nanoseconds"
    # text keeps the nanoseconds; its stubs allow only a datetime or whole seconds.
    until = None if until_ns is None else _ns_text(until_ns)
    return api.events(since=_ns_text(since_ns), until=until, filters=filters, decode=True)  # type: ignore[call-overload,no-any-return]


def _in_window(event: Event, since: float, until: float) -> bool:
    return since <= int(event.get("timeNano", 0)) / 1e9 <= until


def _event_key(event: Event) -> tuple[Any, ...]:
    return (event.get("Action"), event.get("id") or event.get("Actor", {}).get("ID"), event.get("timeNano"))


class DockerRuntime:
    """Containers on a Docker engine.  Raises :class:`RuntimeUnavailable` when none answers."""

    kind = "docker"

    def __init__(self, timeout: float = 30.0) -> None:
        try:
            self.client = docker.from_env(timeout=timeout)  # type: ignore[arg-type]  # float, as in docker_answers
        except docker.errors.DockerException as exc:
            raise RuntimeUnavailable(self._unreachable(exc)) from exc
        self.api = self.client.api
        # The SDK closes a stream from another thread by shutting its socket, which SSH lacks.
        self.closable_streams = not str(self.api.base_url).startswith(("ssh", "http+docker://ssh"))
        # A local socket lets the stream tell the daemon process behind it (a restart).
        self.socket_path: str | None = getattr(self.api.get_adapter(self.api.base_url), "socket_path", None)
        # Event requests open right now, closed by ``close`` (their reads block on the socket).
        self._streams: set[Any] = set()
        self._streams_lock = threading.Lock()
        self._closed = False
        try:
            self.clock_offset, self.clock_uncertainty = self._measure_offset()
        except BaseException:
            self.client.close()
            raise

    # --- helpers -------------------------------------------------------------
    @staticmethod
    def _unreachable(exc: BaseException) -> str:
        host = os.environ.get("DOCKER_HOST") or "the default socket (unix:///var/run/docker.sock)"
        return f"no Docker engine answers on {host}: {exc}; start one, fix DOCKER_HOST, or use the process backend"

    @contextlib.contextmanager
    def _engine(self) -> Iterator[None]:
        """Turn transport failures into :class:`RuntimeUnavailable`."""
        try:
            yield
        except (requests.exceptions.ConnectionError, requests.exceptions.ChunkedEncodingError, ConnectionError) as exc:
            # A ChunkedEncodingError: the engine went away in the middle of its answer (a wait it was holding).
            raise RuntimeUnavailable(self._unreachable(exc)) from exc

    def _measure_offset(self, samples: int = 3) -> tuple[float, float]:
        """Daemon clock minus ours, measured here once so that ``now`` costs no round trip.

        The daemon reads its clock somewhere inside an ``info`` request: the
        midpoint of the quickest of a few requests is the best guess, and half
        its round trip the uncertainty.  The guess is skewed by a few
        milliseconds (measured: -1.7 to -3.2 ms against a local engine, whose
        clock *is* ours), enough to push an event recorded just before ``run``
        returned out of a window ending at ``now()``; so an offset smaller
        than its uncertainty is taken as exactly zero.
        """
        best: tuple[float, float] | None = None
        with self._engine():
            for _ in range(samples):
                before = time.time()
                info = self.client.info()
                after = time.time()
                half = (after - before) / 2
                if best is None or half < best[1]:
                    best = (parse_rfc3339(info["SystemTime"]) - (before + half), half)
        assert best is not None
        offset, uncertainty = best
        return (0.0 if abs(offset) <= uncertainty else offset), uncertainty

    # --- watching ------------------------------------------------------------
    def now(self) -> float:
        return time.time() + self.clock_offset

    def inspect(self, name: str) -> Inspect | None:
        with self._engine():
            try:
                found: Inspect = self.api.inspect_container(name)
            except docker.errors.NotFound:
                return None
            return found

    def list(self, prefix: str) -> list[Inspect]:
        # The engine's name filter is an unanchored regex; use it only to narrow
        # the answer, escaping the one regex character a name can hold.
        filters = {"name": prefix.replace(".", r"\.")} if prefix and _NAME_CHARS.match(prefix) else None
        with self._engine():
            summaries = self.api.containers(all=True, filters=filters)
        out: list[Inspect] = []
        for summary in summaries:
            names = [n.lstrip("/") for n in summary.get("Names") or []]
            if any(n.startswith(prefix) for n in names):
                found = self.inspect(summary["Id"])
                if found is not None:  # removed in between
                    out.append(found)
        return out

    def events(self, since: float, until: float) -> builtins.list[Event]:
        """Container events with ``since <= timeNano/1e9 <= until``, in the engine's order.

        Events not yet recorded when the call is made are not waited for (the
        engine would otherwise hold the request open until ``until``); the
        window is cut a tenth of a second after ``now`` at most, which covers
        the error of the clock offset.
        """
        if until < since:
            return []
        limit = min(until, self.now() + 0.1)
        lo = int(since * 1e9) - _WINDOW_SLACK_NS
        hi = int(limit * 1e9) + _WINDOW_SLACK_NS
        with self._engine():
            raw = _events(self.api, lo, hi, {"type": "container"})
            with self._tracked(raw):
                return [e for e in raw if _in_window(e, since, until)]

    def history(self, since: float, until: float) -> builtins.list[Event] | None:
        """The window's events, if the engine's memory still reaches back to ``since``."""
        if not self.reaches_back(since):
            return None
        return self.events(since, until)

    def reaches_back(self, since: float) -> bool:
        """Whether the engine still holds every event (of any type) from ``since`` on.

        It holds its last 256 events: if the oldest it returns is no later
        than ``since``, nothing after ``since`` can have been forgotten.  An
        engine that restarted, or that saw more than 256 events since then,
        cannot show it.
        """
        with self._engine():
            raw = _events(self.api, 1_000_000_000, int(self.now() * 1e9))
            with self._tracked(raw):
                for event in raw:
                    return int(event.get("timeNano", 0)) <= int(since * 1e9)
        return False

    def identity(self) -> Identity | None:
        """The daemon process behind the engine's local socket (see :func:`daemon_identity`)."""
        return daemon_identity(self.socket_path)

    @contextlib.contextmanager
    def _tracked(self, raw: Any) -> Iterator[None]:
        """Keep ``raw`` where :meth:`close` finds it while it is read; close it after."""
        with self._streams_lock:
            self._streams.add(raw)
        try:
            yield
        finally:
            with self._streams_lock:
                self._streams.discard(raw)
            _close_quietly(raw)

    def stream(
        self,
        callback: Callable[[Event], None],
        stop: threading.Event,
        on_live: Callable[[float], None] | None = None,
        on_gap: Callable[..., None] | None = None,
    ) -> None:
        """Deliver live container events until ``stop`` is set (or the runtime is closed).

        One long ``/events`` request is read here; a helper thread closes its
        socket when ``stop`` is set, which ends the blocking read at once (no
        polling, no periodic reconnects).  Over SSH the SDK cannot close a
        stream, so there the request is cut in one-second ``until`` chunks.
        Every request replays from a little before the last event seen (the
        engine keeps recent events), and repeats are skipped.

        When the engine drops the stream, it is asked again every
        :data:`_RECONNECT_PAUSE` until it answers; then, once, ``on_gap(a, b)``
        is told of the stretch if the engine's memory no longer reaches back
        to it (more than 256 events while disconnected), and
        ``on_gap(a, b, restart)`` if the daemon behind the socket is another
        process (a restart: its memory is gone, and with live restore off it
        stopped every container).  The helper thread is joined before this
        returns.
        """
        closer = _StreamCloser(stop)
        closer.start()
        try:
            self._pump(callback, stop, closer, on_live, on_gap)
        finally:
            closer.finish()

    def _pump(
        self,
        callback: Callable[[Event], None],
        stop: threading.Event,
        closer: _StreamCloser,
        on_live: Callable[[float], None] | None,
        on_gap: Callable[..., None] | None,
    ) -> None:
        resume_ns: int | None = None  # where the next request replays from
        seen: dict[tuple[Any, ...], int] = {}
        first = True
        dropped = False  # the last request was ended by the engine or the network, not by plan
        daemon: Identity | None = None  # the daemon process the stream last talked to
        while not stop.is_set() and not self._closed:
            opened_ns = int(self.now() * 1e9)
            if resume_ns is None:
                resume_ns = opened_ns - _WINDOW_SLACK_NS
            until_ns = None if self.closable_streams else opened_ns + int(_CHUNK * 1e9)
            try:
                raw = _events(self.api, resume_ns, until_ns, {"type": "container"})
            except (requests.exceptions.ConnectionError, ConnectionError) as exc:
                if first:
                    raise RuntimeUnavailable(self._unreachable(exc)) from exc
                # Still away: the gap is told once, when the engine answers again.
                dropped = True
                stop.wait(_RECONNECT_PAUSE)
                continue
            if first:
                daemon = self.identity()
                if on_live is not None:
                    on_live(resume_ns / 1e9)
            elif dropped:
                daemon = self._after_drop(daemon, resume_ns, opened_ns, on_gap)
            first = False
            dropped = False
            if not closer.attach(raw):
                return
            with self._streams_lock:
                if self._was_closed():  # closed while this request was being opened
                    closer.detach()
                    return
                self._streams.add(raw)
            try:
                for event in _until_dropped(raw):
                    if _deliver_once(event, seen, callback):
                        resume_ns = max(resume_ns, int(event["timeNano"]) - _WINDOW_SLACK_NS)
            finally:
                with self._streams_lock:
                    self._streams.discard(raw)
                closer.detach()
            if until_ns is not None and self.now() * 1e9 >= until_ns:
                # A chunk ended as planned.  An event stamped just before its end may be
                # published just after, so the next chunk overlaps it by half a second.
                resume_ns = max(resume_ns, until_ns - _CHUNK_OVERLAP_NS)
            elif not stop.is_set() and not self._closed:
                # The engine dropped the stream (restart, network): pause, then replay.
                dropped = True
                stop.wait(_RECONNECT_PAUSE)
        if dropped and on_gap is not None and resume_ns is not None:
            # Left while the engine was away: nothing after the last event seen was watched.
            on_gap(resume_ns / 1e9, self.now())

    def _after_drop(
        self, daemon: Identity | None, resume_ns: int, opened_ns: int, on_gap: Callable[..., None] | None
    ) -> Identity | None:
        """The engine answers again after a drop: tell the gap, if any; the daemon now behind the socket."""
        now = self.identity()
        if on_gap is not None:
            if daemon is not None and now is not None and now != daemon:
                on_gap(resume_ns / 1e9, opened_ns / 1e9, {"runtime": self.kind, "before": daemon, "after": now})
            else:
                try:
                    bridged = self.reaches_back(resume_ns / 1e9)
                except Exception:  # noqa: BLE001 - unknown means lost
                    bridged = False
                if not bridged:
                    on_gap(resume_ns / 1e9, opened_ns / 1e9)
        return now if now is not None else daemon

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
        if not image:
            raise ValueError("the docker runtime needs an image to run a container in")
        with self._engine():
            try:
                created = self.api.create_container(
                    image, command, name=name, environment=env or None, labels=labels or None, detach=True
                )
            except docker.errors.ImageNotFound as exc:
                raise RuntimeError(f"image {image!r} is not on the Docker engine; build or pull it first") from exc
            except docker.errors.APIError as exc:
                if exc.status_code == 409:
                    raise ContainerConflict(f"a container named {name!r} exists already") from exc
                raise
            try:
                self.api.start(created["Id"])
            except docker.errors.APIError as exc:
                raise RuntimeError(f"container {name!r} was created but did not start: {exc.explanation}") from exc
            started: Inspect = self.api.inspect_container(created["Id"])
            return started

    def wait(self, name: str, timeout: float | None = None) -> int | None:
        with self._engine():
            try:
                result = self.api.wait(name, timeout=timeout)  # type: ignore[arg-type]  # float, as in docker_answers
            except docker.errors.NotFound as exc:
                raise NoSuchContainer(name) from exc
            except (requests.exceptions.ReadTimeout, requests.exceptions.ConnectionError) as exc:
                # A read timeout comes back wrapped as a ConnectionError on the unix socket.
                if timeout is not None and _is_timeout(exc):
                    return None
                raise
        return int(result["StatusCode"])

    def logs(self, name: str) -> str:
        with self._engine():
            try:
                data = self.api.logs(name, stdout=True, stderr=False)
            except docker.errors.NotFound as exc:
                raise NoSuchContainer(name) from exc
        return data.decode("utf-8", errors="replace")

    def remove(self, name: str, force: bool = False) -> None:
        with self._engine():
            try:
                self.api.remove_container(name, force=force)
            except docker.errors.NotFound as exc:
                raise NoSuchContainer(name) from exc
            except docker.errors.APIError as exc:
                if exc.status_code == 409:
                    raise ContainerConflict(f"container {name!r} is running; stop it or remove it with force") from exc
                raise

    def _was_closed(self) -> bool:
        """Whether :meth:`close` has run: read afresh, as another thread sets it."""
        return self._closed

    def close(self) -> None:
        """Release the engine connections: open event requests (a ``stream`` in another thread ends) and the pool.

        Idempotent; the runtime is not used after this.
        """
        with self._streams_lock:
            self._closed = True
            streams, self._streams = list(self._streams), set()
        for raw in streams:
            _close_quietly(raw)
        with contextlib.suppress(Exception):
            self.client.close()


def _is_timeout(exc: BaseException) -> bool:
    cause: BaseException | None = exc
    while cause is not None:
        if isinstance(cause, (requests.exceptions.ReadTimeout, TimeoutError)) or "timed out" in str(cause).lower():
            return True
        cause = cause.__cause__ or cause.__context__
    return False


def _until_dropped(raw: Any) -> Iterator[Event]:
    """The events of one ``/events`` request until it ends, however it ends.

    A socket closed under the read (by the closer, or by the engine going
    away) surfaces as a plain end, an OS error or a torn chunk; all mean the
    same here.  Errors raised by the callback are not caught: it runs outside.
    """
    it = iter(raw)
    while True:
        try:
            event = next(it)
        except StopIteration:
            return
        except (OSError, ValueError, requests.exceptions.RequestException, urllib3.exceptions.HTTPError):
            return
        yield event


def _deliver_once(event: Event, seen: dict[tuple[Any, ...], int], callback: Callable[[Event], None]) -> bool:
    """Call back with ``event`` unless a replay already delivered it; whether it was new."""
    key = _event_key(event)
    if key in seen:
        return False
    ns = int(event.get("timeNano", 0))
    seen[key] = ns
    _forget_before(seen, ns - 10_000_000_000)
    callback(event)
    return True


def _forget_before(seen: dict[tuple[Any, ...], int], ns: int) -> None:
    """Bound the replay guard: keys older than the reconnect overlap cannot come back."""
    if len(seen) > 1024:
        for key in [k for k, t in seen.items() if t < ns]:
            del seen[key]


class _StreamCloser(threading.Thread):
    """Closes the current event stream's socket as soon as ``stop`` is set.

    It waits on ``stop`` in slices so that it also ends when ``stream`` returns
    for another reason (an error, a closed runtime), rather than outliving it;
    ``stream`` joins it before returning.
    """

    def __init__(self, stop: threading.Event) -> None:
        super().__init__(name="docker-events-closer", daemon=True)
        self._stop_event = stop
        self._done = threading.Event()
        self._lock = threading.Lock()
        self._current: Any = None
        self._closed = False

    def attach(self, raw: Any) -> bool:
        """Make ``raw`` the stream to close; False (and closed) when stop came first."""
        with self._lock:
            if self._closed:
                _close_quietly(raw)
                return False
            self._current = raw
            return True

    def detach(self) -> None:
        with self._lock:
            raw, self._current = self._current, None
        if raw is not None:
            _close_quietly(raw)

    def finish(self) -> None:
        """The stream is over: close what is left and wait for this thread to end (within one slice)."""
        self._done.set()
        self.detach()
        if self.is_alive() and threading.current_thread() is not self:
            self.join(_CLOSER_SLICE * 4)

    def run(self) -> None:
        while not self._done.is_set():
            if self._stop_event.wait(_CLOSER_SLICE):
                with self._lock:
                    self._closed = True
                    raw = self._current
                if raw is not None:
                    _close_quietly(raw)
                return


def _close_quietly(raw: Any) -> None:
    with contextlib.suppress(Exception):
        raw.close()
