"""Exact point: the write of the point's record -> the controller's group frozen, with the study's file system
holding that write (contract §9.1) beside today's signal path (no file system), in one run.

For every trigger a fresh micro study (``bench/microstudy.py``) writes its
first diagnosis ``runPlanned`` and ``charge``, pauses 50-200 ms, and writes
``runStarted`` with ``content.wroteAt`` stamped just before the write: the
seed's point, ``after:runStarted/diagnosis``.  Each study runs through the
real engine (one armed ``StudySession`` under a ``Supervisor``).  The two
paths take turns, one trigger each, so machine noise hits both alike:

* **exact**: the keeper mounts the study's file system, the point is armed
  in it, the write is held at the record until the console has frozen the
  group (``kill.json`` says ``"exact": true``);
* **signals**: ``STUDYMON_NO_FUSE`` set for that launch: the console sees the
  record and freezes the group by signal, as without FUSE.

Reported per path, p50 / p99 / max in milliseconds: *frozen*
(``frozenEpoch`` − ``wroteAt``) and *killed* (``killSentEpoch`` − ``wroteAt``),
and the exact path's over the signal path's as a ratio.

    python bench/exact_point.py                   # 20 triggers per path, process runtime
    python bench/exact_point.py --quick           # smoke run

Exit status: 0 when every trigger was measured, 2 when one failed or this machine has no FUSE, 130 when interrupted.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.kill_reaction import Children, stats, stats_line, trigger_wrote_at  # noqa: E402
from bench.point_reaction import TRIGGER_DEADLINE, template  # noqa: E402
from studymon.engine.contract.killpoint import SEED  # noqa: E402
from studymon.engine.contract.spec import StudySpec  # noqa: E402
from studymon.engine.evidence.writer import read_json  # noqa: E402
from studymon.engine.fs.fuse import NO_FUSE_ENV, missing  # noqa: E402
from studymon.engine.launch.prepare import create_fresh  # noqa: E402
from studymon.engine.live.supervisor import Supervisor  # noqa: E402

PATHS = ("exact", "signals")


async def trigger(work: Path, backend: str, path: str, index: int, children: Children) -> dict[str, Any]:
    """One study killed at the seed's point on ``path``: frozen and killed in milliseconds after the write."""
    sid = f"{path[0]}{index:03d}{work.name[-4:].lower()}".replace("_", "x")
    out = work / sid
    spec = StudySpec(sid, out)
    create_fresh([spec], template(backend, False), backend)
    if path == "signals":
        os.environ[NO_FUSE_ENV] = "1"  # the launch copies this process's environment: its keeper mounts nothing
    else:
        os.environ.pop(NO_FUSE_ENV, None)
    sup = Supervisor(lambda event: None)
    sup.add(spec, resume=False, armed=[SEED])
    children.supervisors.append(sup)
    try:
        await asyncio.wait_for(sup.run(), TRIGGER_DEADLINE)
    finally:
        children.kill_all()
        os.environ.pop(NO_FUSE_ENV, None)
    kill = read_json(out / "kills" / "1" / "kill.json")
    if not kill:
        raise RuntimeError(f"{sid}: no kill (see {out / 'study.log'})")
    if bool(kill.get("exact")) != (path == "exact"):
        raise RuntimeError(f"{sid}: kill.json says exact {kill.get('exact')} on the {path} path")
    wrote = trigger_wrote_at(spec.folder.ledger)
    return {"frozen": (float(kill["frozenEpoch"]) - wrote) * 1e3, "killed": (float(kill["killSentEpoch"]) - wrote) * 1e3}


async def run_all(args: argparse.Namespace, work: Path, children: Children) -> dict[str, list[float]]:
    out: dict[str, list[float]] = {f"{p}.{k}": [] for p in PATHS for k in ("frozen", "killed")}
    for i in range(args.triggers):
        for path in PATHS:
            got = await trigger(work, args.backend, path, i, children)
            for key, value in got.items():
                out[f"{path}.{key}"].append(value)
        print(f"  trigger {i + 1}/{args.triggers}: frozen exact {out['exact.frozen'][-1]:.2f} ms, "
              f"signals {out['signals.frozen'][-1]:.2f} ms", flush=True)
    return out


def report(samples: dict[str, list[float]], backend: str) -> str:
    lines = [f"exact point on the {backend} runtime (ms after the write of the point's record; p50 / p99 / max)"]
    lines += [stats_line(key, values, 15) for key, values in samples.items()]
    e, g = stats(samples["exact.frozen"]), stats(samples["signals.frozen"])
    lines.append(f"  frozen, exact over signals: p50 {e['p50'] / g['p50']:.2f}x, p99 {e['p99'] / g['p99']:.2f}x")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backend", choices=("process", "docker"), default="process")
    parser.add_argument("--triggers", type=int, default=20)
    parser.add_argument("--quick", action="store_true", help="3 triggers per path")
    parser.add_argument("--json", type=Path, default=None, help="also write the samples here")
    args = parser.parse_args(argv)
    if args.quick:
        args.triggers = 3
    why = missing()
    if why is not None:
        print(f"exact_point: this machine cannot serve the study's file system: {why}", file=sys.stderr)
        return 2
    work = Path(tempfile.mkdtemp(prefix="exact-point-"))
    children = Children()
    try:
        samples = asyncio.run(run_all(args, work, children))
    except KeyboardInterrupt:
        return 130
    except RuntimeError as exc:
        print(f"exact_point: {exc}", file=sys.stderr)
        return 2
    finally:
        children.kill_all()
    shutil.rmtree(work, ignore_errors=True)
    print(report(samples, args.backend))
    if args.json is not None:
        args.json.write_text(json.dumps({"backend": args.backend, "samples": samples}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
