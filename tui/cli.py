"""The ``studymon`` command line.

    studymon run [--headless] [--template FILE] [--kill ID:POINT]... [--trace] ID=OUT [ID=OUT ...]
    studymon run --resume [--headless] [--kill ID:POINT]... [--trace] ID=OUT [...]
    studymon report [--json] OUT [OUT ...]
    studymon demo [--headless] [--backend auto|docker|process] [--out DIR]
    studymon attach [--headless] OUT [OUT ...]
    studymon image [--force]
    studymon runtime COMMAND ...       (run -d, inspect, wait, logs, rm, ps, events: as docker's, for studies)

Without ``--headless``, and with a terminal on standard output, ``run``,
``demo`` and ``attach`` open the console; otherwise they run headless.

Exit status: 0 every check of every study holds; 1 a check failed; 2 bad
usage or bad input (nothing written); 3 a study could not finish (the scene
is kept and the message gives the ``--resume`` command).

Headless, the first SIGINT (Ctrl-C) or SIGTERM stops every study
gracefully and ends with the check table; a second one stops waiting at
once, leaves the studies to their keepers and prints how to go on (exit 3).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shlex
import signal
import sys
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

from rich.console import Console
from rich.text import Text

from studymon import __version__
from studymon.engine import (
    DETAIL_LIMIT,
    EXIT_UNKNOWN,
    EXIT_USAGE,
    SEED,
    BadInput,
    BadPoint,
    Check,
    ControllerStarted,
    KillPoint,
    SessionResult,
    StudyEvent,
    StudyLock,
    StudySpec,
    Supervisor,
    check_out_path,
    check_program,
    check_state_folder,
    claim_for_command,
    container_prefix,
    create_fresh,
    exit_status,
    file_system_missing,
    json_text,
    load_template,
    parse_kill_option,
    parse_pair,
    plan_attach,
    plan_fresh,
    plan_resume,
    read_json,
    resolve,
    resume_command,
    shown,
    worst,
)
from studymon.refstudy import template as reference_template

if TYPE_CHECKING:
    from studymon.engine import ExploreOptions
    from studymon.tui.headless import HeadlessView

# After a second signal the sessions get this long to let go of their files
# (a cancelled wait unwinds in milliseconds); the studies are not waited for.
LEAVE_WAIT = 5.0
# Three different studies, so that watching three shows three things: their own seeds and
# budgets, runs of different weight (samples per experiment), and one with ablation runs.
DEMO_STUDIES: dict[str, dict[str, Any]] = {
    "alpha": {"seed": 7, "budget": 60, "samples": 20_000},
    "beta": {"seed": 11, "budget": 50, "samples": 200_000},
    "gamma": {"seed": 23, "budget": 70, "samples": 60_000, "ablation": True},
}
DEMO_IDS = tuple(DEMO_STUDIES)
DEMO_ARMED = "beta"


class _Parser(argparse.ArgumentParser):
    """argparse that refuses bad usage in one line (and exit status 2)."""

    def error(self, message: str) -> NoReturn:
        self.exit(EXIT_USAGE, f"{self.prog}: {message} (see {self.prog} --help)\n")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="studymon",
        description="Operator console for long-running research studies: launch, watch, kill, resume, check.",
        epilog="Exit status: 0 all checks hold, 1 a check failed, 2 bad usage or input, 3 a study could not finish.",
    )
    parser.add_argument("--version", action="version", version=f"studymon {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    sub.required = True

    run = sub.add_parser(
        "run",
        help="start (or --resume) studies, watch them, kill and check them",
        description="Start one or more studies at once, each into its own OUT folder.",
    )
    run.add_argument("--headless", action="store_true", help="no console: a live block per study, then the check table")
    run.add_argument(
        "--resume", action="store_true", help="continue existing studies (after a crash, an exit 75, a stop)"
    )
    run.add_argument(
        "--template", type=Path, default=None, help="the study template (research.json); default: the reference study's"
    )
    run.add_argument(
        "--kill",
        dest="kills",
        action="append",
        default=[],
        type=_kill_option,
        metavar="ID:POINT",
        help="arm a kill of study ID at POINT, after:KIND[/PURPOSE][#N] or container:ACTION[/PURPOSE][#N] "
        "(e.g. after:charge/ablation, container:die#2): SIGKILL its controller right after that moment, then resume "
        "it; repeatable, one study's points taken in order, each on the controller then running",
    )
    run.add_argument(
        "--kill-after-first-diagnosis-start",
        dest="kills",
        action="append",
        type=lambda study: (study, SEED),
        metavar="ID",
        help="the same as --kill ID:after:runStarted/diagnosis: kill when the first diagnosis run starts",
    )
    run.add_argument(
        "--trace",
        action="store_true",
        help="record every container event of each study, as received, in OUT/container-events-trace.jsonl "
        "(the crash-point explorer's trace)",
    )
    _console_options(run)
    run.add_argument("pairs", nargs="+", metavar="ID=OUT", help="a study id and its evidence folder")

    report = sub.add_parser(
        "report",
        help="rebuild the check table from evidence folders",
        description="Rebuild and print the check table from evidence folders alone.",
    )
    report.add_argument("--json", action="store_true", help="print the reports as JSON")
    report.add_argument("outs", nargs="+", type=Path, metavar="OUT")

    demo = sub.add_parser(
        "demo",
        help="run three reference studies at once, one armed",
        description="Run three reference studies at once (alpha, beta, gamma), "
        f"with the kill armed on {DEMO_ARMED}, each into DIR/<id>.",
    )
    demo.add_argument("--headless", action="store_true", help="no console")
    demo.add_argument(
        "--backend",
        choices=("auto", "docker", "process"),
        default="auto",
        help="container runtime (auto: Docker when an engine answers, else the process runtime)",
    )
    demo.add_argument(
        "--out",
        type=Path,
        default=None,
        metavar="DIR",
        help="a new folder for the evidence (default: ./studymon-demo-<time>)",
    )
    _console_options(demo)

    attach = sub.add_parser(
        "attach",
        help="watch studies that are already running (after a detach or a crash)",
        description="Find the running controllers from the evidence folders (pid verified by "
        "its start time) and watch them again; they can be killed and resumed.",
    )
    attach.add_argument("--headless", action="store_true", help="no console")
    _console_options(attach)
    attach.add_argument("outs", nargs="+", type=Path, metavar="OUT")

    explore = sub.add_parser(
        "explore",
        help="explore every class of crash point of a study, a trial each, on Dask",
        description="Run the study once, traced; group every place it could crash into classes by what a crash "
        "there leaves behind; run a trial per class (killed there, resumed, judged) on a Dask cluster; print the "
        "matrix of classes and checks. Exit 0 when every trial holds, 1 when one fails, 3 otherwise.",
    )
    explore.add_argument(
        "--headless", action="store_true", help="no console: a line per step, then the matrix (for scripts and CI)"
    )
    explore.add_argument(
        "--exit-when-done",
        action="store_true",
        help="close the console as soon as the campaign has ended (by default it stays open until q)",
    )
    explore.add_argument("--resume", action="store_true", help="run the lost and unrun trials of CAMPAIGN again")
    explore.add_argument(
        "--template", type=Path, default=None, help="the study template (research.json); default: the reference study's"
    )
    where = explore.add_mutually_exclusive_group()
    where.add_argument(
        "--workers", type=_positive, default=None, metavar="N", help="a local cluster of N (default: cores)"
    )
    where.add_argument(
        "--scheduler", default=None, metavar="ADDRESS", help="an existing Dask scheduler, tcp://HOST:PORT"
    )
    explore.add_argument("--max-trials", type=_positive, default=None, metavar="K", help="at most K trials")
    explore.add_argument("--all", dest="all_points", action="store_true", help="a trial per candidate, not per class")
    explore.add_argument("--depth", type=int, choices=(1, 2), default=1, help="2: also kill each resumed controller")
    explore.add_argument("target", metavar="ID=CAMPAIGN", help="the study's id and a new campaign folder (or CAMPAIGN)")

    image = sub.add_parser(
        "image",
        help="build the reference study's local Docker image",
        description="Build studymon/refstudy:1 from the static busybox on this machine.",
    )
    image.add_argument("--force", action="store_true", help="import again even when the image exists")

    # Listed for --help; ``main`` hands ``runtime ...`` to the runtime's own command line before parsing.
    runtime = sub.add_parser(
        "runtime",
        help="the process runtime through docker's command line, for studies ($STUDYMON_RUNTIME)",
        add_help=False,
    )
    runtime.add_argument("rest", nargs=argparse.REMAINDER)
    return parser


def _interrupt(signum: int, _frame: object) -> None:
    raise KeyboardInterrupt(signal.Signals(signum).name)


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["runtime"]:
        # Its own command line, docker's subset (run -d, inspect, wait, ...), with docker's exit statuses.
        from studymon.engine import runtime_main

        return runtime_main(argv[1:])
    args = build_parser().parse_args(argv)
    # Logs and pipes get a table wide enough to keep each check on one line.
    console = Console() if sys.stdout.isatty() else Console(width=int(os.environ.get("COLUMNS", "140")))
    err = Console(stderr=True)
    # Until the studies' event loop takes the signals over, SIGTERM ends the
    # command like Ctrl-C does: with one line, not silently half way.
    previous = signal.signal(signal.SIGTERM, _interrupt)
    try:
        return _command(args, console, err)
    except KeyboardInterrupt as exc:
        name = str(exc) or "SIGINT"
        made: list[StudySpec] = getattr(args, "made", [])
        then = (
            (
                "; their folders are made: start them with studymon run --resume "
                + " ".join(shlex.quote(f"{s.id}={s.out}") for s in made)
            )
            if made
            else ""
        )
        err.print(
            Text(
                f"studymon {args.command}: interrupted ({name}) before the studies were under watch; "
                f"no controller was started{then}"
            ),
            highlight=False,
            soft_wrap=True,
        )
        return EXIT_UNKNOWN
    finally:
        signal.signal(signal.SIGTERM, previous)


def _command(args: argparse.Namespace, console: Console, err: Console) -> int:
    try:
        if args.command == "run":
            return cmd_run(args, console)
        if args.command == "report":
            return cmd_report(args, console)
        if args.command == "demo":
            return cmd_demo(args, console)
        if args.command == "attach":
            specs = plan_attach(args.outs)
            return run_studies(specs, {}, False, args.headless, console, attach=True, options=ConsoleOptions.of(args))
        if args.command == "explore":
            return cmd_explore(args, console)
        if args.command == "image":
            from studymon.refstudy.image import main as image_main

            return image_main(["--force"] if args.force else [])
    except BadInput as exc:
        # The message may quote a folder's file (a study id that is not one): quoted, never markup.
        err.print(shown(f"studymon {args.command}: {exc}", DETAIL_LIMIT), highlight=False, soft_wrap=True)
        return EXIT_USAGE
    return EXIT_USAGE


# --- run ------------------------------------------------------------------------


def _kill_option(value: str) -> tuple[str, KillPoint]:
    """``--kill ID:POINT``; a point that does not parse is refused by argparse with the grammar (exit 2), and so is a
    power loss where it cannot be made."""
    try:
        study, point = parse_kill_option(value)
    except BadPoint as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    if point.power:
        why = file_system_missing()
        if why is not None:
            raise argparse.ArgumentTypeError(
                f"--kill {value!r}: a power loss needs the study's file system (only it knows what the study made "
                f"durable), and this machine cannot serve one: {why}; kill at {point.source}:... without power:"
            )
        raise argparse.ArgumentTypeError(
            f"--kill {value!r}: this version of studymon cannot make a power loss yet; kill at the same point "
            "without power:"
        )
    return study, point


def armed_points(kills: list[tuple[str, KillPoint]]) -> dict[str, list[KillPoint]]:
    """Each study's points, in the order the command gives them."""
    points: dict[str, list[KillPoint]] = {}
    for study, point in kills:
        points.setdefault(study, []).append(point)
    return points


