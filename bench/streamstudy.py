"""A study for the console benches: ledger records at a steady rate, or none, as a control file says.

It honours the study contract (PROTOCOL.md §1-§2) and starts no runs, so it
needs no containers: ``studyOpen`` (budget 0), then records of the kinds a
study writes between runs (``stageOpen`` proposal and diagnosis, ``decision``
proposeExperiments and selectDiagnosis; 100-215 bytes a line, ~150 on
average, one ``os.write`` per line), round after round.  What it does next is
read from the control file named in its research.json, at every record and
every 50 ms when idle:

``stream``   append records at ``rate`` a second (on a fixed schedule, so a
             late wake-up does not lower the rate)
``idle``     write nothing, stay alive
``halt``     write ``halt {"reason": "balance exhausted"}`` and exit 0 (every
             check of the study holds: no runs, nothing charged)

A missing or unreadable control file counts as ``idle``.  SIGINT stops it
with exit 130, as the contract asks; it gives up by itself after
``maxSeconds`` (exit 1) so that nothing outlives an interrupted bench.

Keys of its research.json (besides the console's ``command``, ``study``,
``backend``, ``containerPrefix``):

``controlFile``  path of the control file (required)
``rate``         records a second while streaming (default 50)
``fillerFile``   records seq 2 .. fillers+1 written in one go after
                 ``studyOpen`` (a long ledger at once), or null
``fillers``      how many lines that file holds
``maxSeconds``   lifetime limit (default 3600)

Only the standard library is imported.

    python3 bench/streamstudy.py --config C --dir D [--resume]
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

IDLE_POLL = 0.05  # seconds between looks at the control file while idle
EXIT_INTERRUPTED = 130


def at(t: float) -> str:
    """RFC 3339 UTC with milliseconds and ``Z``, as the ledger wants."""
    whole = int(t)
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(whole)) + f".{int((t - whole) * 1000):03d}Z"


def write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def content_at(index: int) -> tuple[str, dict[str, Any]]:
    """The ``index``-th record after ``studyOpen``: four kinds a round, as a study between runs writes them."""
    rnd, step = index // 4 + 1, index % 4
    ids = [f"e{3 * rnd + k}" for k in range(3)]
    if step == 0:
        return "stageOpen", {"stage": "proposal", "round": rnd}
    if step == 1:
        proposed = [{"id": e, "param": round(0.1 + 0.8 * ((rnd * 7 + k * 13) % 97) / 97, 4)} for k, e in enumerate(ids)]
        return "decision", {"name": "proposeExperiments", "round": rnd, "output": {"proposed": proposed}}
    if step == 2:
        return "stageOpen", {"stage": "diagnosis", "round": rnd}
    return "decision", {
        "name": "selectDiagnosis",
        "round": rnd,
        "output": {"chosen": ids, "why": "untested, best first"},
    }


def line(seq: int, kind: str, content: dict[str, Any], t: float | None = None) -> bytes:
    record = {"seq": seq, "at": at(time.time() if t is None else t), "kind": kind, "content": content}
    return (json.dumps(record, separators=(",", ":")) + "\n").encode()


def filler_lines(count: int, stamp: float) -> bytes:
    """Records seq 2 .. count+1, as :func:`run` would write them (for a bench to pre-make once)."""
    return b"".join(line(i + 2, *content_at(i), t=stamp) for i in range(count))


class Control:
    """The control file: ``stream``, ``idle`` or ``halt``; re-read only when it changed."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.mtime = -1
        self.value = "idle"

    def read(self) -> str:
        try:
            st = os.stat(self.path)
        except OSError:
            return "idle"
        if st.st_mtime_ns != self.mtime:
            self.mtime = st.st_mtime_ns
            try:
                self.value = self.path.read_text(encoding="utf-8").strip() or "idle"
            except OSError:
                self.value = "idle"
        return self.value


def tail_of(path: Path, size: int = 4096) -> tuple[bytes, bool] | None:
    """The last ``size`` bytes of ``path``, and whether they are cut (the file is longer); None: no file."""
    try:
        with open(path, "rb") as fh:
            length = os.fstat(fh.fileno()).st_size
            fh.seek(max(0, length - size))
            return fh.read(), length > size
    except FileNotFoundError:
        return None


def last_seq(path: Path) -> int:
    """The seq of the ledger's last complete line (0 for an empty ledger)."""
    with open(path, "rb") as fh:
        size = os.fstat(fh.fileno()).st_size
        fh.seek(max(0, size - 8192))
        tail = fh.read()
    for raw in reversed(tail.split(b"\n")[:-1] if tail.endswith(b"\n") else tail.split(b"\n")[:-2]):
        try:
            return int(json.loads(raw)["seq"])
        except (ValueError, KeyError, TypeError):
            continue
    return 0


def run(cfg: dict[str, Any], study_dir: Path, resume: bool, stop: list[bool]) -> int:
    study_dir.mkdir(parents=True, exist_ok=True)
    path = study_dir / "ledger.jsonl"
    if path.exists() and path.stat().st_size and not resume:
        print(f"streamstudy: {path} exists; a fresh start never reuses a ledger", file=sys.stderr)
        return 2
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    control = Control(Path(cfg["controlFile"]))
    rate = float(cfg.get("rate", 50))
    deadline = time.monotonic() + float(cfg.get("maxSeconds", 3600))
    if resume:
        seq = last_seq(path) + 1
    else:
        write_all(fd, line(1, "studyOpen", {"study": cfg.get("study"), "budget": 0, "config": {"bench": "stream"}}))
        seq = 2
        fillers = int(cfg.get("fillers") or 0)
        if cfg.get("fillerFile") and fillers:
            # One write for the whole backlog: a long ledger appears at once.
            write_all(fd, Path(cfg["fillerFile"]).read_bytes())
            seq += fillers
    index = seq - 2
    next_at: float | None = None
    while not stop[0]:
        now = time.monotonic()
        if now > deadline:
            print("streamstudy: maxSeconds reached, giving up", file=sys.stderr)
            return 1
        phase = control.read()
        if phase == "halt":
            write_all(fd, line(seq, "halt", {"reason": "balance exhausted"}))
            return 0
        if phase != "stream":
            next_at = None
            time.sleep(IDLE_POLL)
            continue
        if next_at is None:
            next_at = now
        if next_at > now:
            time.sleep(next_at - now)
        write_all(fd, line(seq, *content_at(index)))
        seq += 1
        index += 1
        next_at += 1.0 / rate
    return EXIT_INTERRUPTED


Run = Callable[[dict[str, Any], Path, bool, list[bool]], int]


def study_main(run: Run, doc: str | None, argv: list[str] | None = None) -> int:
    """The command line the bench studies share: ``--config C --dir D [--resume]``.

    SIGINT sets the flag ``run`` looks at (the contract's clean stop, exit 130).
    """
    parser = argparse.ArgumentParser(description=(doc or "").splitlines()[0] if doc else None)
    parser.add_argument("--config", required=True, type=Path)
    parser.add_argument("--dir", required=True, type=Path)
    parser.add_argument("--resume", action="store_true")
    args = parser.parse_args(argv)
    stop = [False]

    def on_sigint(*_: object) -> None:
        stop[0] = True

    signal.signal(signal.SIGINT, on_sigint)
    cfg = json.loads(args.config.read_text(encoding="utf-8"))
    return run(cfg, args.dir, args.resume, stop)


def main(argv: list[str] | None = None) -> int:
    return study_main(run, __doc__, argv)


if __name__ == "__main__":
    sys.exit(main())
