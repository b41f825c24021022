"""No text from an evidence folder, or from a study, reaches a terminal raw (contract §6.9's last point, §4's end).

Every string shown passes the one quoting function (``engine/io/quoting.py``).
The folders are studymon's own: the reference study run on the process
runtime and killed at its first diagnosis run's start, and a small campaign
(``studymon explore --headless --max-trials 2``).  Then every string of
every file carries a *marker*: ``MK<n>`` and a tail that would act on a
terminal if it reached one raw (SGR, an OSC 8 hyperlink ended by BEL, rich
markup ``[bold]``, a bidi override, NUL, a C1 CSI, a line separator), with
``n`` unique to the place, so that a leak names its file and field.  A
folder is marked all at once (values; keys), a file at a time (each its own
folder and its own commands, so a crash names the file), and a field at a
time (every occurrence of one field of one file, the folders judged
together): a wholly marked file breaks the judge early, and a single field
reaches the paths behind.

Every command that reads folders runs over them: ``studymon report``,
``report --json``, ``report CAMPAIGN``, ``attach --headless``, and the
console (``attach``) in a real terminal (tmux at 160x48) whose raw output
stream is recorded (``pipe-pane``).  Asserted of each: no raw control
character, bidi override, line separator or C1 from a marker (in a plain
output none at all; in the console's stream, none of the marker's own
sequences), no markup of a marker took effect (its ``[bold]`` is still
there, or the text was cut before it: ``http://x??`` would mean it was
read as a tag), JSON stays JSON, and each command exits with a documented
status (0, 1, 2 or 3) without a traceback.

A study is an adversary too: ``tests/doubles/marker_study.py`` writes
markers in its records (a stage, a halt's reason, a service error, a run id,
a kind, a key) and its log, run headless through a pipe, crashed, in a
terminal (the live block), in the console, and as a campaign in the
explorer's console, which shows its trials through the follower of a folder
(``engine/explore/follow.py``); the follower's own events, from a marked folder,
carry only quoted words.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from studymon.engine.events import ArmChanged, KillStep, StudyEvent, Verdicts
from studymon.engine.explore.follow import FolderFollower
from tests.studies import own_runtime_state, template
from tests.waits import until

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed"),
]

ROOT = Path(__file__).resolve().parent.parent
MARKER_STUDY = ROOT / "tests" / "doubles" / "marker_study.py"
TAIL = "\x1b[31m\x1b]8;;http://x\x07[bold]\u202e\x00\x9b\u2028"  # the marker study writes the same
STATUSES = (0, 1, 2, 3)  # README's exit statuses
KIND_KEYS = ("kind", "event", "label", "Action", "action", "Type")  # what names a JSONL line's sort, for its fields
NOT_JSON = ("study.log", "report.svg")
WIDTH, HEIGHT = 160, 48

# In a plain output (a pipe: rich writes no escape of its own), no character a terminal would act on: C0 but tab
# and newline, DEL, C1, the bidi marks, overrides and isolates, the line and paragraph separators, and bytes that
# were not UTF-8 (surrogate-escaped when read).
RAW = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069\u2028\u2029\udc80-\udcff]")
# In the console's stream, which is made of escape sequences: none of the marker's own.
RAW_IN_TERMINAL = re.compile(
    "[\x00\x80-\x9f\u202a-\u202e\u2066-\u2069\u2028\u2029\udc80-\udcff]|\x1b\\]8;;http://x|http://x\x07|MK\\d+\x1b"
)
# The marker's [bold] read as a tag: it is gone, and the characters quoted on either side of it meet.
MARKUP_TOOK = "http://x??"
QUOTED = "?[31m?]8;;http://x?[bold]"  # the marker as the quoting function shows it


# --- markers ---------------------------------------------------------------------------------------------


@dataclass
class Marks:
    """Markers handed out: ``MK<n>`` and the tail, ``n`` naming where the marker was put."""

    where: dict[int, str] = field(default_factory=dict)

    def new(self, place: str) -> str:
        n = len(self.where) + 1
        self.where[n] = place
        return f"MK{n}{TAIL}"

    def near(self, text: str, at: int) -> str:
        """The place of the last marker before ``at`` in ``text``: where a leak came from."""
        found = list(re.finditer(r"MK(\d+)", text[max(0, at - 400) : at]))
        if not found:
            return "no marker near it"
        n = int(found[-1].group(1))
        return self.where.get(n, f"MK{n}, a marker of the study's own")


Select = Callable[[str, str], bool]  # (file, field) -> whether it carries a marker


def _line_sort(value: Any) -> str:
    if isinstance(value, dict):
        for key in KIND_KEYS:
            if isinstance(value.get(key), str):
                return value[key]
    return ""


def _walk(value: Any, path: str, file: str, select: Select, keys: bool, marks: Marks) -> Any:
    """``value`` with a marker in each string (``keys``: each key) whose field ``select`` takes."""
    if isinstance(value, str):
        return marks.new(f"{file} {path}") if not keys and select(file, path) else value
    if isinstance(value, list):
        return [_walk(v, f"{path}[]", file, select, keys, marks) for v in value]
    if isinstance(value, dict):
        out = {}
        for k, v in value.items():
            here = f"{path}.{k}"
            name = marks.new(f"{file} {path} key {k}") if keys and select(file, here) else k
            out[name] = _walk(v, here, file, select, keys, marks)
        return out
    return value


def _lines(path: Path) -> list[Any]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def fields(folder: Path) -> list[tuple[str, str]]:
    """Every (file, field) of the folder that holds a string, in order: a JSONL line's field is named with
    the line's sort (``<runPlanned>.content.run``), so a field is one thing a reader reads."""
    found: dict[tuple[str, str], None] = {}

    def note(file: str, path: str, value: Any) -> None:
        if isinstance(value, str):
            found[(file, path)] = None
        elif isinstance(value, list):
            for v in value:
                note(file, f"{path}[]", v)
        elif isinstance(value, dict):
            for k, v in value.items():
                note(file, f"{path}.{k}", v)

    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        rel = path.relative_to(folder).as_posix()
        if path.suffix == ".json":
            note(rel, "", json.loads(path.read_text(encoding="utf-8")))
        elif path.suffix == ".jsonl":
            for line in _lines(path):
                note(rel, f"<{_line_sort(line)}>", line)
    return list(found)