def cmd_run(args: argparse.Namespace, console: Console) -> int:
    fresh: tuple[dict[str, Any], str] | None = None  # a fresh start's template and backend
    if args.resume:
        if args.template is not None:
            raise BadInput("--template is for a fresh start; a resumed study keeps its research.json")
        armed = armed_points(args.kills)
        specs = plan_resume(args.pairs, list(armed))
        research = {s.id: read_json(s.folder.research) for s in specs}
        prefixes = {sid: container_prefix(r) for sid, r in research.items()}
        backends = {sid: str(r.get("backend", "process")) for sid, r in research.items()}
    else:
        template_path = Path(args.template).resolve() if args.template else reference_template()
        armed = armed_points(args.kills)
        specs, template, backend = plan_fresh(args.pairs, template_path, list(armed))
        prefixes = {s.id: container_prefix(template) for s in specs}
        backends = {s.id: backend for s in specs}
        fresh = template, backend
    if "process" in backends.values():
        check_state_folder()  # an unsafe state folder is refused before anything is written
    # One study per id: claimed before anything is written, held (with the keepers) for the study's life.
    locks = claim_for_command(specs, prefixes, backends, fresh=not args.resume)
    if fresh is not None:
        try:
            create_fresh(specs, *fresh)
        except BaseException:
            for lock in locks.values():
                lock.release()
            raise
        args.made = specs  # an interrupt before the loop takes over names them
    options, trace = ConsoleOptions.of(args), args.trace
    return run_studies(specs, armed, args.resume, args.headless, console, locks=locks, options=options, trace=trace)


