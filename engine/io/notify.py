"""File-change notice without polling: Linux inotify, else watchfiles, else timed wake-ups.

A :class:`Notifier` watches folders and wakes its caller when something in
them changed; callers always pass a timeout and then re-read what they watch
from their own offsets, so a spurious, merged or missed wake-up costs only
time.  Three sources, chosen when the notifier is made:

* **inotify** (Linux, the default there): an inotify descriptor read through
  ``ctypes`` (no extra dependency) and added to the asyncio loop.  It wakes
  its caller within a millisecond of an appended line and costs nothing
  while idle.  The kill reaction must be a few milliseconds and the console
  must idle near zero, so this is the path wherever it exists.
* **watchfiles** (where inotify is missing: macOS, the BSDs): the ``notify``
  crate behind watchfiles (FSEvents, kqueue, ...) collects the changes, and a
  thread of the notifier's own turns each batch into a byte on a pipe, so the
  callers see a descriptor just as with inotify.  watchfiles' loop sleeps
  ``step`` ms between looks and hands a batch on after one quiet step, so a
  notice comes 1-2 steps after the write; its loop wakes every step even
  while nothing happens.
* **timer**: neither is available (or watchfiles failed).  ``wait`` sleeps its
  timeout and says nothing changed; callers re-check on their period (the
  session every 250 ms).

Measured side by side (``python bench/notify_latency.py --steps 1,5,20,50``,
2 cores, load average 2 from another run; append to read, p50 / p99, and
idle CPU): inotify 0.3 / 2.3 ms, 0.01 % of a core; watchfiles at a 10 ms
step 17 / 23 ms, 0.4 %; timer 133 / 248 ms, 0.1 %.  So watchfiles serves as
the fallback: 8-10 times sooner than timed wake-ups for 0.3 % of a core
more, though 10-50 times later than inotify (a kill trigger is noticed
~20 ms late, not ~1 ms).  A 1 ms step came to 2 / 5 ms for 1.7 %, a 5 ms step
8 / 17 ms for 0.5 %; 10 ms (:data:`WATCHFILES_STEP_MS`) is the middle.

``STUDYMON_NOTIFY`` = ``inotify`` | ``watchfiles`` | ``timer`` chooses the
source instead (so the watchfiles path can be run on Linux, where its
backend is inotify too: tests and ``bench/notify_latency.py`` do); a chosen
source that is not available gives timed wake-ups.  ``Notifier(backend=...)``
does the same for one notifier.

Watch folders rather than files: a folder watch reports writes to files in it
and their creation, so a ledger can be watched before it exists.  Folders are
watched on their own, not their sub-folders.
"""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import ctypes.util
import errno
import os
import select
import struct
import threading
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    from watchfiles._rust_notify import RustNotify

IN_MODIFY = 0x00000002
IN_CLOSE_WRITE = 0x00000008
IN_MOVED_FROM = 0x00000040
IN_MOVED_TO = 0x00000080
IN_CREATE = 0x00000100
IN_DELETE = 0x00000200
IN_DELETE_SELF = 0x00000400
IN_IGNORED = 0x00008000
IN_DONT_FOLLOW = 0x02000000
IN_NONBLOCK = 0o4000
IN_CLOEXEC = 0o2000000

DEFAULT_MASK = IN_MODIFY | IN_CLOSE_WRITE | IN_MOVED_TO | IN_CREATE

_EVENT = struct.Struct("iIII")

Backend = Literal["inotify", "watchfiles", "timer"]
BACKENDS: tuple[Backend, ...] = ("inotify", "watchfiles", "timer")
BACKEND_ENV = "STUDYMON_NOTIFY"

# watchfiles' loop sleeps this long between looks at what its backend
# collected, and hands a batch on after one quiet step: the notice comes 1-2
# steps after the write.  10 ms: 17 / 23 ms late at p50 / p99 for 0.4 % of a
# core idle (bench/notify_latency.py); 1 ms: 2 / 5 ms for 1.7 %.
WATCHFILES_STEP_MS = 10
# A batch that keeps growing (files created one after another) is handed on
# after this long at the latest.
WATCHFILES_DEBOUNCE_MS = 50
# How long ``close`` waits for the watchfiles thread (it stops within a step).
_JOIN_TIMEOUT = 2.0

# watchfiles' change kinds (watchfiles.Change) and the inotify events that match them.
_CHANGE_ADDED, _CHANGE_MODIFIED, _CHANGE_DELETED = 1, 2, 3
_CHANGE_MASKS = {
    _CHANGE_ADDED: IN_CREATE | IN_MOVED_TO,
    _CHANGE_MODIFIED: IN_MODIFY | IN_CLOSE_WRITE,
    _CHANGE_DELETED: IN_DELETE | IN_MOVED_FROM,
}

_libc: ctypes.CDLL | None
try:
    _libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
    _libc.inotify_init1  # noqa: B018 - probe the symbol: AttributeError where libc has no inotify
except (OSError, AttributeError):
    _libc = None


def inotify_available() -> bool:
    return _libc is not None


def watchfiles_available() -> bool:
    try:
        from watchfiles._rust_notify import RustNotify  # noqa: F401 - loaded only where it serves
    except ImportError:
        return False
    return True


