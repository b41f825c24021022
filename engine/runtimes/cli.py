"""``studymon runtime``: the process runtime through the part of the ``docker`` command line a study needs.

A study written in any language starts, watches and waits for its runs by
calling ``$STUDYMON_RUNTIME`` (contract §3): ``docker`` on the Docker
backend, and on the process backend the argv prefix that reaches this module
with the console's own interpreter (:func:`prefix`).  So every command here
answers as ``docker`` does, in the same shapes, on the same streams, with the
same exit status::

    run -d --name NAME [-l|--label K[=V]]... [-e|--env K[=V]]... IMAGE|- COMMAND [ARG...]
                                         the Id, one line; a name in use: exit 125
    inspect [-f FORMAT] NAME|ID...       a JSON array (``[]`` and exit 1 when one is missing)
    wait NAME|ID...                      each exit code, one a line
    logs NAME|ID                         the run's standard output and error, each on its own stream
    rm [-f] NAME|ID...                   each name removed (``-f``: a missing one is said, not an error)
    ps [-a] [-q] [--no-trunc] [-f|--filter K=V]... [--format FORMAT]
                                         a table, or ``{{json .}}``: docker's keys, newest first
    events [--since T] [--until T] [-f|--filter K=V]... [--format FORMAT]
                                         docker's event objects, one a line; without --until
                                         (or with one to come) it follows until then or Ctrl-C

A run of the process runtime is a process tree on this machine: the image is
recorded (``-`` records none), never pulled or entered.

What is left out, and why:

* a run in the foreground (``run`` without ``-d``), ``--rm``, ``-i``, ``-t``,
  ``-w``, ports, volumes, networks, resources: a study's runs are detached,
  waited for by name and outlive the controller; a flag docker has and this
  has not is refused (exit 125), never ignored;
* a run without ``--name``: every run's container has its name (contract §3);
* ``exec``, ``start``, ``restart``, ``stop``, ``kill``, ``create``: a study
  never runs work again in a container (the judge fails it), so the runtime
  offers no way to;
* ``logs -f``/``--tail``/``--since``; ``ps -n``/``-l``/``-s``; the filters
  ``ancestor``, ``before``, ``since``, ``volume``, ``network``, ``publish``,
  ``expose``, ``health``, ``isolation``, ``is-task`` of ``ps`` (refused in one
  line: ``name``, ``id``, ``label``, ``status`` and ``exited`` are kept);
* of Go's templates, only ``{{json .}}``, ``{{json .Path}}`` and
  ``{{.Path}}`` (fields and map keys, as docker names them); ``table``,
  ``if``, ``range`` and functions are refused in one line;
* events of images, networks and volumes: there are none (their filters match
  nothing).

Errors go to standard error in one line (a usage error adds the command's
usage), with docker's status: 1 for what docker's daemon refuses (no
such container, an invalid filter) or a wrong number of arguments, 125 for a
flag it cannot parse, an invalid or taken name, a run it cannot create; 126 or
127 for a command that cannot be started (the Id is printed first, as docker
does); 130 on Ctrl-C.
"""

from __future__ import annotations

import os
import re
import shlex
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any, NoReturn

from studymon.engine.contract.spec import BadInput
from studymon.engine.runtimes.base import ContainerConflict, Event, Inspect, NoSuchContainer, Runtime
from studymon.engine.runtimes.process import NAME_RE, ROOT_ENV, ProcessRuntime, default_root
from studymon.engine.runtimes.shapes import (
    EXIT_ERROR,
    EXIT_USAGE,
    PROG,
    Failure,
    Template,
    epoch,
    event_fields,
    event_filter,
    event_line,
    go_json,
    name_of,
    ps_filter,
    ps_row,
    ps_table,
    read_filters,
    read_time,
)

# The environment variable that names the runtime to a study (contract §3).
ENV = "STUDYMON_RUNTIME"
EXIT_INTERRUPTED = 128 + signal.SIGINT  # docker's, as a shell's: the signal's number past 128
EXIT_PIPE = 128 + signal.SIGPIPE
_HEX = re.compile(r"[0-9a-f]{1,64}")