@dataclass(frozen=True)
class ConsoleOptions:
    """How the console behaves (the headless run has none of these)."""

    exit_when_done: bool = False  # close as soon as every study has ended, as a script wants
    bell: bool = False  # ring the terminal's bell when a diagnosis run starts

    @classmethod
    def of(cls, args: argparse.Namespace) -> ConsoleOptions:
        return cls(bool(getattr(args, "exit_when_done", False)), bool(getattr(args, "bell", False)))


def _console_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--exit-when-done",
        action="store_true",
        help="close the console as soon as every study has ended (by default it stays open on the verdicts until q)",
    )
    parser.add_argument("--bell", action="store_true", help="ring the terminal's bell when a diagnosis run starts")


def run_studies(
    specs: list[StudySpec],
    armed: dict[str, list[KillPoint]],
    resume: bool,
    headless: bool,
    console: Console,
    attach: bool = False,
    locks: dict[str, StudyLock] | None = None,
    options: ConsoleOptions | None = None,
    trace: bool = False,
) -> int:
    locks = locks or {}
    if not headless and not sys.stdout.isatty():
        console.print("studymon: standard output is not a terminal; running headless", highlight=False)
        headless = True
    if not headless:
        return run_console(specs, armed, resume, attach, console, locks, options or ConsoleOptions(), trace)
    from studymon.tui.headless import HeadlessView

    view = HeadlessView([s.id for s in specs], console)
    interrupts = Interrupts()

    def sink(event: StudyEvent) -> None:
        view(event)
        interrupts.seen(event)

    supervisor = Supervisor(sink)
    for spec in specs:
        supervisor.add(
            spec, resume=resume, armed=armed.get(spec.id, []), attach=attach, lock=locks.get(spec.id), trace=trace
        )
    results = asyncio.run(_supervise(supervisor, view, console, interrupts))
    if results is None:
        return left_running(supervisor, view, console, interrupts)
    return finish(results, console, supervisor.resume_hint(results))


