"""End to end in a real terminal: ``studymon demo`` in tmux at 160x48, driven by keys as a person would.

The console is started in a tmux session on a private server (its own
``-L`` socket, so no other tmux session is touched), the screen is read with
``capture-pane``, and keys are sent with ``send-keys``.  The test waits for
the three panes, focuses ``alpha`` with ``1``, asks for *Kill now* with ``k``,
leaves the dialog with Escape, asks again, waits until alpha's ledger shows a
run that has just started (so that the kill has a target), confirms with a
second ``k``, sees the pane say ``killed``, resumes with ``r``, and waits for
the end: the console stays on the verdicts, and still answers keys, until
``q``.  Once the app has left the screen, the check table and its summary
line are read from the terminal, and the shell's ``EXIT=$?`` line gives the
exit status; the number of checks is the judge's, read again from the
evidence.

Every wait has a deadline and, when it runs out, the failure shows the last
screen.  The tmux server is killed on the way out, pass or fail.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import time
import uuid
from collections.abc import Callable
from datetime import datetime
from pathlib import Path

import pytest

from studymon.engine.judge import judge
from tests.waits import until

ROOT = Path(__file__).resolve().parent.parent
WIDTH, HEIGHT = 160, 48
STUDIES = ("alpha", "beta", "gamma")
# A demo run lasts diagnosisSeconds (3 s, refstudy/research.json): a run started at most this long
# ago leaves the kill two seconds to land, for one key's way through tmux and the console.
FRESH = 1.0

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed"),
]


class Tmux:
    """One tmux server of our own (``-L``), one session, one pane."""

    def __init__(self, workdir: Path) -> None:
        self.socket = f"studymon-e2e-{os.getpid()}-{uuid.uuid4().hex[:8]}"
        self.session = "e2e"
        self.workdir = workdir
        self.socket_path = ""
        # A UTF-8 locale, or tmux draws the table's box characters and ✓ as '_'.
        self.env = dict(os.environ, LC_ALL="C.UTF-8", LANG="C.UTF-8")

    def tmux(self, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        # -f /dev/null: the user's tmux.conf (status line, key tables) must not change what we read.
        return subprocess.run(
            ["tmux", "-L", self.socket, "-f", "/dev/null", *args],  # noqa: S607 - the tmux on PATH, as a person runs it
            env=self.env, capture_output=True, text=True, check=check, timeout=30,
        )

    def start(self, command: str) -> None:
        """Run ``command`` in a shell in a new detached session of exactly WIDTH x HEIGHT."""
        self.tmux("new-session", "-d", "-s", self.session, "-x", str(WIDTH), "-y", str(HEIGHT),
                  "-c", str(self.workdir), "bash", "--norc", "--noprofile", "-c", command)
        # Keep the pane (and its text) once the command has ended, to read the table and EXIT line.
        self.tmux("set-option", "-t", self.session, "remain-on-exit", "on")
        self.tmux("set-option", "-t", self.session, "history-limit", "5000")
        self.socket_path = self.tmux("display-message", "-p", "#{socket_path}").stdout.strip()

    def screen(self) -> str:
        """The visible screen."""
        return self.tmux("capture-pane", "-p", "-t", self.session).stdout

    def everything(self) -> str:
        """The scrollback and the screen (what the shell printed after the app left)."""
        return self.tmux("capture-pane", "-p", "-J", "-S", "-", "-t", self.session).stdout

    def keys(self, *keys: str) -> None:
        self.tmux("send-keys", "-t", self.session, *keys)

    def pane_dead(self) -> bool:
        out = self.tmux("display-message", "-p", "-t", self.session, "#{pane_dead}", check=False).stdout
        return out.strip() == "1"

    def size(self) -> tuple[int, int]:
        w, h = self.tmux("display-message", "-p", "-t", self.session, "#{pane_width} #{pane_height}").stdout.split()
        return int(w), int(h)

    def kill(self) -> None:
        self.tmux("kill-server", check=False)
        if self.socket_path:
            # tmux leaves the socket file behind after kill-server.
            with contextlib.suppress(OSError):
                os.unlink(self.socket_path)

    def wait_for(self, what: str, predicate: Callable[[str], bool], timeout: float, *, history: bool = False) -> str:
        """Read the screen until ``predicate(screen)``; the screen that satisfied it (a failure shows the last)."""
        last = [""]

        def look() -> str | None:
            last[0] = self.everything() if history else self.screen()
            return last[0] if predicate(last[0]) else None

        # Nothing tells us the screen changed: tmux is asked again every 0.1 s.
        return until(look, timeout, what, step=0.1, seen=lambda: last[0])


def in_flight(ledger: Path) -> dict[str, float]:
    """The runs with a ``runStarted`` and no ``runResult`` in ``ledger``, each with its start's epoch."""
    started: dict[str, float] = {}
    try:
        data = ledger.read_bytes()
    except FileNotFoundError:
        return started
    for raw in data.splitlines(keepends=True):
        if not raw.endswith(b"\n"):
            break  # a line being written: it is read at the next look
        record = json.loads(raw)
        run = record["content"].get("run")
        if record["kind"] == "runStarted":
            started[run] = datetime.fromisoformat(record["at"]).timestamp()
        elif record["kind"] == "runResult":
            started.pop(run, None)
    return started


