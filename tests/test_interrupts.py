"""Ctrl-C and SIGTERM on a headless run, with real consoles, keepers and controllers.

The first signal stops every study gracefully and names itself; a second one
stops waiting at once: no traceback, the studies left running under their
keepers, what is known of each and the exact command that continues it,
exit status 3.  Then that command finishes the studies, and no evidence file
holds a torn line.

The studies are ``tests/doubles/gated_study.py``: they wait at a gate file,
so a test decides when they may end, and answer SIGINT by stopping at once
(``stop``) or by going on to their end (``finish``).
"""

from __future__ import annotations

import json
import os
import shlex
import signal
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest

from tests.studies import ROOT, verdicts
from tests.waits import until

GATED = ROOT / "tests" / "doubles" / "gated_study.py"
GRACE = 10.0  # the console's SIGINT-then-SIGKILL grace (engine.launcher.GRACE_SECONDS)


@pytest.fixture(autouse=True)
def open_the_gate(tmp_path: Path):
    """Whatever happens, the studies a test left waiting end (the gate opens) when it is over."""
    yield
    (tmp_path / "gate").touch()


def gated_template(tmp: Path, name: str, on_sigint: str | dict[str, str]) -> Path:
    path = tmp / f"{name}.json"
    path.write_text(json.dumps({"command": [sys.executable, str(GATED)], "backend": "process",
                                "gate": str(tmp / "gate"), "onSigint": on_sigint}))
    return path


def env() -> dict[str, str]:
    return dict(os.environ, PYTHONPATH=str(ROOT), COLUMNS="200")


class Console:
    """A headless ``studymon`` in the background, its output in files."""

    def __init__(self, tmp: Path, *args: str, environ: dict[str, str] | None = None) -> None:
        self.stdout_path, self.stderr_path = tmp / "console.out", tmp / "console.err"
        with open(self.stdout_path, "w") as out, open(self.stderr_path, "w") as err:
            self.proc = subprocess.Popen([sys.executable, "-m", "studymon.tui.cli", *args], cwd=tmp,
                                         env=environ or env(),
                                         stdout=out, stderr=err, stdin=subprocess.DEVNULL)

    @property
    def stdout(self) -> str:
        return self.stdout_path.read_text()

    @property
    def stderr(self) -> str:
        return self.stderr_path.read_text()

    def signal(self, sig: int) -> None:
        self.proc.send_signal(sig)

    def wait(self, timeout: float) -> int:
        return self.proc.wait(timeout=timeout)


def launches(out: Path) -> list[dict]:
    path = out / "launches.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def ledger_lines(out: Path) -> int:
    path = out / "study" / "ledger.jsonl"
    return len(path.read_text().splitlines()) if path.exists() else 0


def got_sigint(out: Path) -> bool:
    path = out / "study" / "signals"
    return path.exists() and "sigint" in path.read_text()


def ended(out: Path) -> bool:
    return any(line["event"] == "end" for line in launches(out))


def assert_nothing_torn(out: Path, log_clean: bool = True) -> None:
    """Every ``.jsonl`` line whole, every JSON file whole, no temporary left behind."""
    for path in out.rglob("*.jsonl"):
        text = path.read_text()
        assert text == "" or text.endswith("\n"), f"{path}: last line torn"
        for line in text.splitlines():
            json.loads(line)
    for path in out.rglob("*.json"):
        json.loads(path.read_text())
    assert not list(out.rglob("*.tmp")), "temporary files left behind"
    if log_clean:
        assert "Traceback" not in (out / "study.log").read_text()


