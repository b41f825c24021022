"""One study per id at a time: a lock held for the study's life, by the console and by its keepers.

Two studies given the same id on the same runtime would name their run
containers alike (``<prefix>-<ID>-<run>``) and take each other's for stale
ones.  So before a study is created or resumed, the console claims the
study's lock: an exclusive ``flock`` on a file named after the runtime, the
container prefix and the id.  It hands the same open file to every keeper it
starts (an inherited descriptor shares the lock), so the lock outlives a
console that detaches or crashes, and is released only when the console and
every keeper of the study have gone.  The file says which OUT holds it, so a
refusal can name it.

One id is not enough: the ids ``exp`` and ``exp-2`` give the stems
``inforsi-exp-`` and ``inforsi-exp-2-``, and every container of the second
is under the first one's stem (PROTOCOL §6.1).  So a claim also refuses a
study whose stem extends, or is extended by, the stem of a study that holds
its lock on the same runtime (:class:`NeighbourRunning`).  A lock file's
name starts with its study's stem, and its digest binds the runtime, the
prefix and the id, so the neighbours are found by name and told apart by
runtime without trusting what the files say.  Every claim looks for them
and takes its own lock while it holds an exclusive ``flock`` on the lock
folder itself: two neighbours claimed at the same instant are looked at one
after the other, and the second sees the first.  That guard is held for a
few milliseconds (never while waiting for a keeper) and creates no file.

The lock files live in a folder of the user's own (``$STUDYMON_LOCK_DIR``, or
``$XDG_STATE_HOME/studymon/locks``, by default ``~/.local/state``): created
0700, refused when another user owns it or others can write to it, and the
files are opened without following symlinks.  Studies of different users on
one Docker engine do not share a lock folder; the console also refuses a
fresh study whose containers are already running (:func:`running_containers`).
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import hashlib
import json
import os
import stat
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from studymon.engine.contract.rules import stem, studys_container

LOCK_DIR_ENV = "STUDYMON_LOCK_DIR"
# How long a relaunch waits for the study's own previous keeper to let go.
OWN_KEEPER_WAIT = 10.0


class StudyInUse(RuntimeError):
    """The study's lock is held: ``holder`` is the OUT that has it (None when it cannot be told)."""

    def __init__(self, study_id: str, holder: Path | None, message: str | None = None) -> None:
        self.study_id = study_id
        self.holder = holder
        where = f"by the study in {holder}" if holder else "by another studymon command"
        super().__init__(message or f"study id {study_id!r} is in use {where}")


class NeighbourRunning(StudyInUse):
    """A study whose stem extends this one's, or is extended by it, holds its lock on the same runtime.

    ``holder`` is that study's OUT (None when it cannot be told), ``other_id``
    and ``other_prefix`` name it.
    """

    def __init__(self, study_id: str, prefix: str, other_id: str, other_prefix: str, holder: Path | None) -> None:
        self.prefix = prefix
        self.other_id = other_id
        self.other_prefix = other_prefix
        where = f"running in {holder}" if holder else "running under another studymon command"
        super().__init__(
            study_id,
            holder,
            f"study id {study_id!r} cannot run beside study {other_id!r} ({where}) on this runtime: "
            f"{overlap(prefix, study_id, other_prefix, other_id)}; "
            f"choose an id that does not extend or is not extended by {other_id!r}, or wait for {other_id!r} to end",
        )


class LockBusy(RuntimeError):
    """The lock folder's guard was not let go in time (a claim stopped half way, e.g. by SIGSTOP)."""


class LockFolderUnsafe(RuntimeError):
    """The lock folder is not the user's own: another user could forge or steal locks."""


def lock_dir() -> Path:
    explicit = os.environ.get(LOCK_DIR_ENV)
    if explicit:
        return Path(explicit)
    state_home = os.environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    return Path(state_home) / "studymon" / "locks"