# --- what a study is given -------------------------------------------------------------
def prefix(backend: str) -> str:
    """``STUDYMON_RUNTIME`` for ``backend``: ``docker``, or the argv prefix that reaches ``studymon runtime``.

    The words are separated by single spaces so that ``$STUDYMON_RUNTIME
    inspect NAME`` works unquoted in sh.  That cannot hold for a word with
    white space or a character sh would expand (an interpreter installed
    under ``/opt/My Tools/``): such a word is quoted as sh quotes it, and a
    study reads the prefix with ``eval`` or ``shlex.split`` there.  ``-P``:
    the study's working folder (its ``OUT``) is not on the import path.
    """
    if backend == "docker":
        return "docker"
    words = [sys.executable or "python3", "-P", "-m", "studymon", "runtime"]
    return " ".join(w if re.fullmatch(r"[\w@%+=:,./-]+", w) else shlex.quote(w) for w in words)


def study_environment(backend: str, runtime: Runtime) -> dict[str, str]:
    """What a study controller's environment gains so that ``$STUDYMON_RUNTIME`` is the console's runtime.

    For the process runtime, its state folder by an absolute path: the
    console found it from its own working folder and environment, the study
    runs in ``OUT`` and may change its environment.
    """
    env = {ENV: prefix(backend)}
    if backend == "process":
        root = getattr(runtime, "root", None)  # a ProcessRuntime's, or one a wrapper passes on
        env[ROOT_ENV] = os.path.abspath(root if isinstance(root, str | os.PathLike) else default_root())
    return env


# --- flags, as docker's command line reads them --------------------------------------------
@dataclass(frozen=True)
class Flag:
    long: str
    short: str = ""
    value: bool = False  # takes a value
    many: bool = False  # may be given again: a list
    help: str = ""


HELP = Flag("--help", "-h", help="print this usage")


@dataclass(frozen=True)
class Command:
    name: str
    usage: str
    summary: str
    flags: tuple[Flag, ...]
    interspersed: bool = True  # False for ``run``: the flags end at the image
    least: int = 0  # arguments, at least
    most: int | None = None

    def line(self) -> str:
        return f"Usage:  {PROG} {self.name} {self.usage}"

    def help_text(self) -> str:
        rows = [self.line(), "", self.summary, "", "Options:"]
        for f in (*self.flags, HELP):
            names = f"{f.short}, {f.long}" if f.short else f"    {f.long}"
            rows.append(f"  {names + (' value' if f.value else ''):24} {f.help}")
        return "\n".join(rows) + "\n"


@dataclass
class Parsed:
    values: dict[str, Any] = field(default_factory=dict)
    args: list[str] = field(default_factory=list)

    def one(self, flag: str) -> Any:
        return self.values[flag]


