"""A Docker engine of a test's own, for the faults that cannot be done to the shared one.

The ``second_engine`` fixture starts a ``containerd`` and a ``dockerd`` in a
fresh folder under ``/tmp``: their own sockets, data root, exec root, pid
file, an empty daemon configuration, and a bridge of their own (created here
with an address no other interface uses), with iptables, masquerading and
forwarding left alone.  So the engine can be stopped, crashed and restarted
without touching the machine's engine, its ``docker0`` or its containers.

Why these choices:

* ``--bridge=none`` is not used: ``dockerd`` then *deletes* the machine's
  ``docker0`` link, which belongs to the main engine;
* ``containerd`` runs apart from ``dockerd`` (``--containerd``), as on
  systemd hosts: a ``dockerd`` killed outright leaves a managed
  ``containerd`` behind, which the next ``dockerd`` waits for in vain; apart,
  the containers outlive a crashed engine and the restarted one stops them
  (live restore is off), which is the fault to test.

The test image is imported into it the way ``studymon image`` does it
(:func:`studymon.refstudy.image.build_image` with ``DOCKER_HOST`` naming the engine).
A test asks for the ``second_engine`` fixture (``tests/conftest.py`` holds
it for every test file); it gets the running :class:`Engine` and leaves the
rest to the fixture.
"""

from __future__ import annotations

import contextlib
import ipaddress
import json
import os
import random
import shutil
import signal
import socket
import subprocess
import tempfile
from pathlib import Path
from typing import Iterator

import psutil
import pytest

from tests.waits import until

# A crashed-and-restarted engine stops the containers it finds running, each
# with its stop timeout (10 s): the restart takes that long.
ANSWER_TIMEOUT = 60.0
STOP_TIMEOUT = 30.0


class Engine:
    """A ``containerd`` and ``dockerd`` pair in ``root``; ``host`` is its ``DOCKER_HOST``."""

    def __init__(self, root: Path, bridge: str, address: str) -> None:
        self.root = root
        self.bridge = bridge
        self.address = address  # the bridge's own address, with its prefix length
        self.socket = root / "docker.sock"
        self.host = f"unix://{self.socket}"
        self.containerd_socket = root / "containerd.sock"
        self.pidfile = root / "docker.pid"
        self.containerd: subprocess.Popen[bytes] | None = None
        self.dockerd: subprocess.Popen[bytes] | None = None
        self.starts = 0

    # --- environment ---------------------------------------------------------------
    def env(self, base: dict[str, str] | None = None) -> dict[str, str]:
        """``base`` (default: ours) with ``DOCKER_HOST`` naming this engine."""
        env = dict(os.environ if base is None else base)
        env["DOCKER_HOST"] = self.host
        return env

    @contextlib.contextmanager
    def selected(self) -> Iterator[None]:
        """``DOCKER_HOST`` names this engine in our own environment, for the block."""
        old = os.environ.get("DOCKER_HOST")
        os.environ["DOCKER_HOST"] = self.host
        try:
            yield
        finally:
            if old is None:
                os.environ.pop("DOCKER_HOST", None)
            else:
                os.environ["DOCKER_HOST"] = old

    # --- the daemons -----------------------------------------------------------------
    def start_containerd(self) -> None:
        config = self.root / "containerd.toml"
        config.write_text(
            "version = 2\n"
            f'root = "{self.root / "containerd-root"}"\n'
            f'state = "{self.root / "containerd-state"}"\n'
            'disabled_plugins = ["io.containerd.grpc.v1.cri"]\n'
            f'[grpc]\n  address = "{self.containerd_socket}"\n'
            '[ttrpc]\n  address = ""\n'
            '[debug]\n  address = ""\n'
        )
        self.containerd = _spawn(["containerd", "--config", str(config)], self.root / "containerd.log")
        _wait_for(lambda: _connects(self.containerd_socket), ANSWER_TIMEOUT, "containerd to listen",
                  self.containerd, self.root / "containerd.log")

    def start(self) -> None:
        """Start ``dockerd`` and wait until it answers."""
        (self.root / "daemon.json").write_text("{}")
        argv = [
            "dockerd",
            "--config-file", str(self.root / "daemon.json"),
            "-H", self.host,
            "--data-root", str(self.root / "data"),
            "--exec-root", str(self.root / "exec"),
            "--pidfile", str(self.pidfile),
            "--containerd", str(self.containerd_socket),
            "--bridge", self.bridge,
            "--iptables=false",
            "--ip-masq=false",
            "--ip-forward=false",
        ]
        self.starts += 1
        log = self.root / f"dockerd-{self.starts}.log"
        self.dockerd = _spawn(argv, log)
        _wait_for(self.answers, ANSWER_TIMEOUT, "dockerd to answer", self.dockerd, log)

    def answers(self) -> bool:
        import docker

        client = None
        try:
            client = docker.DockerClient(base_url=self.host, timeout=2)
            return bool(client.ping())
        except Exception:  # noqa: BLE001 - not yet
            return False
        finally:
            if client is not None:
                client.close()

    @property
    def pid(self) -> int:
        assert self.dockerd is not None
        return self.dockerd.pid

    def stop(self, sig: int = signal.SIGTERM) -> None:
        """Stop ``dockerd`` with ``sig`` and wait for it to be gone (SIGKILL after :data:`STOP_TIMEOUT`)."""
        proc, self.dockerd = self.dockerd, None
        if proc is None or proc.poll() is not None:
            return
        proc.send_signal(sig)
        try:
            proc.wait(STOP_TIMEOUT)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()

    def crash_and_restart(self) -> None:
        """The engine dies at once (SIGKILL) and is started again, on the same folders and socket."""
        self.stop(signal.SIGKILL)
        self.start()

    def client(self):  # noqa: ANN201 - docker.DockerClient, imported late
        import docker

        return docker.DockerClient(base_url=self.host, timeout=60)

    # --- the end -----------------------------------------------------------------------
    def remove_everything(self) -> None:
        """Stop every trace of the engine: containers, daemons, their leftovers, mounts, folder, bridge."""
        if self.dockerd is not None and self.dockerd.poll() is None and self.answers():
            with contextlib.suppress(Exception):
                client = self.client()
                try:
                    for c in client.containers.list(all=True):
                        with contextlib.suppress(Exception):
                            c.remove(force=True)
                finally:
                    client.close()
        self.stop()
        if self.containerd is not None and self.containerd.poll() is None:
            self.containerd.terminate()
            try:
                self.containerd.wait(STOP_TIMEOUT)
            except subprocess.TimeoutExpired:
                self.containerd.kill()
                self.containerd.wait()
        # Shims (and what runs in them) of this engine's containerd outlive it by design.
        for proc in psutil.process_iter(["cmdline"]):
            with contextlib.suppress(psutil.Error):
                if str(self.containerd_socket) in " ".join(proc.info["cmdline"] or []):
                    for child in proc.children(recursive=True):
                        with contextlib.suppress(psutil.Error):
                            child.kill()
                    proc.kill()
        _unmount_under(self.root)
        shutil.rmtree(self.root, ignore_errors=True)
        subprocess.run(["ip", "link", "del", self.bridge], capture_output=True)