def a_fresh_run(ledger: Path) -> tuple[str, float] | None:
    """A run in flight in ``ledger`` that started at most FRESH seconds ago, and its age."""
    now = time.time()
    fresh = [(run, now - at) for run, at in in_flight(ledger).items() if now - at <= FRESH]
    return min(fresh, key=lambda pair: pair[1]) if fresh else None


def header_line(screen: str) -> str:
    """The first header row of the panes: the one that names every study (ids, state badges)."""
    for line in screen.splitlines():
        if all(s in line for s in STUDIES):
            return line
    return ""


def pane_column(screen: str, study: str) -> str:
    """The text of one pane's column (panes sit side by side), found from its header's position."""
    line = header_line(screen)
    starts = [line.find(f" {s} ") for s in STUDIES]
    if min(starts) < 0:
        return ""
    i = STUDIES.index(study)
    lo = starts[i]
    hi = starts[i + 1] if i + 1 < len(STUDIES) else None
    return "\n".join(row[lo:hi] for row in screen.splitlines())


def state_of(screen: str, study: str) -> str | None:
    """The state badge right after the study id in its header (``running``, ``killed``, ...)."""
    m = re.search(rf"\b{re.escape(study)}\s+(starting|running|killed|resuming|stopping|stopped|finished [✓✗]"
                  r"|service error|crashed|detached|error)\b", header_line(screen))
    return m.group(1) if m else None