def parse(command: Command, argv: list[str]) -> Parsed | None:
    """The flags and arguments of ``argv``, or None after printing the help it asked for."""
    flags = (*command.flags, HELP)
    by_long = {f.long: f for f in flags}
    by_short = {f.short: f for f in flags if f.short}
    got = Parsed({f.long: [] if f.many else None if f.value else False for f in flags})

    def store(flag: Flag, value: Any) -> None:
        if flag.many:
            got.values[flag.long].append(value)
        else:
            got.values[flag.long] = value

    def usage_error(message: str) -> NoReturn:
        raise Failure(message, EXIT_USAGE, command.name)

    i = 0
    while i < len(argv):
        arg = argv[i]
        i += 1
        if arg == "--":
            got.args.extend(argv[i:])
            break
        if arg.startswith("--"):
            name, eq, value = arg.partition("=")
            found = by_long.get(name)
            if found is None:
                usage_error(f"unknown flag: {name}")
            if found.value:
                if not eq:
                    if i >= len(argv):
                        usage_error(f"flag needs an argument: {name}")
                    value = argv[i]
                    i += 1
                store(found, value)
            elif eq and value not in ("true", "false"):
                usage_error(f'invalid argument "{value}" for "{name}" flag: expected true or false')
            else:
                store(found, value != "false")
        elif arg.startswith("-") and arg != "-":
            j = 1
            while j < len(arg):
                found = by_short.get("-" + arg[j])
                if found is None:
                    usage_error(f"unknown shorthand flag: '{arg[j]}' in {arg}")
                if found.value:
                    value = arg[j + 1 :].removeprefix("=")
                    if not value:
                        if i >= len(argv):
                            usage_error(f"flag needs an argument: '{arg[j]}' in {arg}")
                        value = argv[i]
                        i += 1
                    store(found, value)
                    break
                store(found, True)
                j += 1
        else:
            got.args.append(arg)
            if not command.interspersed:
                got.args.extend(argv[i:])
                break
    if got.values["--help"]:
        sys.stdout.write(command.help_text())
        return None
    n = len(got.args)
    if command.most == 0 and n:
        raise Failure(f"'{PROG} {command.name}' accepts no arguments", EXIT_ERROR, command.name)
    if command.least == command.most and n != command.least:
        raise Failure(f"'{PROG} {command.name}' requires exactly {command.least} argument", EXIT_ERROR, command.name)
    if n < command.least:
        raise Failure(f"'{PROG} {command.name}' requires at least {command.least} argument", EXIT_ERROR, command.name)
    return got


def pairs(items: list[str], what: str) -> Iterator[tuple[str, str]]:
    """``K=V`` items as pairs; ``K`` alone is ``(K, "")``, as docker reads labels."""
    for item in items:
        key, _, value = item.partition("=")
        if not key:
            raise Failure(f'invalid argument "{item}" for "{what}" flag: no key before "="', EXIT_USAGE)
        yield key, value


# --- the containers, found as docker finds them ------------------------------------------
def _no_such_container(ref: str) -> Failure:
    return Failure(f"Error: No such container: {ref}")


def find(rt: ProcessRuntime, ref: str) -> Inspect | None:
    """The container ``ref`` names: by name (``/name`` too), else by its Id or an unambiguous start of it."""
    found = rt.inspect(ref.removeprefix("/"))
    if found is not None or not _HEX.fullmatch(ref):
        return found
    matches = [c for c in rt.list("") if c["Id"].startswith(ref)]
    if len(matches) > 1:
        raise Failure(f"Error: multiple IDs found with provided prefix: {ref}")
    return matches[0] if matches else None


# --- the commands ------------------------------------------------------------------------------
FORMAT = Flag("--format", "", value=True, help="print with a Go template: {{json .}}, {{json .Field}}, {{.Field}}")
FILTER = Flag("--filter", "-f", value=True, many=True, help="KEY=VALUE, again for more")

COMMANDS: dict[str, Command] = {
    c.name: c
    for c in (
        Command(
            "run",
            "-d --name NAME [OPTIONS] IMAGE|- COMMAND [ARG...]",
            "Start COMMAND in a new detached container named NAME; print its Id. The image is recorded, "
            "the command runs on this machine.",
            (
                Flag("--detach", "-d", help="run in the background (required)"),
                Flag("--name", value=True, help="the container's name (required)"),
                Flag("--label", "-l", value=True, many=True, help="KEY=VALUE label, again for more"),
                Flag(
                    "--env",
                    "-e",
                    value=True,
                    many=True,
                    help="KEY=VALUE in the environment (KEY alone: its value here)",
                ),
            ),
            interspersed=False,
            least=1,
        ),
        Command(
            "inspect",
            "[OPTIONS] NAME|ID [NAME|ID...]",
            "Print the containers' inspects, a JSON array.",
            (Flag("--format", "-f", value=True, help="print each with a Go template"),),
            least=1,
        ),
        Command("wait", "NAME|ID [NAME|ID...]", "Wait until the containers exit; print each exit code.", (), least=1),
        Command("logs", "NAME|ID", "Print what the container wrote to standard output and error.", (), least=1, most=1),
        Command(
            "rm",
            "[OPTIONS] NAME|ID [NAME|ID...]",
            "Remove containers.",
            (Flag("--force", "-f", help="kill a running one first; a missing one is no error"),),
            least=1,
        ),
        Command(
            "ps",
            "[OPTIONS]",
            "List containers, newest first (running ones unless -a).",
            (
                Flag("--all", "-a", help="every container, not only running ones"),
                Flag("--quiet", "-q", help="only the Ids"),
                Flag("--no-trunc", help="whole Ids and commands"),
                FILTER,
                FORMAT,
            ),
            most=0,
        ),
        Command(
            "events",
            "[OPTIONS]",
            "Print the containers' lifecycle events in a window; without --until, follow them until Ctrl-C.",
            (
                Flag("--since", value=True, help="from this time (Unix seconds, RFC 3339, or a duration ago)"),
                Flag("--until", value=True, help="until this time"),
                FILTER,
                FORMAT,
            ),
            most=0,
        ),
    )
}