def run_console(
    specs: list[StudySpec],
    armed: dict[str, list[KillPoint]],
    resume: bool,
    attach: bool,
    console: Console,
    locks: dict[str, StudyLock],
    options: ConsoleOptions,
    trace: bool = False,
) -> int:
    from studymon.tui.app import Planned, StudymonApp

    planned = []
    for spec in specs:
        research = read_json(spec.folder.research)
        prefix = container_prefix(research)
        planned.append(
            Planned(
                spec,
                prefix,
                resume=resume,
                armed=armed.get(spec.id, []),
                attach=attach,
                lock=locks.get(spec.id),
                trace=trace,
            )
        )
    app = StudymonApp(planned, exit_when_done=options.exit_when_done, bell=options.bell)
    # The console keeps SIGTERM's default (the studies run on under their keepers,
    # and ``attach`` takes them over); the headless handler is for the plain runner.
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    app.run()
    if not app.results:
        console.print(
            Text(
                "studymon: the console ended before the studies did; their evidence is kept. "
                f"Watch them again with: studymon attach {' '.join(str(s.out) for s in specs)}"
            ),
            highlight=False,
            soft_wrap=True,
        )
        return EXIT_UNKNOWN
    return finish(app.results, console, app.supervisor.resume_hint(app.results))


@dataclass
class Interrupts:
    """The signals a headless run received: the first stops the studies, the second leaves them."""

    count: int = 0
    last: str = ""
    # Called with a study's id when its controller starts after the first signal
    # (a launch under way when the signal came): that one is stopped too.
    stop_late: Callable[[str], None] | None = None

    def seen(self, event: StudyEvent) -> None:
        if self.count and isinstance(event, ControllerStarted) and self.stop_late is not None:
            self.stop_late(event.study)