def files(folder: Path) -> list[str]:
    return sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file())


def marked(src: Path, dst: Path, marks: Marks, select: Select, keys: bool = False) -> Path:
    """A copy of ``src`` at ``dst`` with a marker in each selected string (or key), and a marked line at the
    end of each selected file that is not JSON."""
    shutil.copytree(src, dst)
    for rel in files(dst):
        path = dst / rel
        if path.suffix == ".json":
            value = json.loads(path.read_text(encoding="utf-8"))
            path.write_text(json.dumps(_walk(value, "", rel, select, keys, marks), ensure_ascii=False))
        elif path.suffix == ".jsonl":
            said = [_walk(line, f"<{_line_sort(line)}>", rel, select, keys, marks) for line in _lines(path)]
            path.write_text("".join(json.dumps(line, ensure_ascii=False) + "\n" for line in said))
        elif not keys and select(rel, ""):
            with open(path, "a", encoding="utf-8") as fh:
                fh.write(marks.new(f"{rel} (a line)") + "\n")
    return dst


def every(_file: str, _field: str) -> bool:
    return True


def one_file(name: str) -> Select:
    return lambda file, _field: file == name


def one_field(name: str, path: str) -> Select:
    return lambda file, field: file == name and field == path


# --- commands and what they print -------------------------------------------------------------------------


@dataclass
class Said:
    """One command's end: its exit status and what it printed."""

    what: str
    status: int
    out: str
    err: str


def studymon(*args: str, cwd: Path, timeout: float = 600) -> Said:
    # Wide: a marker stays on one line (folding puts the table's border inside the text it checks).
    env = dict(os.environ, PYTHONPATH=str(ROOT), COLUMNS="400")
    done = subprocess.run(
        [sys.executable, "-m", "studymon.tui.cli", *args], cwd=cwd, env=env, capture_output=True, timeout=timeout,
        check=False,
    )
    # surrogateescape: a byte that is not UTF-8 is kept, as a character RAW finds.
    out, err = (b.decode("utf-8", "surrogateescape") for b in (done.stdout, done.stderr))
    return Said(" ".join(["studymon", *args])[:300], done.returncode, out, err)