def alive(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() not in (psutil.STATUS_ZOMBIE, psutil.STATUS_DEAD)
    except psutil.NoSuchProcess:
        return False


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["ctrl-c", "sigterm"])
def test_a_second_signal_leaves_the_studies_to_their_keepers(tmp_path: Path, sig: signal.Signals) -> None:
    # One template, two answers: a stops on the first signal's SIGINT, b goes on to its end.
    template = gated_template(tmp_path, "t", {"a": "stop", "b": "finish"})
    a, b = tmp_path / "a", tmp_path / "b"
    console = Console(tmp_path, "run", "--headless", "--template", str(template), "a=a", "b=b")
    try:
        until(lambda: ledger_lines(a) >= 2 and ledger_lines(b) >= 2, 60, "both studies to open")
        console.signal(sig)
        until(lambda: "stopping the studies" in console.stdout, 20, "the first signal's message")
        # The console has seen a end (its line is printed) and b has the SIGINT it ignores.
        until(lambda: "a controller" in console.stdout and "ended: code 130" in console.stdout
                 and got_sigint(b), 20, "a to stop and b to get its SIGINT")
        controller = next(line for line in launches(b) if line["event"] == "start")
        second = time.monotonic()
        console.signal(sig)
        code = console.wait(timeout=GRACE)
        # Well inside the grace period: the console did not wait for b, nor SIGKILL it.
        assert time.monotonic() - second < GRACE - 2
    finally:
        if console.proc.poll() is None:
            console.proc.kill()
    name = signal.Signals(sig).name
    out, err = console.stdout, console.stderr
    assert code == 3, out + err
    assert "Traceback" not in out + err and err == "", err
    assert f"studymon: {name}: stopping the studies" in out
    assert f"studymon: {name} again: no longer waiting" in out
    assert f"b: controller pid {controller['pid']} still running" in out
    # What is known of each, and the exact commands: attach for the one that runs, resume for the one that stopped.
    assert "a: controller not running;" in out and "last controller: exit 130" in out
    assert f"  studymon attach {shlex.quote(str(b))}\n" in out
    assert f"  studymon run --resume {shlex.quote(f'a={a}')}\n" in out
    # b's controller and its keeper go on without the console.
    assert alive(controller["pid"]) and alive(controller["keeper"])
    assert not ended(b)
    for folder in (a, b):
        assert_nothing_torn(folder)

    (tmp_path / "gate").touch()
    attach = subprocess.run([sys.executable, "-m", "studymon.tui.cli", "attach", "--headless", str(b)], cwd=tmp_path,
                            env=env(), capture_output=True, text=True, timeout=120)
    assert attach.returncode == 0, attach.stdout + attach.stderr
    assert all(ok is True for ok in verdicts(b).values()), verdicts(b)
    assert [line["event"] for line in launches(b)] == ["start", "end"] and launches(b)[-1]["code"] == 0
    resume = subprocess.run([sys.executable, "-m", "studymon.tui.cli", "run", "--resume", "--headless", f"a={a}"],
                            cwd=tmp_path, env=env(), capture_output=True, text=True, timeout=120)
    assert resume.returncode == 0, resume.stdout + resume.stderr
    assert all(ok is True for ok in verdicts(a).values()), verdicts(a)
    for folder in (a, b):
        assert_nothing_torn(folder)


def test_sigterm_stops_gracefully_and_says_sigterm(tmp_path: Path) -> None:
    t = gated_template(tmp_path, "t", "stop")
    out = tmp_path / "s"
    console = Console(tmp_path, "run", "--headless", "--template", str(t), "s=s")
    try:
        until(lambda: ledger_lines(out) >= 2, 60, "the study to open")
        console.signal(signal.SIGTERM)
        code = console.wait(timeout=60)
    finally:
        if console.proc.poll() is None:
            console.proc.kill()
    text = console.stdout
    assert code == 3, text + console.stderr
    assert "Traceback" not in text + console.stderr
    assert "studymon: SIGTERM: stopping the studies" in text
    assert "(SIGINT)" not in text and "studymon: SIGINT" not in text
    # The graceful stop: the controller got SIGINT, ended 130, the table and the --resume command follow.
    assert got_sigint(out) and launches(out)[-1]["code"] == 130
    assert "exitedCleanly" in text and f"studymon run --resume s={out}" in text
    assert_nothing_torn(out)
    (tmp_path / "gate").touch()
    resume = subprocess.run([sys.executable, "-m", "studymon.tui.cli", "run", "--resume", "--headless", f"s={out}"],
                            cwd=tmp_path, env=env(), capture_output=True, text=True, timeout=120)
    assert resume.returncode == 0, resume.stdout + resume.stderr
    assert_nothing_torn(out)


