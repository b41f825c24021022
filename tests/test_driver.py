"""The console's terminal driver in a real terminal: its input thread sleeps while idle, yet keys, a lone
Escape and the app's closing are all as prompt as with Textual's own driver.

``tests/doubles/keys_app.py`` runs on :class:`QuietLinuxDriver` in tmux and
writes down each key with its time and the native id of the input thread;
the thread's voluntary context switches (``/proc``) count its wake-ups.
Textual's own driver wakes ten times a second (30 in the 3 s measured).
"""

from __future__ import annotations

import json
import re
import shlex
import shutil
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from studymon.tui.app import StudymonApp
from studymon.tui.driver import IDLE_WAIT, KEY_SETTLE, QuietLinuxDriver
from tests.test_e2e_tmux import Tmux

ROOT = Path(__file__).resolve().parent.parent
KEYS_APP = ROOT / "tests" / "doubles" / "keys_app.py"
EXIT_AFTER = KEY_SETTLE + 2.0  # the app closes by itself once its input thread is back on its long wait


def test_the_console_runs_on_the_quiet_driver() -> None:
    assert StudymonApp([], start_engine=False).get_driver_class() is QuietLinuxDriver


def lines(log: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []


def wait_line(log: Path, predicate: Any, timeout: float, what: str) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for line in lines(log):
            if predicate(line):
                return line
        time.sleep(0.02)
    pytest.fail(f"timed out after {timeout} s waiting for {what}; log: {lines(log)}")


def wake_ups(tid: int) -> int:
    status = Path(f"/proc/{tid}/status").read_text()
    m = re.search(r"^voluntary_ctxt_switches:\s+(\d+)", status, re.M)
    assert m, status
    return int(m.group(1))


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")
def test_idle_input_thread_sleeps_and_keys_escape_and_closing_stay_prompt(tmp_path: Path) -> None:
    log = tmp_path / "keys.jsonl"
    term = Tmux(tmp_path)
    command = (f"PYTHONPATH={shlex.quote(str(ROOT))} {shlex.quote(sys.executable)} {shlex.quote(str(KEYS_APP))} "
               f"{shlex.quote(str(log))} {EXIT_AFTER}; echo ENDED $(date +%s.%N) EXIT=$?")
    try:
        term.start(command)
        ready = wait_line(log, lambda line: "ready" in line, 30, "the app on screen")
        assert ready["driver"] == "QuietLinuxDriver"
        tid = ready["ready"]

        # Idle: past the short wait that follows input (the terminal's answers at start are input).
        time.sleep(KEY_SETTLE + 1.0)
        before = wake_ups(tid)
        time.sleep(3.0)
        assert wake_ups(tid) - before <= 3, "the input thread kept waking while nothing came"

        # A key wakes it at once.
        sent = time.time()
        term.keys("a")
        got = wait_line(log, lambda line: line.get("key") == "a", 10, "the key a")
        assert got["at"] - sent < 1.0

        # A lone Escape still comes through, after the parser's short timeout.
        sent = time.time()
        term.keys("Escape")
        got = wait_line(log, lambda line: line.get("key") == "escape", 10, "a lone Escape")
        assert got["at"] - sent < 1.0

        # Closing with the thread on its long wait: it is woken, not waited for.
        term.keys("x")
        exited = wait_line(log, lambda line: "exit" in line, EXIT_AFTER + 10, "the app closing by itself")
        screen = term.wait_for("the shell after the app", lambda s: "ENDED" in s, IDLE_WAIT / 2, history=True)
        m = re.search(r"ENDED (\d+\.\d+) EXIT=(\d+)", screen)
        assert m, screen
        assert m.group(2) == "0"
        assert float(m.group(1)) - exited["exit"] < 2.0, "closing waited for the input thread's long wait"
    finally:
        term.kill()
