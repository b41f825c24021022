"""Real terminals for the console benches: a private tmux server, windows of a fixed size, cheap screen reads.

A bench starts each program under test in its own tmux session of an exact
size (160×48 by default) on a server of its own (``tmux -L <unique>``, no
user configuration), so no other tmux session is touched and every program
draws into a real pseudo-terminal that a real terminal emulator (tmux) parses.

Screens are read through one *control-mode* client (``tmux -C``) attached to
a separate small session: a ``capture-pane`` costs a round trip on a pipe
(~0.1-0.3 ms), not a process start, so polling the screen every few
milliseconds does not steal the CPU from the program being timed.
"""

from __future__ import annotations

import contextlib
import os
import shlex
import shutil
import subprocess
import threading
import time
import uuid
from typing import Sequence


class TerminalError(RuntimeError):
    """tmux is missing, or a tmux command failed."""


class Terminals:
    """A private tmux server, one control-mode client on it, and the sessions the bench started."""

    def __init__(self, name: str, width: int = 160, height: int = 48) -> None:
        if shutil.which("tmux") is None:
            raise TerminalError("tmux is not installed (apt-get install tmux)")
        self.socket = f"{name}-{os.getpid()}-{uuid.uuid4().hex[:8]}"
        self.width, self.height = width, height
        # A UTF-8 locale, or tmux draws box characters and ✓ as '_' in captures.  No COLUMNS or
        # LINES: a program reads them before the terminal's own size (readline, once imported,
        # exports them as 80×24 to every child, as under pytest).
        env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES")}
        self.env = dict(env, LC_ALL="C.UTF-8", LANG="C.UTF-8")
        self._ctl: subprocess.Popen[str] | None = None
        self._socket_path: str | None = None
        self._lock = threading.Lock()
        self._serial = 0

    # --- plain commands ----------------------------------------------------------
    def tmux(self, *args: str, check: bool = True) -> str:
        proc = subprocess.run(["tmux", "-L", self.socket, "-f", "/dev/null", *args], env=self.env,
                              capture_output=True, text=True, timeout=30)
        if check and proc.returncode != 0:
            raise TerminalError(f"tmux {' '.join(args)}: {proc.stderr.strip()}")
        return proc.stdout

    def start_server(self) -> None:
        """The server and the control client's own session (never measured, never resized by the others)."""
        self.tmux("new-session", "-d", "-s", "ctl", "-x", "80", "-y", "24", "sleep 86400")
        self.tmux("set-option", "-g", "remain-on-exit", "on")  # keep a finished pane's last screen readable
        self.tmux("set-option", "-g", "history-limit", "5000")
        self._socket_path = self.tmux("display-message", "-p", "#{socket_path}").strip() or None
        self._ctl = subprocess.Popen(
            ["tmux", "-L", self.socket, "-f", "/dev/null", "-C", "attach-session", "-t", "ctl"],
            env=self.env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
            text=True, encoding="utf-8", errors="replace", bufsize=1,
        )
        self._sync()

    def start(self, session: str, argv: Sequence[str], env: dict[str, str] | None = None, cwd: str | None = None) -> int:
        """Run ``argv`` (exec'd, so the pane's pid is the program's) in a new WIDTH×HEIGHT session; its pid."""
        exports = " ".join(f"{k}={shlex.quote(v)}" for k, v in (env or {}).items())
        command = f"exec env {exports} {' '.join(shlex.quote(a) for a in argv)}"
        args = ["new-session", "-d", "-s", session, "-x", str(self.width), "-y", str(self.height)]
        if cwd:
            args += ["-c", cwd]
        self.tmux(*args, command)
        return self.pane_pid(session)

    def pane_pid(self, session: str) -> int:
        return int(self.command(f"display-message -p -t {session} '#{{pane_pid}}'")[0])

    def pane_dead(self, session: str) -> tuple[bool, int | None]:
        """Whether the program in ``session`` has ended, and its exit status (-N: killed by signal N)."""
        line = self.command(f"display-message -p -t {session} '#{{pane_dead}}|#{{pane_dead_status}}|#{{pane_dead_signal}}'")
        dead, status, sig = (line[0].split("|") + ["", ""])[:3] if line else ("", "", "")
        if dead != "1":
            return False, None
        if sig.strip().isdigit() and int(sig):
            return True, -int(sig)
        # tmux 3.3 leaves the status empty when it is 0.
        return True, int(status) if status.strip().isdigit() else 0

    def kill_session(self, session: str) -> None:
        with contextlib.suppress(TerminalError):
            self.tmux("kill-session", "-t", session)

    def close(self) -> None:
        """Kill the server (and with it every program still running in one of its panes)."""
        if self._ctl is not None:
            with contextlib.suppress(OSError):
                self._ctl.stdin.close()  # type: ignore[union-attr]
            with contextlib.suppress(subprocess.TimeoutExpired):
                self._ctl.wait(timeout=2)
            if self._ctl.poll() is None:
                self._ctl.kill()
                self._ctl.wait()
            self._ctl = None
        self.tmux("kill-server", check=False)
        if self._socket_path:
            # tmux leaves the socket file behind after kill-server.
            with contextlib.suppress(OSError):
                os.unlink(self._socket_path)
    # --- the control client ------------------------------------------------------
    def command(self, line: str) -> list[str]:
        """Run one tmux command on the control client; its output lines."""
        with self._lock:
            ctl = self._ctl
            if ctl is None or ctl.stdin is None or ctl.stdout is None:
                raise TerminalError("the control client is not running")
            ctl.stdin.write(line + "\n")
            ctl.stdin.flush()
            return self._read_block()

    def _read_block(self) -> list[str]:
        """The next ``%begin`` .. ``%end``/``%error`` block; notifications between blocks are skipped."""
        assert self._ctl is not None and self._ctl.stdout is not None
        out: list[str] = []
        inside = False
        while True:
            raw = self._ctl.stdout.readline()
            if not raw:
                raise TerminalError("the tmux control client ended")
            text = raw.rstrip("\n")
            if not inside:
                # Flags 1: a command this client sent; tmux also reports others' commands (flags 0).
                inside = text.startswith("%begin ") and text.endswith(" 1")
                continue
            if text.startswith("%end ") or text.startswith("%error "):
                if text.startswith("%error "):
                    raise TerminalError("tmux: " + " ".join(out))
                return out
            out.append(text)

    def _sync(self) -> None:
        """Skip what attaching printed, up to the answer to a marker of our own."""
        self._serial += 1
        marker = f"studymon-sync-{self._serial}"
        assert self._ctl is not None and self._ctl.stdin is not None
        self._ctl.stdin.write(f"display-message -p {marker}\n")
        self._ctl.stdin.flush()
        while marker not in self._read_block():
            pass

    def screen(self, session: str) -> str:
        """What ``session`` shows now."""
        return "\n".join(self.command(f"capture-pane -p -t {session}"))

    def everything(self, session: str) -> str:
        """Its scrollback and screen, wrapped lines joined (what a program printed after a full-screen app)."""
        return "\n".join(self.command(f"capture-pane -p -J -S - -t {session}"))

    def keys(self, session: str, *keys: str) -> None:
        self.command(f"send-keys -t {session} " + " ".join(shlex.quote(k) for k in keys))

    def wait_for(self, session: str, predicate, timeout: float, what: str, interval: float = 0.05) -> str:
        """Poll ``session``'s screen until ``predicate(screen)``; that screen (TerminalError on timeout)."""
        deadline = time.monotonic() + timeout
        text = ""
        while True:
            text = self.screen(session)
            if predicate(text):
                return text
            if time.monotonic() > deadline:
                raise TerminalError(f"timed out after {timeout:.0f} s waiting for {what}; last screen:\n{text}")
            time.sleep(interval)