def assert_clean(text: str, what: str, marks: Marks, pattern: re.Pattern[str] = RAW) -> None:
    """No character a terminal would act on from a marker, and no marker's markup taken as a tag."""
    bad = pattern.search(text)
    assert bad is None, (
        f"{what}: {bad.group(0)!r} reached the output raw, from {marks.near(text, bad.end())}: "
        f"{text[max(0, bad.start() - 200) : bad.end() + 50]!r}"
    )
    took = text.find(MARKUP_TOOK)
    assert took < 0, (
        f"{what}: a marker's [bold] was read as markup, from {marks.near(text, took)}: "
        f"{text[max(0, took - 200) : took + 50]!r}"
    )


def assert_said(said: Said, marks: Marks, statuses: tuple[int, ...] = STATUSES) -> None:
    """A documented exit status, no traceback, and both outputs clean."""
    assert said.status in statuses, f"{said.what}: exit {said.status}\n{said.out[-3000:]}\n{said.err[-3000:]}"
    for name, text in (("stdout", said.out), ("stderr", said.err)):
        assert "Traceback" not in text, f"{said.what}: a traceback on {name}\n{text[-5000:]}"
        assert_clean(text, f"{said.what} ({name})", marks)


def strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, list):
        for v in value:
            yield from strings(v)
    elif isinstance(value, dict):
        for k, v in value.items():
            yield k
            yield from strings(v)


def assert_report_json(said: Said, marks: Marks) -> list[Any]:
    """``report --json``: valid JSON, every marker in it escaped by the encoder (never a raw byte); and the
    judge's own words (each check's detail) quoted already, whatever the output does with them after."""
    assert_said(said, marks)
    reports = json.loads(said.out)
    assert isinstance(reports, list) and reports, said.out[:2000]
    assert_clean("\n".join(strings(reports)), f"{said.what} (its values, decoded)", marks)
    return reports


# --- a real terminal ---------------------------------------------------------------------------------------


class Terminal:
    """A tmux server of our own (``-L``) with one pane of WIDTH x HEIGHT; what the program writes to it is
    recorded, byte for byte, from its first byte."""

    def __init__(self, workdir: Path) -> None:
        self.socket = f"studymon-marker-{os.getpid()}-{uuid.uuid4().hex[:8]}"
        self.workdir = workdir
        self.raw = workdir / f"{self.socket}.raw"
        self.go = workdir / f"{self.socket}.go"
        self.env = dict(os.environ, LC_ALL="C.UTF-8", LANG="C.UTF-8")
        self.socket_path = ""

    def tmux(self, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            ["tmux", "-L", self.socket, "-f", "/dev/null", *args],  # noqa: S607 - the tmux on PATH
            env=self.env, capture_output=True, text=True, check=check, timeout=30,
        )

    def start(self, command: str) -> None:
        # The command waits for the recording to be set up, so that its first byte is recorded too.
        wait = f"while [ ! -e {shlex.quote(str(self.go))} ]; do sleep 0.05; done"
        self.tmux("new-session", "-d", "-s", "m", "-x", str(WIDTH), "-y", str(HEIGHT), "-c", str(self.workdir),
                  "bash", "--norc", "--noprofile", "-c", f"{wait}; {command}; echo EXIT=$?")
        self.tmux("set-option", "-t", "m", "remain-on-exit", "on")
        self.tmux("set-option", "-t", "m", "history-limit", "20000")
        self.tmux("pipe-pane", "-t", "m", "-o", f"cat >> {shlex.quote(str(self.raw))}")
        self.socket_path = self.tmux("display-message", "-p", "#{socket_path}").stdout.strip()
        self.go.touch()

    def screen(self) -> str:
        return self.tmux("capture-pane", "-p", "-t", "m").stdout

    def everything(self) -> str:
        return self.tmux("capture-pane", "-p", "-J", "-S", "-", "-t", "m").stdout

    def keys(self, *keys: str) -> None:
        self.tmux("send-keys", "-t", "m", *keys)

    def wait_for(self, what: str, predicate: Callable[[str], bool], timeout: float, *, history: bool = False) -> str:
        last = [""]

        def look() -> str | None:
            last[0] = self.everything() if history else self.screen()
            return last[0] if predicate(last[0]) else None

        return until(look, timeout, what, step=0.1, seen=lambda: last[0])

    def exit_status(self, timeout: float = 120) -> int:
        text = self.wait_for("the command's EXIT line", lambda s: "EXIT=" in s, timeout, history=True)
        return int(re.findall(r"EXIT=(\d+)", text)[-1])

    def stream(self) -> str:
        return self.raw.read_bytes().decode("utf-8", "surrogateescape")

    def kill(self) -> None:
        self.tmux("kill-server", check=False)
        if self.socket_path:
            Path(self.socket_path).unlink(missing_ok=True)