async def _supervise(
    supervisor: Supervisor, view: HeadlessView, console: Console, interrupts: Interrupts
) -> list[SessionResult] | None:
    """Run the studies to their end; None when a second signal said to stop waiting for them."""
    loop = asyncio.get_running_loop()
    leave: asyncio.Future[None] = loop.create_future()

    def on_signal(signum: int) -> None:
        name = signal.Signals(signum).name
        interrupts.count += 1
        interrupts.last = name
        if interrupts.count == 1:
            # Graceful: SIGINT to every controller, evidence kept, the table at the end.
            console.print(
                f"studymon: {name}: stopping the studies (SIGINT to each controller); "
                "a second Ctrl-C or SIGTERM leaves them running",
                highlight=False,
                soft_wrap=True,
            )
            for s in supervisor.sessions.values():
                s.stop()
        elif not leave.done():
            leave.set_result(None)

    # Deferred: the session is still inside its launch when it reports the start.
    def stop_late(study: str) -> None:
        loop.call_soon(supervisor.sessions[study].stop)

    interrupts.stop_late = stop_late
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, on_signal, sig)
    running = asyncio.ensure_future(supervisor.run())
    try:
        with view:
            either: set[asyncio.Future[Any]] = {running, leave}
            await asyncio.wait(either, return_when=asyncio.FIRST_COMPLETED)
            if running.done():
                return running.result()
            # A cancelled session unwinds at the await it was in: every line and
            # file it wrote was written whole in one step of the loop, and its
            # kill, if one was under way, lets the controller go or completes
            # the SIGKILL (engine.kill).  Pending stops are dropped with the
            # loop, so no SIGKILL follows a SIGINT the study is still obeying.
            for s in supervisor.sessions.values():
                s.close()
            running.cancel()
            await asyncio.wait({running}, timeout=LEAVE_WAIT)
            for s in supervisor.sessions.values():
                if s.controller is not None and s.controller.is_same_process() and s.controller.is_stopped():
                    s.controller.thaw()  # never leave a study frozen with no console to thaw it
            return None
    finally:
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.remove_signal_handler(sig)
        # From here to the exit, a further signal has nothing left to stop: ignore it
        # rather than die in the loop's shutdown with a traceback.
        if leave.done():
            signal.signal(signal.SIGINT, signal.SIG_IGN)
            signal.signal(signal.SIGTERM, signal.SIG_IGN)


def left_running(supervisor: Supervisor, view: HeadlessView, console: Console, interrupts: Interrupts) -> int:
    """After a second signal: what is known of each study, and the exact command that continues it."""
    console.print(
        f"studymon: {interrupts.last} again: no longer waiting; the studies are left to their keepers "
        "and go on without the console",
        highlight=False,
        soft_wrap=True,
    )
    attach: list[StudySpec] = []
    resume: list[StudySpec] = []
    for sid, session in supervisor.sessions.items():
        controller = session.controller
        running = controller is not None and controller.is_same_process()
        known = view.known(sid)
        if running:
            assert controller is not None
            attach.append(session.spec)
            where = f"controller pid {controller.pid} still running (asked to stop; it ends on its own)"
        elif view.views[sid].finished:
            where = "finished"
        else:
            resume.append(session.spec)
            where = "controller not running"
        console.print(
            Text(f"  {sid}: {where}; {known}; evidence in {session.spec.out}"), highlight=False, soft_wrap=True
        )
    lines = []
    if attach:
        lines.append("studymon attach " + " ".join(shlex.quote(str(s.out)) for s in attach))
    if resume:
        lines.append("studymon run --resume " + " ".join(shlex.quote(f"{s.id}={s.out}") for s in resume))
    if lines:
        said = Text.assemble(("Continue with:", "bold yellow"), "\n  " + "\n  ".join(lines))
        console.print(said, highlight=False, soft_wrap=True)
    return EXIT_UNKNOWN


def finish(results: list[SessionResult], console: Console, hint: str | None) -> int:
    from studymon.engine import checks_report

    rows: list[tuple[str, list[Check]]] = []
    for r in results:
        checks = list(r.judgement.checks) if r.judgement else []
        if r.detached:
            checks.append(Check("finished", None, f"detached, still running: studymon attach {r.out}"))
        elif not r.finished:
            # Not a failure: what has not happened yet may still come (§6.6).
            checks.append(Check("finished", None, r.message or "the study could not finish"))
        rows.append((r.study, checks))
    for part in checks_report(rows):
        console.print(part)
    for r in results:
        if r.finished:
            console.print(Text(f"{r.study}: evidence in {r.out}", style="dim"), highlight=False)
    status = worst(r.exit_status for r in results)
    if hint:
        console.print(
            Text.assemble(
                ("A study could not finish; the scene is kept. Continue with:", "bold yellow"), f"\n  {hint}"
            ),
            highlight=False,
            soft_wrap=True,
        )
    return status


