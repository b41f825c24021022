"""Container runtimes behind one interface: Docker (through the ``docker`` SDK)
and the process runtime (the project's embedded runtime for machines without a
Docker engine).  Both give the same inspect shapes and lifecycle events, so the
checks are one piece of code for both."""

from __future__ import annotations

import contextlib

from studymon.engine.runtimes.base import ContainerConflict, NoSuchContainer, Runtime, RuntimeUnavailable


def open_runtime(backend: str) -> Runtime:
    """The runtime named by a resolved ``backend`` (``docker`` or ``process``)."""
    if backend == "docker":
        from studymon.engine.runtimes.docker import DockerRuntime

        return DockerRuntime()
    if backend == "process":
        from studymon.engine.runtimes.process import ProcessRuntime

        return ProcessRuntime()
    raise ValueError(f"unknown backend {backend!r}: use docker or process")


def close_runtime(runtime: Runtime) -> None:
    """Let go of a runtime's connections (a Docker client's sockets); runtimes without any have no ``close``."""
    close = getattr(runtime, "close", None)
    if close is not None:
        with contextlib.suppress(Exception):
            close()


def docker_answers(timeout: float = 3.0) -> bool:
    """Whether a Docker engine answers on ``DOCKER_HOST`` (or the default socket)."""
    from studymon.engine.runtimes.docker import docker_answers as answers

    return answers(timeout)


def resolve_backend(backend: str) -> str:
    """``auto`` becomes ``docker`` when an engine answers, else ``process``."""
    if backend == "auto":
        return "docker" if docker_answers() else "process"
    return backend


__all__ = [
    "ContainerConflict",
    "NoSuchContainer",
    "Runtime",
    "RuntimeUnavailable",
    "close_runtime",
    "docker_answers",
    "open_runtime",
    "resolve_backend",
]
