"""``studymon fs serve FOLDER --control SOCKET``: the process that serves the pass-through mount over FOLDER.

It opens FOLDER before it mounts over it and serves every call from that
descriptor (:class:`~.passthrough.PassThrough`), answers its owner on the
control socket (``ping``, ``writes``, ``unmount``) and stays until told to
unmount, in a session of its own, so a console that goes away leaves the
study writing.  libfuse's ``auto_unmount`` watchdog unmounts the folder if
this process is killed, so no mount is ever left behind.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from studymon.engine.contract.exits import EXIT_USAGE
from studymon.engine.contract.killpoint import BadPoint, KillPoint
from studymon.engine.fs import control
from studymon.engine.fs.fuse import FUSE, missing
from studymon.engine.fs.mount import lazy_unmount
from studymon.engine.fs.passthrough import PassThrough
from studymon.engine.fs.points import LedgerHold
from studymon.engine.fs.writes import WriteLog

WATCH_EVERY = 0.5  # seconds between looks at the keeper and the study


class _Served(PassThrough):
    """The operations, and the moment the mount is up (libfuse calls ``init`` once it is)."""

    def __init__(self, root: int, log: WriteLog) -> None:
        super().__init__(root, log)
        self.up = threading.Event()

    def init(self, path: str) -> None:  # noqa: ARG002 - the binding's signature
        self.up.set()


def _hold(ops: PassThrough, request: dict[str, Any]) -> dict[str, Any]:
    """Arm an ``after:`` point in the ledger's writes, counted after ``fromSeq``."""
    try:
        point = KillPoint.parse(str(request.get("point")))
    except BadPoint as exc:
        return {"error": str(exc)}
    from_seq = request.get("fromSeq")
    if not point.on_record or not isinstance(from_seq, int) or isinstance(from_seq, bool) or from_seq < 0:
        return {"error": "hold takes an after: point and the seq it counts from"}
    if ops.hold is not None:
        return {"error": "a point is armed already"}
    passed = ops.arm(LedgerHold(point, from_seq))
    if passed is not None:
        return {"armed": False, "passed": passed.get("seq")}
    return {"armed": True}


def _disarm(ops: PassThrough) -> dict[str, Any]:
    """The console is done with the point (missed, disarmed, or its kill seen through): a write held is let go
    whole, an armed point no longer counts."""
    with ops.ledger_lock:
        hold = ops.hold
        if hold is not None and hold.hit is None:
            ops.hold = None
    if hold is not None and hold.hit is not None:
        hold.release(land_rest=True)
    return {"armed": False}


def _watch(owner: int, study: list[int], folder: Path) -> None:
    """Unmount once the keeper that started this server is gone and so is the study's controller group (a keeper
    killed leaves the study writing; its end ends the mount)."""
    while True:
        time.sleep(WATCH_EVERY)
        if _alive(owner) or any(_group_alive(pid) for pid in study):
            continue
        lazy_unmount(folder)
        return


def _alive(pid: int) -> bool:
    return _answers(os.kill, pid) and os.path.exists(f"/proc/{pid}") and not _zombie(pid)


def _zombie(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", "rb") as stat:
            raw = stat.read()
    except OSError:
        return True
    return raw[raw.rfind(b")") + 2 : raw.rfind(b")") + 3] in (b"Z", b"X")


def _group_alive(pgid: int) -> bool:
    return _answers(os.killpg, pgid)


def _answers(send: Callable[[int, int], None], pid: int) -> bool:
    """Whether signal 0 reaches ``pid`` (a process, or a group with ``os.killpg``): it is there, ours or not."""
    try:
        send(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="studymon fs", description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    serve = sub.add_parser("serve", help="serve the pass-through mount over FOLDER")
    serve.add_argument("folder", type=Path)
    serve.add_argument("--control", type=Path, required=True, help="the Unix socket the owner talks on")
    serve.add_argument("--hold", help="an after: point armed before anything is written (with --from-seq)")
    serve.add_argument("--from-seq", type=int, default=0, help="the seq the --hold point counts from")
    serve.add_argument("--owner", type=int, help="the keeper: once it and the study's controller are gone, unmount")
    args = parser.parse_args(argv)
    why = missing()
    if why is not None:
        sys.stderr.write(f"studymon fs: cannot mount: {why}\n")
        return EXIT_USAGE
    folder = args.folder.resolve()
    if not folder.is_dir():
        sys.stderr.write(f"studymon fs: {folder} is not a folder: make it first\n")
        return EXIT_USAGE
    root = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)  # before the mount hides it
    ops = _Served(root, WriteLog())
    if args.hold is not None:
        said = _hold(ops, {"point": args.hold, "fromSeq": args.from_seq})
        if "error" in said:
            sys.stderr.write(f"studymon fs: --hold {args.hold}: {said['error']}\n")
            os.close(root)
            return EXIT_USAGE
    study: list[int] = []  # the controller's process group, once the keeper has said it

    def handle(request: dict[str, Any]) -> dict[str, Any]:
        op = request.get("op")
        if op == "ping":
            return {"up": ops.up.is_set(), "pid": os.getpid()}
        if op == "writes":
            return ops.log.as_json()
        if op == "hold":
            return _hold(ops, request)
        if op == "held":
            hold = ops.hold
            hit = hold.wait_held(float(request.get("wait", 0))) if hold is not None else None
            return {"held": hit is not None, **(dataclasses.asdict(hit) if hit is not None else {})}
        if op == "release":  # the console froze the study at the point (its record may not be held yet)
            hold = ops.hold
            if hold is None:
                return {"error": "no point is armed"}
            hold.release(bool(request.get("landRest")))
            return {"released": True, "held": hold.hit is not None, **({"seq": hold.hit.seq} if hold.hit else {})}
        if op == "disarm":
            return _disarm(ops)
        if op == "serving":
            pid = request.get("pid")
            if isinstance(pid, int) and not isinstance(pid, bool) and pid > 0:
                study.append(pid)
            return {"serving": study}
        if op == "unmount":
            if ops.hold is not None:  # the controller is gone: a write still held is let go, cut at the point
                ops.hold.release(land_rest=False)
            lazy_unmount(folder)  # libfuse's loop ends once the kernel lets go
            return {"unmounting": True}
        return {"error": f"no such request: {op!r}"}

    listener = control.serve(args.control, handle)
    if args.owner is not None:
        threading.Thread(target=_watch, args=(args.owner, study, folder), name="fs-owner", daemon=True).start()
    try:
        FUSE(
            ops,
            str(folder),
            foreground=True,
            nothreads=False,  # a held write must not stop the other calls
            direct_io=True,
            hard_remove=True,  # no hidden files left in the folder by a rename over an open file
            auto_unmount=True,
            fsname="studymon",
        )
    except RuntimeError:  # libfuse's loop returns non-zero after a signal; the unmount was clean all the same
        pass
    finally:
        control.close(listener, args.control)
        os.close(root)
    return 0