def main(argv: list[str] | None = None) -> int:
    """Run one command; its exit status (docker's)."""
    argv = sys.argv[1:] if argv is None else argv
    try:
        return _main(argv)
    except Failure as exc:
        _fail(exc)
        return exc.status
    except BadInput as exc:  # an unsafe state folder: one line
        sys.stderr.write(f"{PROG}: {exc}\n")
        return EXIT_ERROR
    except KeyboardInterrupt:
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        # The reader went away: nothing more to say, and nothing for Python to complain about at exit.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return EXIT_PIPE
    except (RuntimeError, OSError, ValueError) as exc:  # the runtime could not do it (a stuck shim, a full disk)
        sys.stderr.write(f"Error: {exc}\n")
        return EXIT_ERROR


def _fail(exc: Failure) -> None:
    text = str(exc)
    if exc.usage is not None:
        text = f"{PROG}: {text}\n\n{COMMANDS[exc.usage].line()}\n\nRun '{PROG} {exc.usage} --help' for more information"
    sys.stderr.write(text + "\n")


def _main(argv: list[str]) -> int:
    if not argv or argv[0] in ("-h", "--help", "help"):
        sys.stdout.write(_overview())
        return 0
    name, rest = argv[0], argv[1:]
    command = COMMANDS.get(name)
    if command is None:
        raise Failure(f"{PROG}: unknown command: {PROG} {name}\n\nRun '{PROG} --help' for more information")
    parsed = parse(command, rest)
    if parsed is None:
        return 0
    return HANDLERS[name](parsed)


def _overview() -> str:
    lines = [
        f"Usage:  {PROG} COMMAND",
        "",
        "The process runtime through the part of docker's command line a study uses.",
        "",
    ]
    lines += ["Commands:"] + [f"  {c.name:9} {c.summary.split('. ')[0].rstrip('.')}" for c in COMMANDS.values()]
    lines += [
        "",
        "Left out: runs in the foreground (run without -d), exec, start, stop, kill, logs -f, ps filters",
        "other than name, id, label, status and exited, Go templates beyond {{json .}} and {{.Field}}.",
        "",
        f"Run '{PROG} COMMAND --help' for more information on a command.",
        "",
    ]
    return "\n".join(lines)


def _runtime() -> ProcessRuntime:
    return ProcessRuntime()


def _out(text: str) -> None:
    sys.stdout.write(text)
    sys.stdout.flush()


