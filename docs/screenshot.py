"""Take the README's screenshot (``docs/console.svg``) from a real run of ``studymon demo``.

The demo's three studies run under the real engine and the real console, at
160x48 (Textual's headless driver, so no terminal is needed).  The picture is
taken mid-run, after beta's armed kill and resume, once beta's killed run has
its result and the next round is under way: the graph, the lanes with the
target's bar through ``K`` and ``R``, the streams and the containers all have
something to show.  The studies are then stopped and their folders removed.

    python docs/screenshot.py                     # Docker when an engine answers, else the process runtime
    python docs/screenshot.py --backend process --out /tmp/console.svg
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import html
import re
import shutil
import sys
import tempfile
import time
from pathlib import Path

from studymon.engine.evidence.writer import read_json, read_jsonl
from studymon.engine.launch.prepare import create_fresh, plan_fresh, resolve
from studymon.engine.runtimes import NoSuchContainer, open_runtime
from studymon.refstudy import template as reference_template
from studymon.tui.app import Planned, StudymonApp
from studymon.tui.cli import DEMO_ARMED, DEMO_IDS, DEMO_STUDIES
from studymon.tui.screens import MainScreen

SIZE = (160, 48)
# One <text> run of an exported screenshot: its x, its stretched length, its characters.
TEXT_RUN = re.compile(r'(<text [^>]*?x=")([0-9.]+)("[^>]*?textLength=")([0-9.]+)("[^>]*>)([^<]*)(</text>)')
NBSP = "&#160;"


def tidy_svg(svg: str) -> str:
    """Move the spaces at the edges of every text run out of it (they become the gap they were).

    Each run is stretched to its cells (``textLength``); viewers squeeze the
    spaces at a run's edges before stretching, so a run that starts with
    spaces is drawn too far left (a graph's blocks slide under its scale) and
    one that ends with spaces too wide ("machineload").  A run trimmed of them,
    with ``x`` and ``textLength`` moved by the cells they took, draws the same
    characters at the same places in every viewer.
    """

    def trim(m: re.Match[str]) -> str:
        text = m.group(6)
        chars = len(html.unescape(text))
        if not chars:
            return m.group(0)
        body, lead, tail = text, 0, 0
        while body.startswith(NBSP):
            body, lead = body[len(NBSP) :], lead + 1
        while body.endswith(NBSP):
            body, tail = body[: -len(NBSP)], tail + 1
        if not body:
            return ""  # only spaces: the background is drawn apart, nothing to show
        if not lead and not tail:
            return m.group(0)
        cell = float(m.group(4)) / chars
        x = float(m.group(2)) + lead * cell
        length = float(m.group(4)) - (lead + tail) * cell
        return f"{m.group(1)}{x:g}{m.group(3)}{length:g}{m.group(5)}{body}{m.group(7)}"

    return TEXT_RUN.sub(trim, svg)


DEADLINE = 180.0  # seconds for the moment to come
CALM_WAIT = 6.0  # seconds more, at most, for a moment with at most one pane lit up


def moment_reached(app: StudymonApp, out: Path) -> bool:
    """beta was killed and resumed, its target has its result, and another of its runs is under way."""
    beta = out / DEMO_ARMED
    if not (beta / "kills" / "1" / "kill.json").is_file():
        return False
    kinds = [r.get("kind") for r in read_jsonl(beta / "study" / "ledger.jsonl") if isinstance(r, dict)]
    session = app.supervisor.sessions[DEMO_ARMED]
    return kinds.count("runResult") >= 1 and kinds.count("runStarted") >= 2 and session.is_running()


async def take(backend: str, target: Path, after: float) -> None:
    work = Path(tempfile.mkdtemp(prefix="studymon-screenshot-"))
    base = work / "demo"
    planned: list[Planned] = []
    try:
        pairs = [f"{i}={base / i}" for i in DEMO_IDS]
        specs, tpl, resolved = plan_fresh(pairs, reference_template(), [DEMO_ARMED], backend, new_parent=base)
        base.mkdir()
        create_fresh(specs, tpl, resolved, DEMO_STUDIES)
        planned = [
            Planned(
                s, str(read_json(s.out / "research.json").get("containerPrefix", "inforsi")), armed=s.id == DEMO_ARMED
            )
            for s in specs
        ]
        app = StudymonApp(planned, save_dir=work)
        async with app.run_test(size=SIZE) as pilot:
            deadline = time.monotonic() + DEADLINE
            while not moment_reached(app, base):
                if time.monotonic() > deadline:
                    raise SystemExit(f"screenshot: the moment did not come in {DEADLINE:g} s")
                await pilot.pause(0.2)
            await pilot.pause(after)  # some seconds more: the graph fills, the resumed run's bar grows past R
            # The demo's runs take seconds, so some pane nearly always has a fresh diagnosis start: wait
            # a little for a moment with one lit up at most, so that the others show their usual face.
            calm = time.monotonic() + CALM_WAIT
            while sum(p.has_class("-alert") for p in app.main.panes.values()) > 1 and time.monotonic() < calm:
                await pilot.pause(0.1)
            if not all(session.is_running() for session in app.supervisor.sessions.values()):
                raise SystemExit("screenshot: a study ended before the picture; take it earlier (--after)")
            app.main.tick()
            for pane in app.main.panes.values():
                pane.flush()
            await pilot.pause(0.3)
            target.write_text(tidy_svg(app.export_screenshot()), encoding="utf-8")  # noqa: ASYNC240 - a tool, once
            # Stop the studies (SIGINT, as the quit dialog's Stop does) and wait for the engine to let go.
            app.main.post_message(MainScreen.LeaveRequested(stop_first=True))
            while app.return_code is None and time.monotonic() < deadline + 60:  # noqa: ASYNC110 - the app's own loop
                await asyncio.sleep(0.2)
    finally:
        runtime = open_runtime(backend)
        for prefix in {p.prefix for p in planned}:
            for inspect in runtime.list(prefix):
                with contextlib.suppress(NoSuchContainer):
                    runtime.remove(str(inspect.get("Name", "")).lstrip("/"), force=True)
        shutil.rmtree(work, ignore_errors=True)


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    p.add_argument("--backend", choices=("auto", "docker", "process"), default="auto")
    p.add_argument("--out", type=Path, default=Path(__file__).with_name("console.svg"))
    p.add_argument("--after", type=float, default=3.0, help="seconds between beta's second run and the picture")
    args = p.parse_args()
    asyncio.run(take(resolve(args.backend), args.out.resolve(), args.after))
    sys.stdout.write(f"wrote {args.out}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
