"""One study's own load: its controller's process tree plus its runs, as ``StudyLoad`` events and ``load.jsonl`` lines.

The machine's load says little about one study: its work runs in containers,
outside its controller's process tree, and two studies side by side share
the machine.  A :class:`LoadMeter` reads, at each sample, the counters of
everything the study has at work:

* its controller and the controller's descendants, from ``/proc``
  (:mod:`studymon.engine.load.proctree`);
* each run that is running (the session's live container list, names
  ``<containerPrefix>-<ID>-<run>``):

  - on Docker, the container's cgroup files (:mod:`studymon.engine.load.cgroup`),
    found once per container; where they cannot be read here, the Engine
    API's one-shot stats (:mod:`studymon.engine.load.dockerstats`).  The cgroup
    way is the cheaper by far (``bench/load_sampling.py``);
  - on the process runtime, the run's command (the inspect's ``State.Pid``,
    checked against the container's creation and start, as pids are
    reused) and its descendants, from ``/proc``.

:class:`~studymon.engine.load.loadrate.LoadRates` turns the counters into rates
over the interval since the previous sample.  A reading that fails leaves
that run (or process) out of the sample; nothing here raises to the sampler.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any, Literal

from studymon.engine.events import StudyLoad
from studymon.engine.io.clock import parse_rfc3339, rfc3339_ms
from studymon.engine.load.cgroup import CgroupFiles, CgroupMounts, locate, read_counters, read_mounts
from studymon.engine.load.loadrate import LoadRates, Reading
from studymon.engine.load.proctree import ProcessTable, read_process
from studymon.engine.runtimes import Runtime, close_runtime, open_runtime

if TYPE_CHECKING:
    from studymon.engine.load.dockerstats import DockerStats

Way = Literal["cgroup", "api", "process"]
# A container's cgroup files, or how else it is read: through the API, or not at all (its cgroup is gone).
_Source = CgroupFiles | Literal["api", "gone"]
# A run's command starts between its container's creation and its recorded start; a process
# that started outside this margin around them is another one that got the pid later.
_START_SLACK = 1.0


def load_line(load: StudyLoad) -> dict[str, Any]:
    """The ``load.jsonl`` line of a sample (PROTOCOL §5)."""
    return {
        "at": rfc3339_ms(load.at),
        "cpu": load.cpu,
        "memory": load.memory,
        "runs": {name: {"cpu": cpu, "memory": memory} for name, cpu, memory in load.runs},
    }


def _time(text: Any) -> float | None:
    try:
        t = parse_rfc3339(str(text or ""))
    except ValueError:
        return None
    return t if t > 0 else None


class LoadMeter:
    """Samples one study's load; :meth:`measure` runs in the sampler's thread, one call at a time."""

    def __init__(self, study: str, backend: str, *, cgroups: bool = True) -> None:
        self.study = study
        self.backend = backend
        self._rates = LoadRates(time.time(), time.monotonic())
        self._cgroups = cgroups  # False: Docker runs are read through the API only (the bench, the fallback's test)
        self._mounts: CgroupMounts | None = None
        self._sources: dict[str, _Source] = {}  # container Id -> where its counters are read
        self._api: DockerStats | None = None
        self._runtime: Runtime | None = None  # opened on first use, to inspect again a run the watch saw start
        self._fresh: dict[str, Mapping[str, Any]] = {}  # container Id -> an inspect that shows it running
        # How each run of the last sample was read: which way a Docker run took, for the record and the tests.
        self.ways: dict[str, Way] = {}
        self._closed = False

    def measure(
        self, controller: int | None, running: Mapping[str, Mapping[str, Any]], table: ProcessTable
    ) -> tuple[StudyLoad | None, float]:
        """The sample now, and the controller tree's CPU alone (for the machine line).

        ``controller`` is the running controller's pid (None when none runs),
        ``running`` the study's containers that run (name -> the inspect last
        taken).  The sample is None when nothing of the study runs, or no time
        has passed, or after :meth:`close`.
        """
        if self._closed:
            return None, 0.0
        try:
            return self._measure(controller, running, table)
        finally:
            if self.closed:
                self._release()  # closed while this sample was taken: what it opened goes too

    def _measure(
        self, controller: int | None, running: Mapping[str, Mapping[str, Any]], table: ProcessTable
    ) -> tuple[StudyLoad | None, float]:
        readings: list[Reading] = []
        ways: dict[str, Way] = {}
        run_pids: set[int] = set()
        by_api: list[tuple[str, Mapping[str, Any]]] = []  # Docker runs read through the API, all at once below
        for name, last in sorted(running.items()):
            try:
                inspect = self._current(name, last)
                if inspect is None:
                    continue
                if self.backend == "process":
                    found = self._process_run(name, inspect, table, run_pids)
                    way: Way | None = "process" if found else None
                else:
                    found, way = self._container_run(name, inspect)
                    if way == "api":
                        by_api.append((name, inspect))
                        continue
            except Exception:  # noqa: BLE001, S112 - a run that cannot be read is left out of this sample
                continue
            readings.extend(found)
            if way is not None:
                ways[name] = way
        if controller is not None:
            for pid in table.tree(controller, run_pids):
                counters = read_process(pid)
                if counters is not None:
                    readings.append(
                        Reading(("pid", pid, counters.start_ticks), counters.cpu, counters.memory, counters.started)
                    )
        # The sample's time: every reading so far took a millisecond or so.  The engine's
        # stats (below) may answer a second later; they carry their own time.
        at, mono = time.time(), time.monotonic()
        if by_api:
            readings.extend(self._read_by_api(by_api, ways))
        self._forget(running.values())
        rates = self._rates.update(readings, at, mono)
        self.ways = ways
        if rates is None:
            return None, 0.0
        if controller is None and not rates.runs:
            return None, 0.0
        runs = tuple((name, round(cpu, 1), memory) for name, cpu, memory in rates.runs)
        return StudyLoad(self.study, at, round(rates.cpu, 1), rates.memory, runs), rates.tree_cpu

    def _process_run(
        self, name: str, inspect: Mapping[str, Any], table: ProcessTable, run_pids: set[int]
    ) -> list[Reading]:
        state = inspect.get("State") or {}
        root = int(state.get("Pid") or 0)
        if root <= 0:
            return []
        run_pids.add(root)  # never counted as the controller's, even when it cannot be read
        first = read_process(root)
        created, started = _time(inspect.get("Created")), _time(state.get("StartedAt"))
        if first is None or created is None or started is None:
            return []
        if not created - _START_SLACK <= first.started <= started + _START_SLACK:
            return []
        readings = [Reading(("pid", root, first.start_ticks), first.cpu, first.memory, first.started, name)]
        for pid in table.tree(root)[1:]:
            run_pids.add(pid)
            counters = read_process(pid)
            if counters is not None:
                readings.append(
                    Reading(("pid", pid, counters.start_ticks), counters.cpu, counters.memory, counters.started, name)
                )
        return readings

    def _container_run(self, name: str, inspect: Mapping[str, Any]) -> tuple[list[Reading], Way | None]:
        cid = str(inspect.get("Id") or "")
        state = inspect.get("State") or {}
        if not cid:
            return [], None
        source = self._sources.get(cid)
        if source is None:
            source = self._locate(cid, int(state.get("Pid") or 0))
        if source == "gone":
            return [], None
        if isinstance(source, CgroupFiles):
            try:
                cpu, memory = read_counters(source)
            except FileNotFoundError:
                # Its cgroup went with its process: it has stopped, and its die is on its way.
                self._sources[cid] = "gone"
                return [], None
            except (OSError, ValueError):
                self._sources[cid] = "api"
                return [], "api"
            return [Reading(("container", cid), cpu, memory, _time(state.get("StartedAt")), name)], "cgroup"
        return [], "api"

    def _read_by_api(self, runs: list[tuple[str, Mapping[str, Any]]], ways: dict[str, Way]) -> list[Reading]:
        """The readings of Docker runs whose cgroup files cannot be read here, asked of the engine at once."""
        if self._api is None:
            # Imported here: the Docker SDK is loaded only where a run needs it.
            from studymon.engine.load.dockerstats import DockerStats

            self._api = DockerStats()
        answers = self._api.read_many([str(inspect.get("Id") or "") for _, inspect in runs])
        readings = []
        for (name, inspect), counters in zip(runs, answers, strict=True):
            if counters is None:
                continue
            cpu, memory, taken = counters
            started = _time((inspect.get("State") or {}).get("StartedAt"))
            readings.append(Reading(("container", str(inspect.get("Id"))), cpu, memory, started, name, taken))
            ways[name] = "api"
        return readings

    def _locate(self, cid: str, pid: int) -> _Source:
        files = None
        if self._cgroups:
            if self._mounts is None:
                self._mounts = read_mounts()
            files = locate(pid, cid, self._mounts)
        source: _Source = files if files is not None else "api"
        self._sources[cid] = source
        return source

    def _current(self, name: str, inspect: Mapping[str, Any]) -> Mapping[str, Any] | None:
        """An inspect of the running container ``name`` that shows its main process, or None.

        The inspect taken at the start event can be one step behind it (the
        process runtime records the event before the state): then the run is
        inspected again, once, and that inspect kept while it runs.
        """
        state = inspect.get("State") or {}
        if state.get("Running") and int(state.get("Pid") or 0) > 0:
            return inspect
        cid = str(inspect.get("Id") or "")
        kept = self._fresh.get(cid)
        if kept is not None:
            return kept
        if self._runtime is None:
            self._runtime = open_runtime(self.backend)
        found = self._runtime.inspect(name)
        if found is None or found.get("Id") != cid or not (found.get("State") or {}).get("Running"):
            return None
        self._fresh[cid] = found
        return found

    def _forget(self, inspects: Iterable[Mapping[str, Any]]) -> None:
        """Keep only what concerns running containers: the maps stay as small as the study's runs."""
        ids = {str(i.get("Id") or "") for i in inspects}
        for kept in (self._sources, self._fresh):
            for cid in [c for c in kept if c not in ids]:
                del kept[cid]

    @property
    def closed(self) -> bool:
        """Whether :meth:`close` was called (another thread may call it while a sample is taken)."""
        return self._closed

    def close(self) -> None:
        """Take no more samples; let go of the API client and the runtime, if they were made."""
        self._closed = True
        self._release()

    def _release(self) -> None:
        api, self._api = self._api, None
        if api is not None:
            api.close()
        runtime, self._runtime = self._runtime, None
        if runtime is not None:
            close_runtime(runtime)
