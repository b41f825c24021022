"""The console's terminal driver in a real terminal: its input thread sleeps while idle, yet keys, a lone
Escape and the app's closing are all as prompt as with Textual's own driver.

``tests/doubles/keys_app.py`` runs on :class:`QuietLinuxDriver` in tmux and
writes down each key with its time and the native id of the input thread.
That the thread is on its long wait is read from ``/proc``: the system call
it is blocked in (a select) and that call's timeout, read from its memory.
Its voluntary context switches count its wake-ups: Textual's own driver
wakes ten times a second, and never waits longer than a tenth of a second.
"""

from __future__ import annotations

import contextlib
import json
import platform
import re
import shlex
import shutil
import struct
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from studymon.tui.app import StudymonApp
from studymon.tui.driver import IDLE_WAIT, KEY_SETTLE, QuietLinuxDriver
from tests.test_e2e_tmux import Tmux
from tests.waits import until

ROOT = Path(__file__).resolve().parent.parent
KEYS_APP = ROOT / "tests" / "doubles" / "keys_app.py"
EXIT_AFTER = KEY_SETTLE + 2.0  # the app closes by itself once its input thread is back on its long wait


def test_the_console_runs_on_the_quiet_driver() -> None:
    assert StudymonApp([], start_engine=False).get_driver_class() is QuietLinuxDriver


def lines(log: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []


def wait_line(log: Path, predicate: Any, timeout: float, what: str) -> dict[str, Any]:
    def found() -> dict[str, Any] | None:
        return next((line for line in lines(log) if predicate(line)), None)

    return until(found, timeout, what, step=0.02, seen=lambda: lines(log))


# The select calls a thread can be blocked in, by machine and number: where their timeout
# argument points (the fifth), a timespec (ns) or a timeval (us).
SELECTS = {("x86_64", 270): 1e9, ("x86_64", 23): 1e6, ("aarch64", 72): 1e9}


def select_timeout(tid: int) -> float | None:
    """The timeout of the select thread ``tid`` is blocked in; None while it is not in one."""
    try:
        call = Path(f"/proc/{tid}/syscall").read_text()
        fields = call.split()
        per_second = SELECTS.get((platform.machine(), int(fields[0]))) if fields[0].isdigit() else None
        if per_second is None:
            return None
        with open(f"/proc/{tid}/mem", "rb") as mem:
            mem.seek(int(fields[5], 16))
            seconds, fraction = struct.unpack("qq", mem.read(16))
        # Still in the same call, so what was read is its timeout (not a stack since reused).
        if Path(f"/proc/{tid}/syscall").read_text() != call:
            return None
    except PermissionError as exc:
        pytest.fail(f"cannot read the input thread's system call in /proc ({exc}): "
                    "run as root, or with kernel.yama.ptrace_scope=0")
    except (FileNotFoundError, ProcessLookupError):
        return None  # the thread has ended
    return seconds + fraction / per_second


def wake_ups(tid: int) -> int:
    status = Path(f"/proc/{tid}/status").read_text()
    m = re.search(r"^voluntary_ctxt_switches:\s+(\d+)", status, re.MULTILINE)
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

        # Idle: past the short wait that follows input (the terminal's answers at start are input),
        # the thread is blocked in a select that times out only after IDLE_WAIT.
        until(lambda: (select_timeout(tid) or 0) >= IDLE_WAIT, KEY_SETTLE + 30,
              f"the input thread on its long wait ({IDLE_WAIT:g} s)",
              step=0.05, seen=lambda: Path(f"/proc/{tid}/syscall").read_text())

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

        # Closing with the thread on its long wait: it is woken, not waited for.  The app closes
        # EXIT_AFTER after x, its own timer: while the test waits for that, the thread's wake-ups are
        # counted from when it is seen on its long wait again (KEY_SETTLE after x) until the close.
        samples: list[tuple[float, int]] = []

        def closed() -> dict[str, Any] | None:
            written = lines(log)
            # From when the app has x (the thread read it, and waits short again) ...
            if any(line.get("key") == "x" for line in written):
                with contextlib.suppress(FileNotFoundError, ProcessLookupError):  # the thread ended
                    if (select_timeout(tid) or 0) >= IDLE_WAIT:
                        samples.append((time.time(), wake_ups(tid)))
            # ... until the app closes.
            return next((line for line in written if "exit" in line), None)

        term.keys("x")
        exited = until(closed, EXIT_AFTER + 10, "the app closing by itself", step=0.02, seen=lambda: lines(log))
        idle = [(at, woken) for at, woken in samples if at < exited["exit"]]
        assert idle and idle[-1][0] - idle[0][0] >= 1.0, f"not seen on its long wait before the close: {samples}"
        assert idle[-1][1] - idle[0][1] <= 1, f"the input thread kept waking while nothing came: {idle}"
        screen = term.wait_for("the shell after the app", lambda s: "ENDED" in s, IDLE_WAIT / 2, history=True)
        m = re.search(r"ENDED (\d+\.\d+) EXIT=(\d+)", screen)
        assert m, screen
        assert m.group(2) == "0"
        assert float(m.group(1)) - exited["exit"] < 2.0, "closing waited for the input thread's long wait"
    finally:
        term.kill()