def cmd_run(p: Parsed) -> int:
    if not p.one("--detach"):
        raise Failure(f"{PROG}: only detached runs: add -d, then '{PROG} wait NAME' and '{PROG} logs NAME'", EXIT_USAGE)
    name = p.one("--name")
    if not name:
        raise Failure(f"{PROG}: a run needs --name NAME: a study names every run's container", EXIT_USAGE)
    name = name.removeprefix("/")
    if not NAME_RE.fullmatch(name):
        raise Failure(
            f"{PROG}: Invalid container name ({name}), only [a-zA-Z0-9][a-zA-Z0-9_.-] are allowed", EXIT_USAGE
        )
    labels = dict(pairs(p.one("--label"), "--label"))
    env: dict[str, str] = {}
    for item in p.one("--env"):
        key, eq, value = item.partition("=")
        if not key:
            raise Failure(f"{PROG}: invalid environment variable: {item}", EXIT_USAGE)
        if eq:
            env[key] = value
        elif key in os.environ:
            env[key] = os.environ[key]  # KEY alone: its value here, as docker takes it from the caller
    image, command = p.args[0], p.args[1:]
    if not command:
        raise Failure(f"{PROG}: no command specified", EXIT_USAGE)
    rt = _runtime()
    try:
        state = rt.run(name, command, image=None if image == "-" else image, env=env, labels=labels)
    except ContainerConflict:
        other = rt.inspect(name)
        holder = f' by container "{other["Id"]}"' if other is not None else ""
        raise Failure(
            f'{PROG}: Conflict. The container name "/{name}" is already in use{holder}. '
            "You have to remove (or rename) that container to be able to reuse that name.",
            EXIT_USAGE,
        ) from None
    except RuntimeError as exc:
        # Created, but its command could not start: docker prints the Id, then the error, with 127 or 126.
        left = rt.inspect(name)
        if left is not None and left["State"]["Status"] == "created" and left["State"].get("Error"):
            _out(left["Id"] + "\n")
            code = int(left["State"]["ExitCode"])
            raise Failure(f"{PROG}: {left['State']['Error']}", code if code in (126, 127) else EXIT_USAGE) from None
        raise Failure(f"{PROG}: {exc}", EXIT_USAGE) from None
    _out(state["Id"] + "\n")
    return 0


def cmd_inspect(p: Parsed) -> int:
    rt = _runtime()
    template = Template(p.one("--format"), strict=True) if p.one("--format") else None
    found: list[Inspect] = []
    missing: list[str] = []
    for ref in p.args:
        state = find(rt, ref)
        if state is None:
            missing.append(ref)
        else:
            found.append(state)
    if template is None:
        _out(go_json(found, indent=4) + "\n")
    else:
        _out("".join(template.render(s, s) + "\n" for s in found))
    for ref in missing:
        sys.stderr.write(f"Error: No such object: {ref}\n")
    return EXIT_ERROR if missing else 0


def cmd_wait(p: Parsed) -> int:
    rt = _runtime()
    status = 0
    for ref in p.args:
        try:
            state = find(rt, ref)
            if state is None:
                raise NoSuchContainer(ref)
            code = rt.wait(name_of(state))
        except NoSuchContainer:
            _fail(_no_such_container(ref))
            status = EXIT_ERROR
            continue
        _out(f"{code}\n")
    return status


def cmd_logs(p: Parsed) -> int:
    rt = _runtime()
    ref = p.args[0]
    state = find(rt, ref)
    try:
        if state is None:
            raise NoSuchContainer(ref)
        out, err = rt.logs(name_of(state)), rt.logs(name_of(state), stderr=True)
    except NoSuchContainer:
        raise _no_such_container(ref) from None
    _out(out)
    sys.stderr.write(err)
    return 0


def cmd_rm(p: Parsed) -> int:
    rt = _runtime()
    force = bool(p.one("--force"))
    status = 0
    for ref in p.args:
        state = find(rt, ref)
        try:
            if state is None:
                raise NoSuchContainer(ref)
            rt.remove(name_of(state), force=force)
        except NoSuchContainer:
            _fail(_no_such_container(ref))
            if not force:  # docker 28: a forced remove of nothing is said, and is no error
                status = EXIT_ERROR
            continue
        except ContainerConflict:
            sys.stderr.write(
                f"Error: You cannot remove a running container {state['Id'] if state else ref}. "
                "Stop the container before attempting removal or force remove\n"
            )
            status = EXIT_ERROR
            continue
        _out(ref + "\n")
    return status