# --- explore ----------------------------------------------------------------------


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number of at least 1")
    return value


def explore_options(args: argparse.Namespace) -> ExploreOptions:
    """The campaign ``studymon explore`` asks for, its input checked (BadInput) before anything is written."""
    from studymon.engine import ExploreOptions

    if args.resume:
        if args.template is not None:
            raise BadInput("--template is for a new campaign; a resumed one keeps its own")
        folder = check_out_path(args.target.partition("=")[2] or args.target)
        if not (folder / "campaign.json").is_file():
            raise BadInput(f"{folder} is not a campaign folder (no campaign.json): give the CAMPAIGN to resume")
        options = ExploreOptions(study="", folder=folder, resume=True)
    else:
        study, folder = parse_pair(args.target)
        if os.path.lexists(folder):
            raise BadInput(f"{folder} exists; a campaign never reuses a folder: pick a new CAMPAIGN, or --resume it")
        if not folder.parent.is_dir():
            raise BadInput(f"{folder.parent} does not exist: create it first or pick another CAMPAIGN")
        template_path = Path(args.template).resolve() if args.template else reference_template()
        template = load_template(template_path)
        check_program(list(template["command"]), folder, f"template {template_path}")
        template["backend"] = resolve(template.get("backend", "auto"))
        if template["backend"] == "process":
            check_state_folder()
        options = ExploreOptions(study=study, folder=folder, template=template)
    options.workers, options.scheduler = args.workers, args.scheduler
    options.max_trials, options.all_points, options.depth = args.max_trials, args.all_points, args.depth
    return options


def cmd_explore(args: argparse.Namespace, console: Console) -> int:
    from studymon.engine import CampaignFolder, ExploreFailed, Explorer, to_resume
    from studymon.tui.explore_view import ExploreView

    options = explore_options(args)
    if args.headless:
        view = ExploreView(console)
        try:
            status = Explorer(options, view).run()
        except ExploreFailed as exc:
            console.print(shown(f"studymon explore: {exc}", DETAIL_LIMIT, "bold red"), highlight=False, soft_wrap=True)
            return EXIT_UNKNOWN
    else:
        from studymon.tui.explore_app import ExploreApp

        app = ExploreApp(options, exit_when_done=args.exit_when_done)
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        app.run()
        if app.failure is not None:
            said = shown(f"studymon explore: {app.failure}", DETAIL_LIMIT, "bold red")
            console.print(said, highlight=False, soft_wrap=True)
            return EXIT_UNKNOWN
        status = app.status if app.status is not None else EXIT_UNKNOWN
    if (options.folder / "campaign.json").is_file():
        ExploreView(console).matrix(options.folder)
    if to_resume(CampaignFolder(options.folder).trials()):
        console.print(
            Text(f"not every trial ran: studymon explore --resume {options.folder} runs the lost and unrun ones again"),
            highlight=False,
            soft_wrap=True,
        )
    return status


def report_campaigns(folders: list[Path], console: Console) -> int:
    """Each campaign judged offline from its trial folders alone (contract §8a): its checks (the journal and
    campaign.json held to the folders, one row per trial judged), its matrix, and whether campaign.json was
    written again with the verdicts judged now; the exit status of every check (1 a ✗, 3 a ?, else 0)."""
    from studymon.engine import checks_report, rejudge
    from studymon.tui.explore_view import matrix_of

    reports = [rejudge(folder) for folder in folders]
    for part in checks_report([(r.study or "campaign", r.checks) for r in reports]):
        console.print(part)
    for r in reports:
        console.print(matrix_of(r.study or "campaign", r.matrix))
        if r.written is not None:
            console.print(shown(r.written, DETAIL_LIMIT), highlight=False, soft_wrap=True)
    return exit_status(c.ok for r in reports for c in r.checks)


# --- report ---------------------------------------------------------------------


