"""A ledger append through the study's file system, beside the same append straight to a folder, in one run.

The study's folder is mounted through the pass-through file system
(``studymon.engine.fs``) so that the console knows what was written and what
was made durable.  Every ``write(2)`` the study makes then goes through the
kernel to the file system's process and back.  This bench appends ~200-byte
ledger lines (one ``os.write`` on an ``O_APPEND`` descriptor, as the
reference study does) to two files in turn, block by block: one in a folder
under the mount, one in a plain folder beside it, so that machine noise hits
both alike.  Then the same with an ``fsync`` after each append (the durable
study of contract §9.2).  It prints p50 and p99 per design in microseconds,
and the ratios mount/direct.

Target: an append through the mount at p99 <= 50 us.

    python bench/fs_append.py                # 5000 appends per design, 1000 with fsync (~30 s)
    python bench/fs_append.py --quick        # smoke run, a second or two

Exit status: 0; 2 when this machine cannot mount (the reason is printed);
130 when interrupted.  The mount is ended and the temporary folder removed
on the way out (``--keep`` keeps the folder: both ledgers, a line an append).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from studymon.engine.fs.fuse import missing  # noqa: E402
from studymon.engine.fs.mount import StudyMount  # noqa: E402

BLOCK = 250  # appends a design makes before the other takes its turn
TARGET_P99_US = 50.0


def percentile(values: list[float], q: float) -> float:
    """Linear interpolation between the closest ranks (numpy's default)."""
    xs = sorted(values)
    k = (len(xs) - 1) * q / 100
    lo = int(k)
    hi = min(lo + 1, len(xs) - 1)
    return xs[lo] + (xs[hi] - xs[lo]) * (k - lo)


def line(seq: int) -> bytes:
    body = {"seq": seq, "at": "2026-12-07T00:00:00.000Z", "kind": "decision",
            "content": {"name": "selectDiagnosis", "round": seq, "output": {"chosen": ["e1a", "e1b", "e1c"]}}}
    return (json.dumps(body) + "\n").encode()


def appends(paths: dict[str, Path], count: int, sync: bool) -> dict[str, list[float]]:
    """``count`` appends to each path, taking turns a block at a time: each one's time in microseconds."""
    fds = {name: os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644) for name, path in paths.items()}
    took: dict[str, list[float]] = {name: [] for name in paths}
    seq = {name: 0 for name in paths}
    try:
        while any(len(t) < count for t in took.values()):
            for name, fd in fds.items():
                for _ in range(min(BLOCK, count - len(took[name]))):
                    seq[name] += 1
                    data = line(seq[name])
                    began = time.perf_counter_ns()
                    os.write(fd, data)
                    if sync:
                        os.fsync(fd)
                    took[name].append((time.perf_counter_ns() - began) / 1000)
    finally:
        for fd in fds.values():
            os.close(fd)
    return took


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--appends", type=int, default=5000, help="appends per design, without fsync")
    parser.add_argument("--synced", type=int, default=1000, help="appends per design, each fsynced")
    parser.add_argument("--quick", action="store_true", help="smoke run: 500 and 100")
    parser.add_argument("--json", type=Path, help="write every sample here")
    parser.add_argument("--keep", action="store_true", help="keep the temporary folder")
    args = parser.parse_args()
    if args.quick:
        args.appends, args.synced = 500, 100
    why = missing()
    if why is not None:
        print(f"fs_append: this machine cannot mount: {why}", file=sys.stderr)
        return 2
    home = Path(tempfile.mkdtemp(prefix="fs-append-"))
    (home / "mounted").mkdir()
    (home / "direct").mkdir()
    result: dict[str, Any] = {}
    try:
        with StudyMount.start(home / "mounted"):
            for sync, count in ((False, args.appends), (True, args.synced)):
                paths = {"mount": home / "mounted" / f"ledger-{int(sync)}.jsonl",
                         "direct": home / "direct" / f"ledger-{int(sync)}.jsonl"}
                result["fsync" if sync else "append"] = appends(paths, count, sync)
    except KeyboardInterrupt:
        return 130
    finally:
        if args.keep:
            print(f"kept {home}", file=sys.stderr)
        else:
            shutil.rmtree(home, ignore_errors=True)
    print(f"{'design':<16} {'n':>6} {'p50 us':>9} {'p99 us':>9}")
    figures: dict[str, tuple[float, float]] = {}
    for kind, label in (("append", ""), ("fsync", "+fsync")):
        for design in ("direct", "mount"):
            samples = result[kind][design]
            p50, p99 = percentile(samples, 50), percentile(samples, 99)
            figures[design + label] = (p50, p99)
            print(f"{design + label:<16} {len(samples):>6} {p50:>9.1f} {p99:>9.1f}")
    for label in ("", "+fsync"):
        (d50, d99), (m50, m99) = figures["direct" + label], figures["mount" + label]
        print(f"ratio mount/direct{label}: p50 x{m50 / d50:.1f}, p99 x{m99 / d99:.1f}")
    p99 = figures["mount"][1]
    print(f"target: an append through the mount at p99 <= {TARGET_P99_US:.0f} us: {p99:.1f} us, "
          f"{'met' if p99 <= TARGET_P99_US else 'not met'}")
    if args.json:
        args.json.write_text(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
