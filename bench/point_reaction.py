"""Point reaction: a container point's kill (the runtime's event -> SIGKILL) beside a ledger point's, each beside
the machine's floor, in one run.

For every trigger a fresh micro study (``bench/microstudy.py``) writes its
first diagnosis ``runPlanned`` and ``charge``, pauses 50-200 ms, and then
either writes ``runStarted`` (the **ledger point**, the seed's
``after:runStarted/diagnosis``: the reaction is ``killSentEpoch`` minus the
write's ``wroteAt``, as ``bench/kill_reaction.py`` measures it) or starts its
run's container through ``$STUDYMON_RUNTIME`` and writes nothing more (the
**container point**, ``container:start/diagnosis``: the reaction is
``killSentEpoch`` minus the start event's ``timeNano``, the runtime's own
stamp).  The two take turns, one trigger each, so machine noise hits both
alike.  Each runs through the real engine: one armed ``StudySession`` under a
``Supervisor``, no mocks.

Floors, measured in the same run:

* **event floor**: a subscriber of this bench's own, in this process, follows
  the same runtime's event stream (``Runtime.stream``) and notes when each
  container start reaches it: its ``seen - timeNano`` is what any reader of
  that stream waits before it can react, the container point's floor;
* **work floor**: as ``bench/kill_reaction.py``'s, a fixed ~1 ms of Python
  work timed after a pause drawn like the study's: the ledger point's.

    python bench/point_reaction.py                    # 20 triggers per point, process runtime
    python bench/point_reaction.py --backend docker   # the same on Docker (an engine must answer)
    python bench/point_reaction.py --quick            # smoke run

Exit status: 0 when every trigger was measured, 2 when one failed, 130 when interrupted.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import shutil
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.kill_reaction import (  # noqa: E402
    DELAY_MS,
    MICROSTUDY,
    Children,
    calibrate_floor,
    floor_ms,
    stats,
    stats_line,
    trigger_wrote_at,
)
from studymon.engine.contract.killpoint import SEED, KillPoint  # noqa: E402
from studymon.engine.contract.spec import StudySpec  # noqa: E402
from studymon.engine.evidence.writer import read_json  # noqa: E402
from studymon.engine.launch.prepare import create_fresh  # noqa: E402
from studymon.engine.live.supervisor import Supervisor  # noqa: E402
from studymon.engine.runtimes import open_runtime  # noqa: E402
from studymon.refstudy.image import IMAGE  # noqa: E402

CONTAINER_POINT = KillPoint.parse("container:start/diagnosis")
TRIGGER_DEADLINE = 120.0


class EventFloor:
    """A subscriber of the runtime's events in a thread of this process: when each container start reached it."""

    def __init__(self, backend: str) -> None:
        self.backend = backend
        self.seen: dict[str, tuple[float, float]] = {}  # container name -> (timeNano as seconds, seen)
        self._stop = threading.Event()
        self._live = threading.Event()
        self._thread = threading.Thread(target=self._follow, name="bench-event-floor", daemon=True)

    def start(self) -> None:
        self._thread.start()
        self._live.wait(30)

    def _follow(self) -> None:
        runtime = open_runtime(self.backend)
        try:
            runtime.stream(self._event, self._stop, on_live=lambda _t: self._live.set())
        finally:
            runtime.close()

    def _event(self, event: dict[str, Any]) -> None:
        seen = time.time()
        if (event.get("Action") or event.get("status")) != "start":
            return
        name = ((event.get("Actor") or {}).get("Attributes") or {}).get("name", "")
        with contextlib.suppress(KeyError, TypeError, ValueError):
            self.seen[str(name).lstrip("/")] = (int(event["timeNano"]) / 1e9, seen)

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(10)


def template(backend: str, container: bool) -> dict[str, Any]:
    return {
        "command": [sys.executable, str(MICROSTUDY)],
        "backend": backend,
        "containerPrefix": "bench",
        "fillers": 0,
        "delayMs": list(DELAY_MS),
        "awaitConsole": True,
        "containerPoint": container,
        "image": IMAGE if backend == "docker" else None,
    }