def cmd_report(args: argparse.Namespace, console: Console) -> int:
    from studymon.engine import is_campaign

    campaigns = [out.resolve() for out in args.outs if is_campaign(out.resolve())]
    if campaigns:
        if len(campaigns) != len(args.outs) or args.json:
            raise BadInput("give campaign folders alone, without --json: studymon report CAMPAIGN [CAMPAIGN ...]")
        return report_campaigns(campaigns, console)
    from studymon.engine import checks_report, judge

    judgements = []
    for out in args.outs:
        path = out.resolve()
        if not path.is_dir():
            raise BadInput(f"{path} is not a folder: give the OUT of a study")
        try:
            judgements.append(judge.judge(path))
        except judge.NotEvidence as exc:
            raise BadInput(str(exc)) from None
    if args.json:
        print(json_text([j.report_json() for j in judgements]))  # no raw control or bidi character from a folder
    else:
        rows = []
        for j in judgements:
            checks = list(j.checks)
            if not j.finished:
                # Its controller has not ended: it may still run, and attach follows it; else resume.
                how = (
                    f"studymon attach {shlex.quote(str(j.out))}"
                    if j.ending is None
                    else resume_command([StudySpec(j.study, j.out)])
                )
                checks.append(Check("finished", None, f"the study has not finished: {how} continues it"))
            rows.append((j.study, checks))
        for part in checks_report(rows):
            console.print(part)
    # §6.6: a check that failed beats one that may still change (an unfinished study has one: exitedCleanly).
    return exit_status([j.ok for j in judgements])


# --- demo -----------------------------------------------------------------------


def cmd_demo(args: argparse.Namespace, console: Console) -> int:
    base = (args.out or Path(f"studymon-demo-{datetime.now().astimezone().strftime('%Y%m%d-%H%M%S')}")).resolve()
    if base.exists():
        raise BadInput(f"{base} exists; the demo writes into a new folder: pick another --out")
    if not base.parent.is_dir():
        raise BadInput(f"{base.parent} does not exist: create it first or pick another --out")
    backend = resolve(args.backend)
    if backend == "docker":
        from studymon.refstudy.image import ImageError, build_image

        try:
            build_image()
        except ImageError as exc:
            if args.backend == "docker":
                raise BadInput(f"cannot build the reference study's image: {exc}") from None
            console.print(shown(f"studymon demo: {exc}; using the process runtime", DETAIL_LIMIT), highlight=False)
            backend = "process"
    pairs = [f"{i}={base / i}" for i in DEMO_IDS]
    specs, template, _ = plan_fresh(pairs, reference_template(), [DEMO_ARMED], backend, new_parent=base)
    if backend == "process":
        check_state_folder()
    prefixes = {s.id: container_prefix(template) for s in specs}

    # The demo's ids are fixed: a demo already running holds them.  Claimed before anything is written, so
    # that a second demo refuses at once, rather than write three folders and end unknown.
    def in_use(study: str, holder: Path | None) -> str:
        ids = ", ".join(DEMO_IDS)
        if holder is None:
            return (
                f"study id {study!r} is in use by another studymon command (a demo's study ids are always {ids}): "
                "wait for it to end; nothing was written"
            )
        demo = [holder.parent / i for i in DEMO_IDS]
        if all(p.is_dir() for p in demo):
            return (
                f"a studymon demo runs already, in {holder.parent} (a demo's study ids are always {ids}): watch it "
                f"with: studymon attach {' '.join(map(str, demo))}, or wait for it to end; nothing was written"
            )
        return (
            f"study id {study!r} is in use by the study in {holder} (a demo's study ids are always {ids}): "
            f"watch it with: studymon attach {holder}, or wait for it to end; nothing was written"
        )

    locks = claim_for_command(specs, prefixes, dict.fromkeys(prefixes, backend), fresh=True, in_use=in_use)
    try:
        base.mkdir()
        create_fresh(specs, template, backend, DEMO_STUDIES)
    except BaseException:
        for lock in locks.values():
            lock.release()
        raise
    console.print(
        Text(
            f"studymon demo: three reference studies on the {backend} runtime, kill armed on {DEMO_ARMED}; "
            f"evidence in {base}"
        ),
        highlight=False,
    )
    armed = {DEMO_ARMED: [SEED]}
    return run_studies(specs, armed, False, args.headless, console, locks=locks, options=ConsoleOptions.of(args))


if __name__ == "__main__":
    sys.exit(main())