def chosen_backend(backend: str | None = None) -> Backend:
    """The source a new notifier uses: ``backend``, else ``$STUDYMON_NOTIFY``, else the best available.

    A source asked for by name that is not available gives ``timer``; a name
    that is not a source raises ``ValueError``.
    """
    asked = backend if backend is not None else os.environ.get(BACKEND_ENV, "").strip().lower()
    if not asked:
        if inotify_available():
            return "inotify"
        return "watchfiles" if watchfiles_available() else "timer"
    if asked == "inotify":
        return "inotify" if inotify_available() else "timer"
    if asked == "watchfiles":
        return "watchfiles" if watchfiles_available() else "timer"
    if asked == "timer":
        return "timer"
    source = "backend" if backend is not None else BACKEND_ENV
    raise ValueError(f"{source}={asked!r}: not one of {', '.join(BACKENDS)}")


class Notifier:
    """Watch folders, wait for changes, drain the notices.

    ``wait`` (for threads) and ``wait_async`` (for the event loop) return when
    something changed or the timeout passed; callers then re-read what they
    watch from their own offsets, so spurious and merged wake-ups are harmless.
    ``fileno`` is a descriptor that is readable while a notice is pending (-1
    with timed wake-ups), for callers that select on it with others; they
    call ``drain`` after it was readable.  ``poke`` wakes ``wait_async`` as a
    change would, for a reader whose work was handed to it from elsewhere.
    """

    def __init__(self, backend: str | None = None, *, step_ms: int = WATCHFILES_STEP_MS) -> None:
        self._fd = -1
        self._poked = False
        self._settle: Callable[[bool], None] | None = None  # the wait_async under way
        self._watches: dict[str, int] = {}
        self._watcher: _WatchfilesThread | None = None
        self.backend: Backend = chosen_backend(backend)
        if self.backend == "inotify":
            assert _libc is not None  # chosen_backend saw it
            fd = _libc.inotify_init1(IN_NONBLOCK | IN_CLOEXEC)
            if fd >= 0:
                self._fd = fd
            else:
                self.backend = "timer"
        elif self.backend == "watchfiles":
            self._watcher = _WatchfilesThread(step_ms)
            self._fd = self._watcher.read_fd

    @property
    def active(self) -> bool:
        """Whether changes wake the caller (False: only timeouts do)."""
        if self._watcher is not None:
            return self._watcher.healthy
        return self._fd >= 0

    def fileno(self) -> int:
        return self._fd

    def watch(self, folder: Path | str, mask: int = DEFAULT_MASK) -> bool:
        """Watch ``folder``; False when it does not exist (or no source is available)."""
        key = str(folder)
        if self._fd < 0 or key in self._watches:
            return key in self._watches
        if self._watcher is not None:
            if not self._watcher.watch(key, mask):
                return False
            self._watches[key] = mask
            return True
        assert _libc is not None  # an inotify descriptor is open
        wd = _libc.inotify_add_watch(self._fd, os.fsencode(key), mask)
        if wd < 0:
            err = ctypes.get_errno()
            if err in (errno.ENOENT, errno.ENOTDIR):
                return False
            raise OSError(err, os.strerror(err), key)
        self._watches[key] = wd
        return True

    def drain(self) -> int:
        """Read and discard pending notices; how many there were."""
        if self._fd < 0:
            return 0
        count = 0
        while True:
            try:
                data = os.read(self._fd, 65536)
            except OSError:  # BlockingIOError: nothing (more) pending
                return count
            if not data:
                return count
            if self._watcher is not None:
                count += len(data)  # a byte a batch
                continue
            pos = 0
            while pos + _EVENT.size <= len(data):
                _wd, _mask, _cookie, length = _EVENT.unpack_from(data, pos)
                pos += _EVENT.size + length
                count += 1

    def wait(self, timeout: float) -> bool:
        """Block up to ``timeout`` seconds for a change; True when one came."""
        if self._fd < 0:
            select.select([], [], [], timeout)
            return False
        ready, _, _ = select.select([self._fd], [], [], timeout)
        if ready:
            self.drain()
            return True
        return False

    async def wait_async(self, timeout: float) -> bool:
        """Like :meth:`wait`, inside the asyncio loop (the descriptor is added to it); a :meth:`poke` wakes it too."""
        if self._poked:
            self._poked = False
            return True
        fd = self._fd
        loop = asyncio.get_running_loop()
        fut: asyncio.Future[bool] = loop.create_future()

        def settle(value: bool) -> None:
            if not fut.done():
                fut.set_result(value)

        # A plain future with a timer rather than asyncio.wait_for: on 3.11,
        # wait_for can swallow a cancellation that races a wake-up, and the
        # caller's task would then never end.
        if fd >= 0:
            loop.add_reader(fd, settle, True)
        timer = loop.call_later(timeout, settle, False)
        self._settle = settle
        try:
            got = await fut
        finally:
            self._settle = None
            timer.cancel()
            if fd >= 0:
                loop.remove_reader(fd)
        self._poked = False
        if got and self._fd >= 0:
            self.drain()
        return got

    def poke(self) -> None:
        """Wake the :meth:`wait_async` under way (or the next one) now, as a change would; from the loop's thread."""
        self._poked = True
        if self._settle is not None:
            self._settle(True)

    def close(self) -> None:
        """Stop watching; the watchfiles thread, if any, is stopped and joined."""
        if self._watcher is not None:
            self._watcher.close()
            self._watcher = None
        elif self._fd >= 0:
            os.close(self._fd)
        self._fd = -1
        self._watches.clear()

    def __enter__(self) -> Notifier:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class _WatchfilesThread:
    """watchfiles' watcher over the watched folders, its batches turned into bytes on a pipe.

    One ``RustNotify`` (watchfiles' documented low-level watcher, which its
    ``watch``/``awatch`` drive) watches every folder, each on its own, not
    recursively.  A new folder makes a new one, built in the caller's thread
    so that a missing folder is known at once and the watch is in place when
    ``watch`` returns (``watchfiles.watch`` builds it lazily inside its
    generator); the thread takes it over at its next step.  The thread owns
    the pipe's write end once it runs, and closes it when it ends.
    """

    def __init__(self, step_ms: int) -> None:
        self.step_ms = max(1, int(step_ms))
        self.read_fd, self._write_fd = os.pipe()  # both non-inheritable
        os.set_blocking(self.read_fd, False)
        os.set_blocking(self._write_fd, False)
        self._masks: dict[str, int] = {}  # the folders watched, as given
        self._lookup: dict[str, int] = {}  # their masks under both spellings, as given and resolved
        self._lock = threading.Lock()
        self._next: RustNotify | None = None  # built by watch, not yet taken by the thread
        self._interrupt = threading.Event()  # set: the thread's watchfiles call returns at its next step
        self._closing = False
        self._failed: BaseException | None = None
        self._thread: threading.Thread | None = None

    @property
    def healthy(self) -> bool:
        return self._failed is None and not self._closing

    def watch(self, folder: str, mask: int) -> bool:
        from watchfiles._rust_notify import RustNotify

        if self._failed is not None:
            return False
        if mask & IN_DONT_FOLLOW and os.path.islink(folder):
            # inotify would watch the link itself, which never reports a
            # file; never follow it to another folder's changes.
            return True
        if not os.path.isdir(folder):
            return False
        masks = {**self._masks, folder: mask}
        # FSEvents reports resolved paths (/private/var/... for /var/...): know both.
        lookup = {**self._lookup, folder: mask, os.path.realpath(folder): mask}
        try:
            # debug, force_polling, poll_delay_ms, recursive, ignore_permission_denied
            notify = RustNotify(list(masks), False, False, 0, False, False)
        except FileNotFoundError:
            return False
        with self._lock:
            if self._closing:
                notify.close()
                return False
            stale, self._next = self._next, notify
            self._masks, self._lookup = masks, lookup
            self._interrupt.set()
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="studymon-notify", daemon=True)
                self._thread.start()
        if stale is not None:
            stale.close()
        return True

    def _take(self, current: RustNotify | None) -> tuple[RustNotify | None, dict[str, int]]:
        with self._lock:
            self._interrupt.clear()
            if self._closing:
                return current, {}
            if self._next is not None:
                if current is not None:
                    current.close()
                current, self._next = self._next, None
            return current, self._lookup

    def _run(self) -> None:
        current: RustNotify | None = None
        try:
            while True:
                current, masks = self._take(current)
                if current is None or not masks:
                    return
                got = current.watch(WATCHFILES_DEBOUNCE_MS, self.step_ms, 0, self._interrupt)
                if isinstance(got, set) and any(_wanted(change, path, masks) for change, path in got):
                    self._signal()
        except BaseException as exc:  # noqa: BLE001 - any failure ends the source; callers fall back to their timeouts
            self._failed = exc
            self._signal()  # wake the caller: it re-reads, then waits on its timeout
        finally:
            if current is not None:
                current.close()
            with self._lock:
                if self._closing:
                    os.close(self._write_fd)
                    self._write_fd = -1

    def _signal(self) -> None:
        with contextlib.suppress(BlockingIOError):  # full: a wake-up is pending already
            os.write(self._write_fd, b"\0")

    def close(self) -> None:
        with self._lock:
            self._closing = True
            self._interrupt.set()
            thread, pending, self._next = self._thread, self._next, None
        if pending is not None:
            pending.close()
        if thread is not None:
            thread.join(_JOIN_TIMEOUT)
        with self._lock:
            # The thread closes the write end if it is still running; else it is ours.
            if (thread is None or not thread.is_alive()) and self._write_fd >= 0:
                os.close(self._write_fd)
                self._write_fd = -1
        os.close(self.read_fd)


def _wanted(change: int, path: str, masks: dict[str, int]) -> bool:
    """Whether watchfiles' ``change`` of ``path`` is one its folder's inotify mask asks for."""
    mask = masks.get(os.path.dirname(path))
    if mask is None:
        return True  # a path spelled otherwise still: wake, the caller re-reads
    return bool(mask & _CHANGE_MASKS.get(change, 0))