# Holds a keeper (and only a keeper) inside the launch until the test lets it go: at its start,
# before the controller exists, or right after it has started the controller (not any other process,
# such as the server of the study's file system), before the console knows its pid.  Python imports ``sitecustomize`` from the console's PYTHONPATH in every process.
HOLD = """
import os
def _hold():
    open(os.environ["STUDYMON_TEST_HOLD"] + ".held", "w").close()
    with open(os.environ["STUDYMON_TEST_HOLD"], "rb") as fifo:
        fifo.read(1)
with open("/proc/self/cmdline", "rb") as _f:
    _keeper = b"studymon.engine.launch.keeper" in _f.read()
if _keeper and os.environ.get("STUDYMON_TEST_HOLD_AT") == "start":
    _hold()
elif _keeper:
    import subprocess
    class _Held(subprocess.Popen):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            if "--dir" in list(args[0] if args else kwargs.get("args", ())):  # the controller's (§1), no other's
                _hold()
    subprocess.Popen = _Held
"""


@pytest.mark.parametrize("at", ["start", "spawned"])
def test_a_signal_during_the_launch_still_stops_the_study(tmp_path: Path, at: str) -> None:
    """Ctrl-C while a controller is being started: it is stopped once it is up, not left to run on."""
    hooks = tmp_path / "hooks"
    hooks.mkdir()
    (hooks / "sitecustomize.py").write_text(HOLD)
    fifo = tmp_path / "hold"
    os.mkfifo(fifo)
    held = dict(env(), PYTHONPATH=f"{hooks}{os.pathsep}{ROOT}", STUDYMON_TEST_HOLD=str(fifo), STUDYMON_TEST_HOLD_AT=at)
    t = gated_template(tmp_path, "t", "stop")
    out = tmp_path / "s"
    console = Console(tmp_path, "run", "--headless", "--template", str(t), "s=s", environ=held)
    try:
        until(lambda: Path(f"{fifo}.held").exists(), 60, "the keeper to be held in the launch")
        assert launches(out) == [], "the launch is not over: no controller has its start line"
        console.signal(signal.SIGINT)
        until(lambda: "stopping the studies" in console.stdout, 20, "the console to take the signal")
        fd = os.open(fifo, os.O_WRONLY)  # the keeper goes on: the launch ends after the signal was taken
        os.write(fd, b"x")
        os.close(fd)
        code = console.wait(timeout=30)  # without the late stop it would wait at the gate for ever
    finally:
        if console.proc.poll() is None:
            console.proc.kill()
    text = console.stdout
    assert code == 3, text + console.stderr
    assert "Traceback" not in text + console.stderr
    # It ended on the console's SIGINT: at 130, or, when that came before the controller had set its
    # handler up, by Python's default for SIGINT (a KeyboardInterrupt in the study's own start-up, exit 1,
    # or in its code, death by SIGINT; --resume continues it).
    start, end = launches(out)
    assert start["event"] == "start" and end["event"] == "end" and end["pid"] == start["pid"], launches(out)
    log = (out / "study.log").read_text()
    assert (end["code"] == 130 or end["signal"] == "SIGINT"
            or (end["code"] == 1 and log.rstrip().endswith("KeyboardInterrupt"))), (end, log[-400:])
    assert "ended" in text
    assert f"studymon run --resume s={out}" in text
    assert_nothing_torn(out, log_clean=False)
