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
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

from studymon.engine.contract.exits import EXIT_USAGE
from studymon.engine.contract.killpoint import BadPoint, KillPoint
from studymon.engine.fs import control
from studymon.engine.fs.fuse import FUSE, missing
from studymon.engine.fs.passthrough import PassThrough
from studymon.engine.fs.points import LedgerHold
from studymon.engine.fs.writes import WriteLog


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
    ops.hold = LedgerHold(point, from_seq, ops.purposes())
    return {"armed": True}


def lazy_unmount(folder: Path) -> None:
    """Detach the mount from FOLDER now, busy or not (what is open beneath keeps working until closed)."""
    subprocess.run(["fusermount3", "-u", "-z", str(folder)], check=False, capture_output=True)  # noqa: S607 - on PATH, as libfuse finds it


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="studymon fs", description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    serve = sub.add_parser("serve", help="serve the pass-through mount over FOLDER")
    serve.add_argument("folder", type=Path)
    serve.add_argument("--control", type=Path, required=True, help="the Unix socket the owner talks on")
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
        if op == "release":
            hold = ops.hold
            if hold is None or hold.hit is None:
                return {"error": "no write is held"}
            hold.release(bool(request.get("landRest")))
            return {"released": True}
        if op == "disarm":
            if ops.hold is not None and ops.hold.hit is None:
                ops.hold = None
            return {"armed": ops.hold is not None}
        if op == "unmount":
            lazy_unmount(folder)  # libfuse's loop ends once the kernel lets go
            return {"unmounting": True}
        return {"error": f"no such request: {op!r}"}

    listener = control.serve(args.control, handle)
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