def _safe_dir(folder: Path) -> Path:
    folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    st = os.lstat(folder)
    if stat.S_ISLNK(st.st_mode) or not stat.S_ISDIR(st.st_mode):
        raise LockFolderUnsafe(f"lock folder {folder} is not a plain folder: remove it, or set ${LOCK_DIR_ENV}")
    if st.st_uid != os.getuid():
        raise LockFolderUnsafe(
            f"lock folder {folder} belongs to uid {st.st_uid}, not you: set ${LOCK_DIR_ENV} to a folder of yours"
        )
    if st.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        raise LockFolderUnsafe(f"lock folder {folder} can be written by others: chmod 700 it, or set ${LOCK_DIR_ENV}")
    return folder


def engine_identity(backend: str, runtime: Any = None) -> str:
    """What tells one runtime from another: the Docker endpoint, or the process runtime's state folder."""
    if backend == "docker":
        return "docker:" + (os.environ.get("DOCKER_HOST") or "unix:///var/run/docker.sock")
    root = getattr(runtime, "root", None)
    if root is None:
        from studymon.engine.runtimes.process import default_root

        root = default_root()
    return f"process:{Path(root).resolve()}"


def neighbours(a: str, b: str) -> bool:
    """Whether two stems extend one another (equal stems do): one study's containers fall under the other's."""
    return a.startswith(b) or b.startswith(a)


def overlap(prefix: str, study_id: str, other_prefix: str, other_id: str) -> str:
    """Why two studies' container names collide, in words."""
    mine, theirs = stem(prefix, study_id), stem(other_prefix, other_id)
    if mine == theirs:
        how = f"the run containers of both are named {mine}<run>"
    elif mine.startswith(theirs):
        how = f"the run containers of {study_id!r} ({mine}<run>) are named under {theirs}, the stem of {other_id!r}"
    else:
        how = f"the run containers of {other_id!r} ({theirs}<run>) are named under {mine}, the stem of {study_id!r}"
    return how + ", so each study would take the other's containers for its own"


_DIGEST = 16
_SUFFIX = ".lock"


def lock_name(identity: str, prefix: str, study_id: str) -> str:
    digest = hashlib.sha256(f"{identity}\0{prefix}\0{study_id}".encode()).hexdigest()[:_DIGEST]
    return f"{stem(prefix, study_id)}{digest}{_SUFFIX}"


def _stem_of(name: str) -> str | None:
    """The stem a lock file's name starts with (``<prefix>-<ID>-``), or None when it is no lock file's name."""
    if not name.endswith(_SUFFIX) or len(name) < _DIGEST + len(_SUFFIX) + 4:
        return None
    head = name[: -(_DIGEST + len(_SUFFIX))]
    return head if head.endswith("-") else None


def _split(name: str, identity: str) -> tuple[str, str] | None:
    """The prefix and id of the lock file ``name`` when it is a lock of the runtime ``identity``, else None.

    A prefix may hold ``-`` too, so every split of the stem is tried against the digest.
    """
    head = (_stem_of(name) or "-")[:-1]
    at = head.find("-")
    while at > 0:
        prefix, study_id = head[:at], head[at + 1 :]
        if study_id and lock_name(identity, prefix, study_id) == name:
            return prefix, study_id
        at = head.find("-", at + 1)
    return None


class StudyLock:
    """The held lock of one study: its descriptor is passed to every keeper the console starts."""

    def __init__(self, fd: int, path: Path, study_id: str, out: Path) -> None:
        self.fd = fd
        self.path = path
        self.study_id = study_id
        self.out = out

    def fileno(self) -> int:
        return self.fd

    def release(self) -> None:
        """Let go of the console's share (keepers that inherited it keep the study locked)."""
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1

    @property
    def held(self) -> bool:
        return self.fd >= 0


# How long a claim waits for another claim to let go of the lock folder's guard.
GUARD_WAIT = 10.0


@contextlib.contextmanager
def _guard(folder: Path) -> Iterator[None]:
    """Hold the lock folder's guard: claims of one folder look for neighbours one at a time."""
    fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
    try:
        deadline = time.monotonic() + GUARD_WAIT
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    raise LockBusy(
                        f"lock folder {folder} stayed guarded by another claim for {GUARD_WAIT:.0f} s: "
                        "a studymon command is stopped half way (end it, or resume it with SIGCONT)"
                    ) from None
                time.sleep(0.005)
        yield
    finally:
        os.close(fd)  # lets go of the guard