def run_demo_by_keys(tmp_path: Path, backend: str) -> None:
    out = tmp_path / "demo"
    env = {
        "PYTHONPATH": str(ROOT),
        "STUDYMON_PROCESS_RUNTIME": os.environ["STUDYMON_PROCESS_RUNTIME"],  # the conftest's per-test folder
    }
    exports = " ".join(f"{k}={shlex.quote(v)}" for k, v in env.items())
    # stderr is not redirected: Textual draws the screen there.
    command = (f"{exports} {shlex.quote(sys.executable)} -m studymon.tui.cli demo --backend {backend} "
               f"--out {shlex.quote(str(out))}; echo EXIT=$?")
    term = Tmux(tmp_path)
    try:
        term.start(command)
        assert term.size() == (WIDTH, HEIGHT)

        # The three panes, side by side, each with its id and a running study; the buttons and the
        # footer's keys (the footer is drawn once the focus is set, and may come a frame after the panes).
        screen = term.wait_for(
            "the three panes, running, and the footer",
            lambda s: all(state_of(s, study) in ("running", "resuming") for study in STUDIES) and "^p palette" in s,
            timeout=60,
        )
        assert "Kill now" in screen and "k Kill now" in screen, screen

        # alpha: focus with 1, Kill now with k; the dialog opens on Cancel, and Escape keeps it.
        term.keys("1")
        term.keys("k")
        term.wait_for("the kill confirmation", lambda s: "Kill alpha now?" in s, timeout=10)
        term.keys("Escape")
        term.wait_for("the confirmation closed", lambda s: "Kill alpha now?" not in s, timeout=10)
        assert state_of(term.screen(), "alpha") in ("running", "resuming")
        # k, k: the second k confirms, once a run of alpha has just started: the kill then has a target.
        term.keys("k")
        term.wait_for("the kill confirmation", lambda s: "Kill alpha now?" in s, timeout=10)
        ledger = out / "alpha" / "study" / "ledger.jsonl"
        run, age = until(lambda: a_fresh_run(ledger), 30, f"a run of alpha started less than {FRESH:g} s ago",
                         step=0.02, seen=lambda: in_flight(ledger))
        term.keys("k")
        screen = term.wait_for("alpha killed, its evidence captured",
                               lambda s: state_of(s, "alpha") == "killed" and "captured" in pane_column(s, "alpha"),
                               timeout=30)
        assert "kill 1" in pane_column(screen, "alpha"), pane_column(screen, "alpha")

        # Resume with r (alpha still has the focus).
        term.keys("r")
        term.wait_for("alpha resumed", lambda s: "resumed" in pane_column(s, "alpha")
                      or state_of(s, "alpha") in ("resuming", "running", "finished ✓"), timeout=30)

        # Every study ends: the console stays, with the overall result on top and a verdict per pane.
        term.wait_for("the verdicts", lambda s: "every check holds · exit 0" in s
                      and all("verdict ✓" in pane_column(s, study) for study in STUDIES), timeout=90)
        # The console stays: whether it leaves or shows the verdicts is chosen once, when every study
        # has ended, and the verdicts are drawn only when it stays.  That it still answers keys after
        # that choice is shown by the help opening and closing on ?, Escape.
        term.keys("?")
        term.wait_for("the help, after the end", lambda s: "Each pane is one study" in s, timeout=10)
        term.keys("Escape")
        screen = term.wait_for("the help closed, the verdicts again", lambda s: "Each pane is one study" not in s
                               and "every check holds · exit 0" in s, timeout=10)
        assert not term.pane_dead() and "studymon checks" not in screen, "the console closed by itself"
        # q closes it: the app leaves, the shell prints the table, then EXIT=.
        term.keys("q")
        text = term.wait_for("the exit status line", lambda s: re.search(r"^EXIT=\d+", s, re.MULTILINE) is not None,
                             timeout=90, history=True)
    finally:
        term.kill()

    status = int(re.search(r"^EXIT=(\d+)", text, re.MULTILINE).group(1))
    assert status == 0, text
    # The check table, drawn by rich in the terminal: a row per check, alpha with its manual kill.
    assert "studymon checks" in text, text
    for study in STUDIES:
        assert re.search(rf"│{study}\s*│", text), f"no rows for {study}\n{text}"
    for check in ("ledgerWellFormed", "haltedAtExport", "chargedEqualsStarts", "exitedCleanly", "killTriggered"):
        assert check in text, f"{check} missing\n{text}"
    assert "✗" not in text.split("studymon checks", 1)[1], text
    m = re.search(r"^✓ all (\d+) checks hold$", text, re.MULTILINE)
    assert m, f"no summary line\n{text}"
    # The count is the judge's, read again from the evidence, and a ✓ row of the table each.
    judged = {study: judge(out / study).checks for study in STUDIES}
    assert all(c.ok is True for checks in judged.values() for c in checks), judged
    total = sum(len(checks) for checks in judged.values())
    table = text.split("studymon checks", 1)[1].split(m.group(0), 1)[0]
    assert int(m.group(1)) == total == len(re.findall(r"│ ✓ │", table)), (total, text)
    # The evidence agrees with what the terminal said: alpha was killed by hand, once, with a run in flight.
    kill = json.loads((out / "alpha" / "kills" / "1" / "kill.json").read_text())
    assert kill["trigger"] == "manual", kill
    assert [t["run"] for t in kill["targets"]] == [run], (
        f"the kill key was pressed {age:.2f} s after {run}'s runStarted, yet alpha's kill has the targets "
        f"{kill['targets']}: the run did not stay in flight until the kill\n{kill}"
    )
    # Each kill (alpha's by hand, beta's armed) and each of its targets: their checks are ✓ rows of the
    # study's part of the table, and the judge's.
    parts = dict(zip(STUDIES, re.split(r"^│(?:alpha|beta|gamma)\s*│", table, flags=re.MULTILINE)[1:], strict=True))
    for study in ("alpha", "beta"):
        targets = json.loads((out / study / "kills" / "1" / "kill.json").read_text())["targets"]
        assert targets, f"{study}'s kill had no run in flight"
        checks = [("kill 1", "killDelivered"), ("kill 1", "killEvidence")]
        checks += [(f"kill 1 · {t['run']}", check) for t in targets
                   for check in ("sameContainerNoRerun", "chargedOnce", "resultSettledAndFinished")]
        for scope, check in checks:
            row = rf"│ {re.escape(scope)}\s*│ {check}\s*│ ✓"
            assert re.search(row, parts[study]), (study, scope, check, parts[study])
            assert any(c.name == check and c.scope == scope for c in judged[study]), (study, scope, check)
    assert not (out / "alpha" / "kills" / "2").exists()
    assert (out / "beta" / "kills" / "1" / "kill.json").is_file()
    assert (out / "gamma" / "report.json").is_file() and not (out / "gamma" / "kills").exists()


def test_demo_in_tmux_kill_and_resume_by_keys_process_runtime(tmp_path: Path) -> None:
    run_demo_by_keys(tmp_path, "process")


@pytest.mark.docker
@pytest.mark.usefixtures("docker_engine")
def test_demo_in_tmux_kill_and_resume_by_keys_docker(tmp_path: Path) -> None:
    run_demo_by_keys(tmp_path, "docker")