@pytest.fixture
def terminal(tmp_path: Path) -> Iterator[Terminal]:
    term = Terminal(tmp_path)
    try:
        yield term
    finally:
        term.kill()


def exports() -> str:
    """The environment a command in the terminal needs: this checkout, and the test's runtime state."""
    names = ("STUDYMON_PROCESS_RUNTIME", "STUDYMON_LOCK_DIR")
    env = {"PYTHONPATH": str(ROOT), **{n: os.environ[n] for n in names if n in os.environ}}
    return " ".join(f"{k}={shlex.quote(v)}" for k, v in env.items())


def cli(*args: str) -> str:
    return f"{exports()} {shlex.quote(sys.executable)} -m studymon.tui.cli " + " ".join(shlex.quote(a) for a in args)


def close_record(term: Terminal) -> None:
    """Close the record opened whole, and wait until it is: a key right after Escape would be read with it
    as one (Alt+key)."""
    term.keys("Escape")
    term.wait_for("the record closed", lambda s: '"content"' not in s, 30)


def assert_terminal_clean(term: Terminal, screens: list[str], what: str, marks: Marks) -> None:
    """The stream the program wrote has none of a marker's sequences; the screens it drew (and the text left
    in the terminal) none of a marker's characters, and no marker's markup taken."""
    assert_clean(term.stream(), f"{what} (its stream)", marks, RAW_IN_TERMINAL)
    for screen in [*screens, term.everything()]:
        assert "Traceback" not in screen, f"{what}: a traceback\n{screen}"
        assert_clean(screen, f"{what} (its screen)", marks)


# --- the folders ---------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def base(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("marker")