def cmd_ps(p: Parsed) -> int:
    filters = read_filters(p.one("--filter"))
    keep = ps_filter(filters)
    template = Template(p.one("--format")) if p.one("--format") else None
    trunc = not p.one("--no-trunc")
    rt = _runtime()
    now = time.time()
    every = p.one("--all") or "status" in filters  # as docker: a status filter looks at every container
    states = [s for s in rt.list("") if (every or s["State"]["Status"] == "running") and keep(s)]
    states.sort(key=lambda s: epoch(s["Created"]), reverse=True)
    rows = [ps_row(s, now, trunc) for s in states]
    if p.one("--quiet"):
        _out("".join(r["ID"] + "\n" for r in rows))
    elif template is not None:
        _out("".join(template.render(r, r) + "\n" for r in rows))
    else:
        _out(ps_table(rows))
    return 0


def cmd_events(p: Parsed) -> int:
    keep = event_filter(read_filters(p.one("--filter")))
    text = p.one("--format")
    template = Template(text) if text else None
    rt = _runtime()
    now = rt.now()
    since = read_time(p.one("--since"), now) if p.one("--since") is not None else None
    until = read_time(p.one("--until"), now) if p.one("--until") is not None else None
    if since is not None and until is not None and since > until:
        raise Failure(f"Error: `since` time ({p.one('--since')}) cannot be after `until` time ({p.one('--until')})")

    def show(event: Event) -> None:
        if keep(event):
            _out((template.render(event_fields(event), event) if template else event_line(event)) + "\n")

    if until is not None and until <= now:
        for event in rt.events(since or 0.0, until):
            show(event)
        return 0
    return EXIT_INTERRUPTED if _follow(rt, since, until, show) else 0


def _follow(rt: ProcessRuntime, since: float | None, until: float | None, show: Callable[[Event], None]) -> bool:
    """The window's past events, then new ones as they come, until ``until`` (None: until a signal).

    True when a signal (SIGINT, SIGTERM) ended it.

    The live tail starts first; the past is read once it is live, and an
    event both give (written while the tail began) is shown once.
    """
    stop = threading.Event()
    shown: set[tuple[Any, ...]] = set()
    live_from: list[float] = []
    lock = threading.Lock()
    failure: list[BaseException] = []

    def key(event: Event) -> tuple[Any, ...]:
        return (event.get("id"), event.get("Action"), event.get("timeNano"))

    def on_live(t: float) -> None:
        with lock:
            live_from.append(t)
            if since is not None:
                for event in rt.events(since, t):
                    shown.add(key(event))
                    show(event)

    def on_event(event: Event) -> None:
        try:
            with lock:
                if key(event) in shown:
                    return
                if until is not None and event.get("timeNano", 0) > until * 1e9:
                    stop.set()
                    return
                show(event)
        except BaseException as exc:  # noqa: BLE001 - a closed pipe ends the stream, and is raised from here
            failure.append(exc)
            stop.set()

    signalled: list[int] = []

    def interrupted(signum: int, _frame: object) -> None:
        signalled.append(signum)
        stop.set()

    timer = threading.Timer(max(0.0, until - rt.now()), stop.set) if until is not None else None
    old = {s: signal.signal(s, interrupted) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        if timer is not None:
            timer.daemon = True
            timer.start()
        rt.stream(on_event, stop, on_live=on_live)
    finally:
        if timer is not None:
            timer.cancel()
        for s, handler in old.items():
            signal.signal(s, handler)
    if failure:
        raise failure[0]
    return bool(signalled)


HANDLERS: dict[str, Callable[[Parsed], int]] = {
    "run": cmd_run,
    "inspect": cmd_inspect,
    "wait": cmd_wait,
    "logs": cmd_logs,
    "rm": cmd_rm,
    "ps": cmd_ps,
    "events": cmd_events,
}

if __name__ == "__main__":
    sys.exit(main())
