"""The keeper: the small parent that starts a study controller and records how it ended.

Only a parent can learn a process's exit status.  If the console were the
controller's parent, a console that detaches or crashes would lose it, and
``launches.jsonl`` would never say how the study ended.  So the console starts
this keeper (in its own session), the keeper starts the controller (in a
session of its own, so that its process group is the controller's alone),
writes the ``start`` line, tells the console the pid on standard output,
waits, and writes the ``end`` line with the exact code or signal.  The console
may come and go meanwhile; ``studymon attach`` finds the controller again
from the ``start`` line.

Where the machine can (FUSE, root), the keeper first gives the study its
file system (contract §9): it moves into a mount namespace of its own, mounts
the pass-through over ``OUT/study`` there (with the console's current
``after:`` point armed, so that even the first record can be held), and tells
the console whether its points are exact.  The mount ends with the study.

    python -m studymon.engine.launch.keeper OUT RESUME(0|1) [--hold POINT FROM_SEQ] -- ARGV...
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from studymon.engine.contract.exits import EXIT_USAGE
from studymon.engine.contract.folder import EvidenceFolder
from studymon.engine.evidence.records import NOT_STARTED, LaunchEnd, LaunchStart
from studymon.engine.evidence.writer import append_jsonl
from studymon.engine.fs.fuse import missing
from studymon.engine.fs.mount import MountFailed, StudyMount
from studymon.engine.fs.namespace import private_mounts


def _start_time(pid: int) -> float | None:
    import psutil

    try:
        return psutil.Process(pid).create_time()
    except psutil.Error:
        return None


def _ignore(_signum: int, _frame: object) -> None:
    return None


def _mount(study: Path, hold: tuple[str, int] | None) -> tuple[StudyMount | None, str | None]:
    """The study's file system, in a mount namespace of this keeper's own; or why there is none (said once by the
    console: the study runs as without it, and its points are timed by signals)."""
    why = missing()
    if why is None and os.geteuid() != 0:
        why = "exact points need root here"
    if why is None:
        why = private_mounts()
    if why is not None:
        return None, why
    try:
        study.mkdir(exist_ok=True)
        return StudyMount.start(study, hold=hold, owner=os.getpid()), None
    except (MountFailed, OSError) as exc:
        return None, str(exc)


def _usage() -> int:
    print(
        "usage: python -m studymon.engine.launch.keeper OUT RESUME [--hold POINT FROM_SEQ] -- ARGV...", file=sys.stderr
    )
    return EXIT_USAGE


def main(argv: list[str]) -> int:
    if len(argv) < 4 or "--" not in argv:
        return _usage()
    options, command = argv[: argv.index("--")], argv[argv.index("--") + 1 :]
    hold: tuple[str, int] | None = None
    if len(options) == 5 and options[2] == "--hold" and options[4].isdigit():
        hold = (options[3], int(options[4]))
    elif len(options) != 2 or not command:
        return _usage()
    out = Path(argv[0])
    resume = argv[1] == "1"
    # The terminal's signals are for the console, not for the study's keeper.  A
    # handler, not SIG_IGN: an ignored signal stays ignored across exec, and the
    # controller must get SIGINT's default (Python's KeyboardInterrupt) back.
    signal.signal(signal.SIGINT, _ignore)
    signal.signal(signal.SIGHUP, _ignore)
    mount, no_mount = _mount(EvidenceFolder(out).study, hold)
    log = os.open(EvidenceFolder(out).log, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    # Stamped before the spawn: the controller's first record is never seen before its start (§6.3).
    started = time.time()
    try:
        proc = subprocess.Popen(
            command,
            cwd=out,
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=log,
            start_new_session=True,
            restore_signals=True,
        )
    except OSError as exc:
        os.write(log, f"studymon: cannot start the controller: {exc}\n".encode())
        failed = LaunchStart(None, started, resume).to_json()
        append_jsonl(EvidenceFolder(out).launches, {**failed, "argv": command, "error": str(exc)})
        append_jsonl(EvidenceFolder(out).launches, LaunchEnd(None, time.time(), NOT_STARTED, None).to_json())
        print(json.dumps({"pid": None, "error": str(exc)}), flush=True)
        if mount is not None:
            mount.close()
        return 1
    finally:
        os.close(log)
    start_time = _start_time(proc.pid)
    append_jsonl(
        EvidenceFolder(out).launches,
        {
            **LaunchStart(proc.pid, started, resume).to_json(),
            "startTime": start_time,
            "keeper": os.getpid(),
            "argv": command,
        },
    )
    if mount is not None:
        with contextlib.suppress(OSError, ValueError):  # a server gone: its own watch has nothing to wait for
            mount.ask("serving", pid=proc.pid)
    try:
        print(
            json.dumps({"pid": proc.pid, "startTime": start_time, "exact": mount is not None, "noMount": no_mount}),
            flush=True,
        )
        sys.stdout.close()
    except OSError:
        pass  # the console is gone already; the study goes on
    # Standard output no longer goes anywhere useful.
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 1)
    rc = proc.wait()
    code, sig = (None, signal.Signals(-rc).name) if rc < 0 else (rc, None)
    append_jsonl(EvidenceFolder(out).launches, LaunchEnd(proc.pid, time.time(), code, sig).to_json())
    if mount is not None:
        mount.close(wait=False)  # the console waits for this keeper's end: the server ends by itself
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