async def trigger(work: Path, backend: str, point: KillPoint, index: int, children: Children) -> dict[str, Any]:
    """One armed study killed at ``point``: its reaction, notice and act in milliseconds, and its event's name."""
    container = not point.on_record
    kind = "container" if container else "ledger"
    sid = f"{kind[0]}{index:03d}{work.name[-4:].lower()}".replace("_", "x")
    out = work / sid
    spec = StudySpec(sid, out)
    create_fresh([spec], template(backend, container), backend)
    sup = Supervisor(lambda event: None)
    sup.add(spec, resume=False, armed=[point])
    children.supervisors.append(sup)
    try:
        await asyncio.wait_for(sup.run(), TRIGGER_DEADLINE)
    finally:
        children.kill_all()
    kill = read_json(out / "kills" / "1" / "kill.json")
    if not kill:
        raise RuntimeError(f"{sid}: no kill (see {out / 'study.log'})")
    sent, seen = float(kill["killSentEpoch"]), float(kill["triggerSeenEpoch"])
    if container:
        began = int(kill["triggerEvent"]["timeNano"]) / 1e9
        name = str(kill["triggerEvent"]["Actor"]["Attributes"]["name"]).lstrip("/")
    else:
        began, name = trigger_wrote_at(spec.folder.ledger), ""
    return {"point": kind, "reaction": (sent - began) * 1e3, "notice": (seen - began) * 1e3,
            "act": (sent - seen) * 1e3, "name": name}


async def run_all(args: argparse.Namespace, work: Path, children: Children) -> dict[str, list[float]]:
    floor = EventFloor(args.backend)
    await asyncio.to_thread(floor.start)
    work_lines = calibrate_floor()
    out: dict[str, list[float]] = {k: [] for k in (
        "ledger", "ledger.notice", "ledger.act", "container", "container.notice", "container.act",
        "event floor", "work floor")}
    try:
        for i in range(args.triggers):
            for point in (SEED, CONTAINER_POINT):
                got = await trigger(work, args.backend, point, i, children)
                kind = got["point"]
                out[kind].append(got["reaction"])
                out[f"{kind}.notice"].append(got["notice"])
                out[f"{kind}.act"].append(got["act"])
                if kind == "container":
                    began, seen = floor.seen.get(got["name"], (None, None))
                    if began is not None and seen is not None:
                        out["event floor"].append((seen - began) * 1e3)
                out["work floor"].append(await floor_ms(work_lines))
            print(f"  trigger {i + 1}/{args.triggers}: ledger {out['ledger'][-1]:.2f} ms, "
                  f"container {out['container'][-1]:.2f} ms", flush=True)
    finally:
        floor.stop()
    return out


def report(samples: dict[str, list[float]], backend: str) -> str:
    lines = [f"point reaction on the {backend} runtime (ms; p50 / p99 / max over n)"]
    lines += [stats_line(key, values, 17) for key, values in samples.items()]
    c, f = stats(samples["container"]), stats(samples["event floor"])
    lines.append(f"  container point over the event floor: p50 +{c['p50'] - f['p50']:.3f} ms, "
                 f"p99 +{c['p99'] - f['p99']:.3f} ms")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backend", choices=("process", "docker"), default="process")
    parser.add_argument("--triggers", type=int, default=20)
    parser.add_argument("--quick", action="store_true", help="3 triggers per point")
    parser.add_argument("--json", type=Path, default=None, help="also write the samples here")
    args = parser.parse_args(argv)
    if args.quick:
        args.triggers = 3
    work = Path(tempfile.mkdtemp(prefix="point-reaction-"))
    children = Children()
    began = time.time()
    try:
        samples = asyncio.run(run_all(args, work, children))
    except KeyboardInterrupt:
        return 130
    except RuntimeError as exc:
        print(f"point_reaction: {exc}", file=sys.stderr)
        return 2
    finally:
        children.kill_all()
        Children.sweep(work, began)
        shutil.rmtree(work, ignore_errors=True)
    print(report(samples, args.backend))
    if args.json is not None:
        args.json.write_text(json.dumps({"backend": args.backend, "samples": samples}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