@pytest.fixture(scope="module")
def reference(base: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The reference study's folder, killed at its first diagnosis run's start and resumed to its end."""
    out = base / "ref"
    with own_runtime_state(tmp_path_factory):
        t = template(base, "ref.json", backend="process")
        said = studymon("run", "--headless", "--template", str(t), "--kill", "s:after:runStarted/diagnosis",
                        f"s={out}", cwd=base)
    assert said.status in (0, 1, 3), said.out + said.err
    for rel in ("kills/1/kill.json", "kills/1/ledger-at-kill.json", "arms.jsonl", "report.json"):
        assert (out / rel).is_file(), f"the kill left no {rel}: {said.out}"
    return out


@pytest.fixture(scope="module")
def campaign(base: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A small campaign of the reference study: its trace, two trials, the journal and campaign.json."""
    folder = base / "camp"
    with own_runtime_state(tmp_path_factory):
        t = template(base, "camp.json", backend="process")
        said = studymon("explore", "--headless", "--max-trials", "2", "--workers", "1", "--template", str(t),
                        f"s={folder}", cwd=base)
    assert said.status in (0, 1, 3), said.out + said.err
    for rel in ("trials.jsonl", "campaign.json", "trials/1/research.json"):
        assert (folder / rel).is_file(), f"the campaign left no {rel}: {said.out}"
    return folder


# --- the tests ----------------------------------------------------------------------------------------------


def test_report_shows_no_marker_raw_wherever_in_the_folder_it_is(reference: Path, tmp_path: Path) -> None:
    """studymon report and report --json over the folder marked all at once, a file at a time, a field at a time."""
    marks = Marks()
    # All at once: every value; every key.
    whole = marked(reference, tmp_path / "all", marks, every), marked(reference, tmp_path / "keys", marks, every, True)
    for out in whole:
        assert_said(studymon("report", str(out), cwd=tmp_path), marks)
        assert_report_json(studymon("report", "--json", str(out), cwd=tmp_path), marks)
    # A file at a time, its values then its keys: each its own commands, so that a crash names the file.
    shown = 0
    for n, rel in enumerate(files(reference)):
        for keys in (False, True):
            if keys and rel.endswith(NOT_JSON):
                continue
            out = marked(reference, tmp_path / f"file-{n}-{'keys' if keys else 'values'}", marks, one_file(rel), keys)
            said = studymon("report", str(out), cwd=tmp_path)
            assert_said(said, marks)
            shown += said.out.count(QUOTED)
            assert_report_json(studymon("report", "--json", str(out), cwd=tmp_path), marks)
    # A field at a time (each of its occurrences), the folders judged in one command: the judge reads the rest
    # of each folder as it was, and so reaches what a wholly marked file cuts short.
    singles = [
        marked(reference, tmp_path / f"field-{n}", marks, one_field(rel, path))
        for n, (rel, path) in enumerate(fields(reference))
    ]
    assert len(singles) > 100, "the folder has the reference study's fields"
    said = studymon("report", *map(str, singles), cwd=tmp_path)
    assert_said(said, marks)
    shown += said.out.count(QUOTED)
    reports = assert_report_json(studymon("report", "--json", *map(str, singles), cwd=tmp_path), marks)
    assert len(reports) == len(singles)
    # Not vacuous: the report quotes some markers (a kill's point, an id it names), and shows each quoted.
    assert shown > 0, "no marker was shown at all: the test would pass whatever the quoting did"
    # What the console writes of what went wrong, said again by the judge: a capture's error in kill.json and
    # a missed point's detail in arms.jsonl (the reference run had neither: null, no missed line).
    out = captured(reference, tmp_path / "captured", marks)
    said = studymon("report", str(out), cwd=tmp_path)
    assert_said(said, marks)
    assert "capture failed" in said.out and said.out.count(QUOTED) >= 2, said.out
    assert_report_json(studymon("report", "--json", str(out), cwd=tmp_path), marks)


def captured(src: Path, dst: Path, marks: Marks) -> Path:
    """A copy of ``src`` whose kill 1 says a capture failed, and whose arms.jsonl says a second point was armed
    and missed, each with a marker for what was said."""
    shutil.copytree(src, dst)
    kill = dst / "kills" / "1" / "kill.json"
    body = json.loads(kill.read_text(encoding="utf-8"))
    body["captureError"] = marks.new("kills/1/kill.json .captureError")
    kill.write_text(json.dumps(body, ensure_ascii=False))
    at = json.loads((dst / "arms.jsonl").read_text(encoding="utf-8").splitlines()[-1])["at"]
    missed = [
        {"event": "arm", "at": at, "point": "after:halt"},
        {"event": "missed", "at": at, "point": "after:halt", "run": None,
         "detail": marks.new("arms.jsonl <missed>.detail"), "fromSeq": body["beforeKillSeq"]},
    ]
    with open(dst / "arms.jsonl", "a", encoding="utf-8") as fh:
        fh.writelines(json.dumps(line, ensure_ascii=False) + "\n" for line in missed)
    return dst


def test_attach_headless_shows_no_marker_raw(reference: Path, tmp_path: Path) -> None:
    """studymon attach --headless over the folder, its controller gone: it reads the folder whole, then judges."""
    marks = Marks()
    shown = 0
    for n, rel in enumerate(files(reference)):
        if rel in ("outcome.json", "report.json", "report.svg"):
            continue  # attach refuses a finished folder: these go
        out = marked(reference, tmp_path / f"file-{n}", marks, one_file(rel))
        for name in ("outcome.json", "report.json"):
            (out / name).unlink()
        said = studymon("attach", "--headless", str(out), cwd=tmp_path, timeout=120)
        # research.json marked names no study: refused (2), its message quoted.
        assert_said(said, marks, (2,) if rel == "research.json" else (0, 1, 3))
        shown += (said.out + said.err).count(QUOTED)
    # Not vacuous whatever the reference run left: a capture's error and a missed point's detail, each a marker,
    # are said by the judge attach runs (a marked file alone may show none: the run's kill fired, no error).
    out = captured(reference, tmp_path / "captured", marks)
    for name in ("outcome.json", "report.json"):
        (out / name).unlink()
    said = studymon("attach", "--headless", str(out), cwd=tmp_path, timeout=120)
    assert_said(said, marks, (0, 1, 3))
    shown += (said.out + said.err).count(QUOTED)
    assert shown > 0, "no marker was shown at all"


def test_the_console_over_a_marked_folder_sends_no_marker_to_the_terminal(
    reference: Path, tmp_path: Path, terminal: Terminal
) -> None:
    """studymon attach in a terminal: the ledger stream, the verdict pane, a record opened whole, the table."""
    marks = Marks()
    # research.json and launches.jsonl as they were: attach reads from them which study this is and that its
    # controller has ended (with them marked it refuses, or waits for a controller it cannot tell is gone).
    kept = ("research.json", "launches.jsonl")
    out = marked(reference, tmp_path / "all", marks, lambda file, _f: file not in kept)
    for name in ("outcome.json", "report.json"):
        (out / name).unlink()
    terminal.start(cli("attach", str(out)))
    ended = terminal.wait_for("the study's end and its verdict", lambda s: "verdict" in s and "finished" in s, 120)
    assert QUOTED in ended, f"the ledger stream shows the marked records, quoted\n{ended}"
    terminal.keys("Up")  # the cursor on the last record but one
    terminal.keys("Enter")  # and that record, whole
    record = terminal.wait_for("a record opened whole", lambda s: '"content"' in s, 30)
    assert "\\u001b[31m" in record, f"the record's JSON escapes what is not printable\n{record}"
    close_record(terminal)
    terminal.keys("q")
    assert terminal.exit_status() in (0, 1, 3)
    assert_terminal_clean(terminal, [ended, record], "studymon attach", marks)


def test_report_campaign_shows_no_marker_raw(campaign: Path, tmp_path: Path) -> None:
    """studymon report CAMPAIGN over the journal and campaign.json marked (values, keys, a field at a time), and
    over the whole campaign marked, its trace and trial folders too."""
    marks = Marks()
    journal = ("trials.jsonl", "campaign.json")
    outs = [
        marked(campaign, tmp_path / "journal", marks, lambda file, _f: file in journal),
        marked(campaign, tmp_path / "journal-keys", marks, lambda file, _f: file in journal, True),
        marked(campaign, tmp_path / "all", marks, every),
        *(marked(campaign, tmp_path / f"trial-{rel}", marks, one_file(f"trials/1/{rel}"))
          for rel in ("research.json", "arms.jsonl", "report.json", "study/ledger.jsonl")),
    ]
    singles = [
        marked(campaign, tmp_path / f"field-{n}", marks, one_field(rel, path))
        for n, (rel, path) in enumerate(f for f in fields(campaign) if f[0] in journal)
    ]
    assert singles, "the journal has fields"
    for out in outs:
        said = studymon("report", str(out), cwd=tmp_path)
        assert_said(said, marks)
        assert "journalWellFormed" in said.out, f"judged as a campaign\n{said.out}"
    said = studymon("report", *map(str, singles), cwd=tmp_path)
    assert_said(said, marks)
    # The campaign's checks name what is wrong without quoting the journal; a trial's class in the matrix
    # would be quoted.  Either way, nothing raw.
    assert said.out.count("journalWellFormed") >= 1, said.out


def _marker_template(folder: Path, name: str, **extra: Any) -> Path:
    path = folder / name
    path.write_text(json.dumps({"command": [sys.executable, str(MARKER_STUDY)], "backend": "process", **extra}))
    return path


def test_a_study_writing_markers_shows_none_raw_headless(tmp_path: Path) -> None:
    """A study's own records and log carry markers: the headless run (a pipe), its crash, and report."""
    marks = Marks()  # the study numbers its markers itself (MK9000 and up)
    t = _marker_template(tmp_path, "m.json")
    out = tmp_path / "m"
    said = studymon("run", "--headless", "--template", str(t), "--kill", "s:after:runPlanned", f"s={out}", cwd=tmp_path)
    assert_said(said, marks, (0, 1, 3))
    assert (out / "kills" / "1" / "ledger-at-kill.json").is_file(), said.out
    ledger = (out / "study" / "ledger.jsonl").read_text(encoding="utf-8")
    assert "MK9012" in ledger and "MK9018" in ledger, "the study wrote its markers, the halt's after the resume"
    assert_said(studymon("report", str(out), cwd=tmp_path), marks)
    assert_report_json(studymon("report", "--json", str(out), cwd=tmp_path), marks)
    # A crash: the console says why, from the last line of the study's log.
    crash = tmp_path / "c"
    t = _marker_template(tmp_path, "c.json", fault="crash")
    said = studymon("run", "--headless", "--template", str(t), f"c={crash}", cwd=tmp_path)
    assert_said(said, marks, (1, 3))  # 1: its records break the contract
    assert f"MK9017{QUOTED}" in said.out, f"the crash's log line is quoted in the table\n{said.out}"


def test_a_study_writing_markers_shows_none_raw_in_a_terminal(tmp_path: Path) -> None:
    """The same study in a terminal: headless (its live block) and in the console, a record opened whole."""
    marks = Marks()
    t = _marker_template(tmp_path, "m.json")
    live = Terminal(tmp_path)
    try:
        live.start(cli("run", "--headless", "--template", str(t), "--kill", "s:after:runPlanned", f"s={tmp_path}/h"))
        assert live.exit_status() in (0, 1, 3)
        text = live.everything()
        assert "round" in text and "ledger" in text, f"the live block was drawn\n{text}"
        assert_terminal_clean(live, [], "studymon run --headless in a terminal", marks)
    finally:
        live.kill()
    console = Terminal(tmp_path)
    try:
        console.start(cli("run", "--template", str(t), "--kill", "s:after:runPlanned", f"s={tmp_path / 'c'}"))
        ended = console.wait_for("the study's end and its verdict", lambda s: "verdict" in s and "finished" in s, 120)
        assert QUOTED in ended, f"the ledger stream shows the study's markers, quoted\n{ended}"
        console.keys("Up")
        console.keys("Enter")
        record = console.wait_for("a record opened whole", lambda s: '"content"' in s, 30)
        close_record(console)
        console.keys("q")
        assert console.exit_status() in (0, 1, 3)
        assert_terminal_clean(console, [ended, record], "studymon run in the console", marks)
    finally:
        console.kill()


def _follower_words(event: StudyEvent) -> list[str]:
    """The words an event of the follower's own making carries (records travel whole, quoted where shown)."""
    if isinstance(event, KillStep):
        return [event.step, event.detail, event.point or ""]
    if isinstance(event, ArmChanged):
        return [event.point or "", *event.waiting]
    if isinstance(event, Verdicts):
        return [text for c in event.checks for text in (c.name, c.scope, c.detail)]
    return []


def _followed(out: Path) -> list[StudyEvent]:
    """Every event the follower tells of ``out``, until it has read report.json."""
    follower = FolderFollower("s", out)
    events: list[StudyEvent] = []
    try:
        until(lambda: events.extend(follower.poll()) or follower.ended, 30, "the follower to read report.json",
              seen=lambda: events[-3:])
    finally:
        follower.close()
    return events


def test_the_follower_tells_a_marked_folder_in_quoted_words(reference: Path, tmp_path: Path) -> None:
    """engine/explore/follow.py turns a folder's text into events (a missed point's detail, a kill's trigger and point,
    report.json's checks): quoted, whatever the folder says."""
    marks = Marks()
    for keys in (False, True):
        out = marked(reference, tmp_path / f"all-{keys}", marks, lambda file, _f: file != "launches.jsonl", keys)
        events = _followed(out)
        words = [w for e in events for w in _follower_words(e)]
        assert any(isinstance(e, KillStep) for e in events) and any(isinstance(e, Verdicts) for e in events)
        assert_clean("\n".join(words), f"the follower's events (keys marked: {keys})", marks)
        if not keys:
            assert any(QUOTED in w for w in words), f"a marked check or point is told, quoted: {words}"


def test_a_campaign_of_a_study_writing_markers_in_the_explorer_console(tmp_path: Path, terminal: Terminal) -> None:
    """studymon explore in a terminal: the overview's rows and a trial's pane, read by the follower of its folder."""
    marks = Marks()
    t = _marker_template(tmp_path, "m.json")
    terminal.start(cli("explore", "--max-trials", "2", "--workers", "1", "--template", str(t), f"s={tmp_path}/camp"))
    ended = terminal.wait_for("the campaign's end", lambda s: "ended · exit" in s and "first failing" in s, 300)
    assert re.search(r"MK9\d+\?\[3", ended), f"the rows show the study's stage, quoted and cut\n{ended}"
    terminal.keys("Enter")  # the selected row's pane: its ledger, verdict and lanes, as the follower read them
    pane = terminal.wait_for("a trial's pane", lambda s: "verdict" in s and "records" in s, 30)
    assert QUOTED in pane, f"the pane's ledger shows the study's markers, quoted\n{pane}"
    terminal.keys("q")
    assert terminal.exit_status() in (0, 1, 3)
    assert_terminal_clean(terminal, [ended, pane], "studymon explore", marks)
