"""A container's CPU and memory counters through the Engine API (``/containers/<id>/stats``, one shot).

The fallback for Docker runs whose cgroup files cannot be read here (a
remote engine, another namespace, files not readable): a request per
container per sample, and the daemon's work behind it, where the cgroup way
is three file reads (``bench/load_sampling.py`` measures both).  ``one-shot``
(Engine API 1.41 and later) answers without waiting for a second reading;
an older engine gives no reading.

Measured on Engine 20.10: the first one-shot request answers in about 5 ms,
but every further one made within a second (for any container) waits for the
daemon's next collection, about a second later.  Requests made together are
answered together, so a study's runs are asked at once, from a few threads,
and a sample costs about a second of waiting (in the sampler's thread, never
the event loop's), not a second per run.
"""

from __future__ import annotations

import contextlib
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import docker
import docker.errors

from studymon.engine.io.clock import parse_rfc3339

# A stats request that takes longer than this is given up (no reading this time).
TIMEOUT = 5.0
# Requests in flight at once, at most.
POOL = 8


def counters_of(stats: dict[str, Any]) -> tuple[float, int, float] | None:
    """CPU seconds, memory bytes and when the engine read them (epoch seconds, its clock) from one stats answer.

    None for a container that does not run.

    Memory is the usage less the inactive file cache, as ``docker stats``
    shows it (the key is ``total_inactive_file`` on cgroup v1,
    ``inactive_file`` on v2).
    """
    try:
        read = parse_rfc3339(str(stats.get("read") or ""))
    except ValueError:
        return None
    if read <= 0:
        return None  # the engine's zero time: no reading (the container is not running)
    usage = ((stats.get("cpu_stats") or {}).get("cpu_usage") or {}).get("total_usage")
    if not isinstance(usage, int):
        return None
    memory_stats = stats.get("memory_stats") or {}
    memory = memory_stats.get("usage")
    if not isinstance(memory, int):
        memory = 0
    detail = memory_stats.get("stats") or {}
    inactive = detail.get("total_inactive_file", detail.get("inactive_file", 0))
    if isinstance(inactive, int):
        memory -= inactive
    return usage / 1e9, max(memory, 0), read


class DockerStats:
    """Reads containers' counters through the engine's stats.

    One client, made on first use and used by one thread at a time.
    """

    def __init__(self, timeout: float = TIMEOUT) -> None:
        self._timeout = timeout
        self._client: docker.DockerClient | None = None
        self._pool: ThreadPoolExecutor | None = None

    def _api(self) -> docker.APIClient:
        if self._client is None:
            self._client = docker.from_env(timeout=self._timeout)  # type: ignore[arg-type]  # a float, as requests takes
        return self._client.api

    def read(self, container: str) -> tuple[float, int, float] | None:
        """The counters of ``container`` (its Id or name) and when they were read, or None when there are none now.

        Raises what the client raises when the engine cannot be asked.
        """
        try:
            stats = self._api().stats(container, stream=False, one_shot=True)
        except docker.errors.NotFound:
            return None
        return counters_of(stats) if isinstance(stats, dict) else None

    def read_many(self, containers: list[str]) -> list[tuple[float, int, float] | None]:
        """:meth:`read` for each container, asked at once; None for one that could not be read."""
        self._api()  # one client, made before the threads share it

        def read(container: str) -> tuple[float, int, float] | None:
            try:
                return self.read(container)
            except Exception:  # noqa: BLE001 - an engine that cannot be asked gives no reading
                return None

        if len(containers) <= 1:
            return [read(c) for c in containers]
        if self._pool is None:
            self._pool = ThreadPoolExecutor(max_workers=POOL, thread_name_prefix="docker-stats")
        return list(self._pool.map(read, containers))

    def close(self) -> None:
        pool, self._pool = self._pool, None
        if pool is not None:
            pool.shutdown(wait=False, cancel_futures=True)
        client, self._client = self._client, None
        if client is not None:
            with contextlib.suppress(Exception):
                client.close()