def _refuse_neighbours(folder: Path, identity: str, prefix: str, study_id: str) -> None:
    """:class:`NeighbourRunning` when a study of this runtime whose stem extends ours (or ours its) holds its lock.

    Called with the guard held, so a lock seen held has its OUT written.
    """
    mine = stem(prefix, study_id)
    own = lock_name(identity, prefix, study_id)
    with os.scandir(folder) as entries:
        names = sorted(e.name for e in entries)
    for name in names:
        theirs = _stem_of(name)
        if name == own or theirs is None or not neighbours(mine, theirs):
            continue
        found = _split(name, identity)
        if found is None:
            continue  # another runtime's study, or not a lock file
        try:
            fd = os.open(folder / name, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK)
        except OSError:
            continue
        try:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                continue
            try:
                fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
            except BlockingIOError:
                raise NeighbourRunning(study_id, prefix, found[1], found[0], _holder(fd)) from None
            fcntl.flock(fd, fcntl.LOCK_UN)
        finally:
            os.close(fd)


def claim(study_id: str, out: Path, identity: str, prefix: str, wait_for_own: float = 0.0) -> StudyLock:
    """Take the study's lock for ``out``; :class:`StudyInUse` when a running study has it.

    :class:`NeighbourRunning` (a :class:`StudyInUse`) when a study of the same
    runtime whose stem extends this one's, or is extended by it, holds its
    lock; then no lock file is made.  ``wait_for_own``: when the holder is
    ``out`` itself (its keeper winding down after a kill), wait up to that
    many seconds for it to let go.
    """
    folder = _safe_dir(lock_dir())
    path = folder / lock_name(identity, prefix, study_id)
    flags = os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC
    deadline = time.monotonic() + wait_for_own
    while True:
        with _guard(folder):
            _refuse_neighbours(folder, identity, prefix, study_id)
            try:
                fd = os.open(path, flags, 0o600)
            except OSError as exc:
                if exc.errno == errno.ELOOP:
                    raise LockFolderUnsafe(f"lock file {path} is a symlink: remove it") from None
                raise
            try:
                if not stat.S_ISREG(os.fstat(fd).st_mode):
                    raise LockFolderUnsafe(f"lock file {path} is not a regular file: remove it")
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                except BlockingIOError:
                    holder = _holder(fd)
                else:
                    # Written before the guard is let go: a neighbour's claim that sees
                    # the lock held can name its OUT.
                    body = {
                        "out": str(out.resolve()),
                        "pid": os.getpid(),
                        "id": study_id,
                        "prefix": prefix,
                        "runtime": identity,
                    }
                    os.ftruncate(fd, 0)
                    os.pwrite(fd, json.dumps(body).encode(), 0)
                    return StudyLock(fd, path, study_id, out)
            except BaseException:
                os.close(fd)
                raise
            os.close(fd)
        # Held: wait (without the guard) only for this OUT's own keeper.
        own = holder is not None and _same(holder, out)
        if not own or time.monotonic() >= deadline:
            raise StudyInUse(study_id, holder)
        time.sleep(0.05)


def holder_of(study_id: str, identity: str, prefix: str) -> Path | None:
    """The OUT whose study holds the lock now, or None when it is free (or cannot be told)."""
    path = lock_dir() / lock_name(identity, prefix, study_id)
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            return _holder(fd)
        fcntl.flock(fd, fcntl.LOCK_UN)
        return None
    finally:
        os.close(fd)


def _holder(fd: int) -> Path | None:
    try:
        data = json.loads(os.pread(fd, 4096, 0) or b"null")
    except (OSError, ValueError):
        return None
    out = data.get("out") if isinstance(data, dict) else None
    return Path(out) if isinstance(out, str) and out else None


def _same(a: Path, b: Path) -> bool:
    try:
        return a.resolve() == b.resolve()
    except OSError:
        return False