def _spawn(argv: list[str], log: Path) -> subprocess.Popen[bytes]:
    with open(log, "ab") as fh:
        # Its own session: a signal meant for the test run does not reach the engine.
        return subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=fh, stderr=subprocess.STDOUT,
                                start_new_session=True)


def _connects(path: Path) -> bool:
    sock = socket.socket(socket.AF_UNIX)
    try:
        sock.settimeout(1)
        sock.connect(str(path))
        return True
    except OSError:
        return False
    finally:
        sock.close()


def _wait_for(ready, timeout: float, what: str, proc: subprocess.Popen[bytes], log: Path) -> None:  # noqa: ANN001
    """Until ``ready()``; fails at the deadline (with the log's tail), or at once when ``proc`` exits."""
    until(lambda: ready() or proc.poll() is not None, timeout, what, step=0.05, seen=lambda: _tail(log))
    if not ready():
        raise RuntimeError(f"waiting for {what}: it exited {proc.returncode}:\n{_tail(log)}")


def _tail(log: Path, lines: int = 20) -> str:
    with contextlib.suppress(OSError):
        return "\n".join(log.read_text(errors="replace").splitlines()[-lines:])
    return ""


def _unmount_under(root: Path) -> None:
    """Lazily unmount whatever the engine left mounted under ``root``, deepest first."""
    prefix = str(root) + "/"
    points = []
    with open("/proc/self/mounts") as fh:
        for line in fh:
            point = line.split()[1].replace("\\040", " ")
            if point.startswith(prefix) or point == str(root):
                points.append(point)
    for point in sorted(points, key=len, reverse=True):
        subprocess.run(["umount", "-l", point], capture_output=True)


def _free_subnet() -> ipaddress.IPv4Network:
    """A /24 in 10.0.0.0/8 that no address or route of the machine touches."""
    taken: list[ipaddress.IPv4Network] = []
    out = subprocess.run(["ip", "-j", "-4", "route", "show", "table", "all"], capture_output=True, text=True).stdout
    for route in json.loads(out or "[]"):
        dst = route.get("dst", "")
        with contextlib.suppress(ValueError):
            taken.append(ipaddress.ip_network(dst if "/" in dst else f"{dst}/32", strict=False))
    for _ in range(200):
        net = ipaddress.ip_network(f"10.{random.randint(64, 250)}.{random.randint(0, 255)}.0/24")
        if not any(net.overlaps(t) for t in taken if t.prefixlen > 0):
            return net
    raise RuntimeError("no free /24 in 10.0.0.0/8 for the second engine's bridge")


def _cannot_run() -> str | None:
    """Why no engine of our own can be started here, or None."""
    if os.geteuid() != 0:
        return "starting a Docker engine needs root"
    for tool in ("dockerd", "containerd", "ip", "umount"):
        if shutil.which(tool) is None:
            return f"{tool} is not installed"
    return None


@pytest.fixture
def second_engine(docker_engine: None) -> Iterator[Engine]:
    """A running Docker engine of this test's own, with the test image; gone after the test."""
    reason = _cannot_run()
    if reason is not None:
        pytest.skip(reason)  # a failure under the gate (tests/gate.py)
    from studymon.refstudy.image import IMAGE, build_image

    # Short paths: unix socket paths are limited to 108 bytes.
    root = Path(tempfile.mkdtemp(prefix="smd-", dir="/tmp"))
    bridge = "smd" + root.name[-8:].lower().replace("_", "0")
    net = _free_subnet()
    engine = Engine(root, bridge[:15], f"{net.network_address + 1}/{net.prefixlen}")
    try:
        for cmd in (["ip", "link", "add", engine.bridge, "type", "bridge"],
                    ["ip", "addr", "add", engine.address, "dev", engine.bridge],
                    ["ip", "link", "set", engine.bridge, "up"]):
            subprocess.run(cmd, check=True, capture_output=True)
        engine.start_containerd()
        engine.start()
        with engine.selected():
            build_image(IMAGE)
        yield engine
    finally:
        engine.remove_everything()