def running_containers(runtime: Any, prefix: str, study_id: str) -> list[str]:
    """Names of the study's containers (``<prefix>-<ID>-…``) that run or are being created on ``runtime``."""
    mine = stem(prefix, study_id)
    names = []
    for found in runtime.list(mine):
        name = str(found.get("Name", "")).lstrip("/")
        status = (found.get("State") or {}).get("Status")
        # An id may hold '-': "a" and "a-b" share the stem "p-a-".  A label that
        # names another study whose stem holds the name settles it (§6.1).
        label = ((found.get("Config") or {}).get("Labels") or {}).get("studymon.study")
        if not studys_container(name, label, prefix, study_id):
            continue
        if name.startswith(mine) and status in ("running", "created", "restarting", "paused"):
            names.append(name)
    return sorted(names)


def claim_for_command(
    specs: list[Any],
    prefixes: dict[str, str],
    backends: dict[str, str],
    fresh: bool,
    in_use: Callable[[str, Path | None], str] | None = None,
) -> dict[str, StudyLock]:
    """Claim every study's lock for one command, before anything is written: all of them, or none.

    Raises :class:`studymon.engine.contract.spec.BadInput` with the one line to print when a
    study's id is in use (naming the OUT that has it), when its stem and another
    running study's extend one another on its runtime (naming that study and
    its OUT; two such studies of this command are refused before any lock is
    taken), when a fresh study's containers already run on its runtime, or when
    the lock folder is unsafe.  ``in_use(id, holder's OUT)`` says the first of
    these in a command's own words (a demo's ids cannot be chosen).
    """
    from studymon.engine.contract.spec import BadInput

    identities = {spec.id: engine_identity(backends[spec.id]) for spec in specs}
    for i, a in enumerate(specs):
        for b in specs[i + 1 :]:
            pa, pb = prefixes[a.id], prefixes[b.id]
            if identities[a.id] == identities[b.id] and neighbours(stem(pa, a.id), stem(pb, b.id)):
                raise BadInput(
                    f"studies {b.id!r} and {a.id!r} of this command cannot run at once on one runtime: "
                    f"{overlap(pb, b.id, pa, a.id)}; choose for {b.id!r} an id that does not extend "
                    f"or is not extended by {a.id!r}, or run them one after the other"
                )
    held: dict[str, StudyLock] = {}
    try:
        for spec in specs:
            backend, prefix = backends[spec.id], prefixes[spec.id]
            identity = identities[spec.id]
            try:
                held[spec.id] = claim(spec.id, spec.out, identity, prefix)
            except NeighbourRunning as exc:
                hint = f"watch it with: studymon attach {exc.holder}" if exc.holder else "wait for it to end"
                raise BadInput(f"{exc}; {hint}") from None
            except StudyInUse as exc:
                if exc.holder is not None and _same(exc.holder, spec.out):
                    raise BadInput(
                        f"{spec.id} is still running (its keeper holds the study's lock): "
                        f"watch it with: studymon attach {spec.out}"
                    ) from None
                if in_use is not None:
                    raise BadInput(in_use(spec.id, exc.holder)) from None
                where = f"the study in {exc.holder}" if exc.holder else "another studymon command"
                hint = f"watch it with: studymon attach {exc.holder}" if exc.holder else "wait for it to end"
                raise BadInput(
                    f"study id {spec.id!r} is in use by {where} on this runtime: pick another id, or {hint}"
                ) from None
            except (LockFolderUnsafe, LockBusy, OSError) as exc:
                raise BadInput(f"cannot take the study lock of {spec.id!r}: {exc}") from None
            if fresh:
                names = _running_on(backend, prefix, spec.id)
                if names:
                    raise BadInput(
                        f"study id {spec.id!r} already has running containers on this runtime "
                        f"({', '.join(names[:3])}): another command runs a study with this id; "
                        "pick another id, or remove those containers"
                    )
    except BaseException:
        for lock in held.values():
            lock.release()
        raise
    return held


def _running_on(backend: str, prefix: str, study_id: str) -> list[str]:
    from studymon.engine.runtimes import open_runtime

    runtime = open_runtime(backend)
    try:
        return running_containers(runtime, prefix, study_id)
    finally:
        close = getattr(runtime, "close", None)
        if close is not None:
            close()
