"""The facts an evidence folder holds twice (contract §6.9), held against what the console writes.

``engine/evidence/heldtwice.py`` lists every fact the folder holds more than once
and every other field the console writes.  Real studies are run here, once
for the module: the reference study with the short configuration of
``tests/studies.py`` on the process runtime and on Docker (unkilled, killed
at the seed's point, killed at two points the second on the resumed
controller at a container point), the JavaScript double killed at the
seed's point and then right after its first result (a target whose result
was in and whose round was not settled), the reference study crashed from
outside (this test SIGKILLs its controller) and resumed with ``studymon run
--resume``, and a campaign of two trials.  Then:

* every field of every file of every folder is in one of the two lists
  (the inventory), and a field added to a real file is found out;
* every fact held twice agrees in those folders as its row says, and a copy
  changed in a real folder is found out;
* ``docs/evidence.md`` shows the table the module holds.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from studymon.engine.contract.folder import CAMPAIGN, JOURNAL, TRACE, TRIALS, EvidenceFolder, KillFolder
from studymon.engine.contract.killpoint import SEED, KillPoint
from studymon.engine.contract.spec import PYTHONS
from studymon.engine.evidence import heldtwice as ht
from studymon.engine.explore.campaign import Trial, matrix
from studymon.engine.io.clock import parse_rfc3339, rfc3339_ms
from studymon.engine.kill.protocol import seen_in_timeline
from tests.studies import FAST, REFSTUDY_TEMPLATE, ROOT, own_runtime_state, studymon

pytestmark = pytest.mark.slow

DOUBLE = ROOT / "tests" / "doubles" / "points_study.js"
DOCS = ROOT / "docs" / "evidence.md"
HERE = "engine/evidence/heldtwice.py"
SECOND = "container:create/diagnosis"  # the second point: the resumed controller's next run, as its container is made


# --- reading a folder ------------------------------------------------------------------------------------------


def load(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"))


def lines(path: Path) -> list[Any]:
    if not path.is_file():
        return []
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def maybe(path: Path) -> Any:
    return load(path) if path.is_file() else None


def epoch(text: str) -> float:
    return parse_rfc3339(text)


def event_key(e: dict[str, Any]) -> tuple[Any, ...]:
    return ((e.get("Actor") or {}).get("ID") or e.get("id"), e.get("Action") or e.get("status"), e.get("timeNano"))


def event_name(e: dict[str, Any]) -> str:
    return str(((e.get("Actor") or {}).get("Attributes") or {}).get("name") or "").lstrip("/")


def started_at(snap: dict[str, Any]) -> float | None:
    """A snapshot's StartedAt, or None before the container was started (Docker's zero time, or none)."""
    text = (snap.get("State") or {}).get("StartedAt")
    if not text:
        return None
    t = epoch(text)
    return t if t > 0 else None


@dataclass
class Kill:
    n: int
    folder: Path
    kill: dict[str, Any]
    at_kill: list[Any] | None
    snapshots: dict[str, dict[str, Any]]  # file name -> the snapshot
    live: list[dict[str, Any]]
    readback: list[dict[str, Any]]
    window: dict[str, Any] | None

    @property
    def targets(self) -> list[dict[str, Any]]:
        return list(self.kill["targets"])

    @property
    def ours(self) -> bool:
        """A kill of the console's (not an end it did not make)."""
        return self.kill["trigger"] in ("auto", "manual")


@dataclass
class Out:
    """An evidence folder, read whole (the runs are small)."""

    path: Path
    research: dict[str, Any]
    ledger: list[dict[str, Any]]
    timeline: list[dict[str, Any]]
    launches: list[dict[str, Any]]
    arms: list[dict[str, Any]]
    machine: list[dict[str, Any]]
    trace: list[dict[str, Any]] | None
    outcome: dict[str, Any] | None
    accounts: dict[str, Any] | None
    kill_report: dict[str, Any] | None
    report: dict[str, Any] | None
    kills: dict[int, Kill]

    @classmethod
    def read(cls, path: Path) -> Out:
        f = EvidenceFolder(path)
        kills = {}
        for k in f.kills():
            kills[k.number] = Kill(
                k.number,
                k.path,
                load(k.kill_json),
                maybe(k.at_kill),
                {name: load(k.file(name)) for name in KillFolder.SNAPSHOTS if k.file(name).is_file()},
                lines(k.live),
                lines(k.readback),
                maybe(k.window),
            )
        trace = f.file(EvidenceFolder.TRACE)
        return cls(
            path,
            load(f.research),
            lines(f.ledger),
            lines(f.timeline),
            lines(f.launches),
            lines(f.arms),
            lines(f.machine),
            lines(trace) if trace.is_file() else None,
            maybe(f.outcome),
            maybe(f.file(EvidenceFolder.ACCOUNTS)),
            maybe(f.file(EvidenceFolder.KILL_REPORT)),
            maybe(f.report),
            kills,
        )

    def __str__(self) -> str:
        return f"{self.path.parent.name}/{self.path.name}"

    @property
    def study(self) -> str:
        return str(self.research["study"])

    @property
    def prefix(self) -> str:
        return f"{self.research.get('containerPrefix', 'inforsi')}-{self.study}-"

    @property
    def by_seq(self) -> dict[int, dict[str, Any]]:
        return {r["seq"]: r for r in self.ledger}

    @property
    def seen(self) -> dict[int, float]:
        """seq -> when a console first saw it (timeline.jsonl)."""
        out: dict[int, float] = {}
        for line in self.timeline:
            out.setdefault(line["seq"], epoch(line["seenAt"]))
        return out

    def starts(self) -> list[dict[str, Any]]:
        return [line for line in self.launches if line["event"] == "start"]

    def end_of(self, pid: int, after: float = 0.0) -> dict[str, Any] | None:
        return next(
            (
                line
                for line in self.launches
                if line["event"] == "end" and line["pid"] == pid and epoch(line["at"]) >= after - ht.WRITTEN_MS
            ),
            None,
        )

    def events(self) -> list[dict[str, Any]]:
        """Every event of the study's containers that a recording of the folder holds, once each (by key): the read
        back is the runtime's whole window, other studies' events too."""
        found: dict[tuple[Any, ...], dict[str, Any]] = {}
        sources = [k.live + k.readback for k in self.kills.values()] + [self.trace or []]
        for source in sources:
            for e in source:
                labels = (e.get("Actor") or {}).get("Attributes") or {}
                if "gap" not in e and (
                    event_name(e).startswith(self.prefix) or labels.get("studymon.study") == self.study
                ):
                    found.setdefault(event_key(e), e)
        return list(found.values())

    def run_of(self, name: str) -> str | None:
        return name[len(self.prefix) :] if name.startswith(self.prefix) else None

    def runs(self) -> dict[str, dict[str, list[dict[str, Any]]]]:
        """run -> kind -> its records, from the whole ledger."""
        out: dict[str, dict[str, list[dict[str, Any]]]] = {}
        for r in self.ledger:
            run = r["content"].get("run")
            if isinstance(run, str) and r["kind"] != "diagnosisSettlement":
                out.setdefault(run, {}).setdefault(r["kind"], []).append(r)
        return out

    def heavy(self) -> list[dict[str, Any]]:
        return [line for line in self.machine if line["label"] != "sample"]

    def snapshots(self) -> Iterator[tuple[str, dict[str, Any]]]:
        """Every inspect the folder holds: (where, inspect)."""
        for k in self.kills.values():
            for file, snap in k.snapshots.items():
                for name, one in snap.items():
                    if one:
                        yield f"kills/{k.n}/{file} {name}", one
        for line in self.heavy():
            for one in line.get("containers") or []:
                yield f"{EvidenceFolder.MACHINE} {line['label']}", one


@dataclass
class Campaign:
    path: Path
    summary: dict[str, Any]
    journal: list[dict[str, Any]]
    template_copy: dict[str, Any]
    trace: Out
    trials: dict[int, Out]

    @property
    def last(self) -> dict[int, dict[str, Any]]:
        out: dict[int, dict[str, Any]] = {}
        for line in self.journal:
            out[line["n"]] = line
        return dict(sorted(out.items()))


@dataclass
class World:
    """Every folder the runs left: the evidence folders (a campaign's trace and trials among them) and the
    campaign."""

    outs: list[Out]
    campaign: Campaign
    templates: list[dict[str, Any]]

    @property
    def studies(self) -> list[Path]:
        """The evidence folders of the studies run here (not the campaign's)."""
        return [o.path for o in self.outs if not o.path.is_relative_to(self.campaign.path)]

    @property
    def template_keys(self) -> set[str]:
        return {k for t in self.templates for k in t}


# --- the runs ---------------------------------------------------------------------------------------------------


def _ref_template(tmp: Path, backend: str) -> Path:
    data = json.loads(REFSTUDY_TEMPLATE.read_text())
    data.update(FAST, backend=backend)
    path = tmp / f"ref-{backend}.json"
    path.write_text(json.dumps(data))
    return path


def _run(*args: str, cwd: Path, timeout: float = 600, status: tuple[int, ...] = (0,)) -> None:
    proc = studymon(*args, cwd=cwd, timeout=timeout)
    assert proc.returncode in status, proc.stdout[-4000:] + proc.stderr[-4000:]


def _fired(out: Path) -> list[str]:
    return [line["point"] for line in lines(out / EvidenceFolder.ARMS) if line["event"] == "fired"]


def _crash(tmp: Path, template: Path, sid: str) -> Path:
    """The reference study, its controller SIGKILLed by this test as its first diagnosis run starts, then resumed."""
    out = tmp / sid
    env = dict(os.environ, PYTHONPATH=str(ROOT), COLUMNS="200")
    argv = [sys.executable, "-m", "studymon.tui.cli", "run", "--headless", "--template", str(template), f"{sid}={out}"]
    first = subprocess.Popen(argv, cwd=tmp, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    deadline = time.monotonic() + 120
    killed = False
    while not killed and time.monotonic() < deadline and first.poll() is None:
        ledger = lines(EvidenceFolder(out).ledger) if EvidenceFolder(out).ledger.is_file() else []
        if ledger and ledger[-1]["kind"] == "runStarted":
            pid = [line["pid"] for line in lines(EvidenceFolder(out).launches) if line["event"] == "start"][-1]
            os.kill(pid, signal.SIGKILL)  # nobody the console knows of killed it
            killed = True
        time.sleep(0.01)
    output, _ = first.communicate(timeout=120)
    assert killed and first.returncode == 3, output[-4000:]
    # Its run ends while no console watches (2 s runs): the resumed console reads that stretch back.
    time.sleep(3)
    _run("run", "--headless", "--resume", f"{sid}={out}", cwd=tmp)
    return out


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory, docker_engine: None) -> World:  # noqa: ARG001 - Docker's there
    """The folders, made once: a minute and a half of real studies."""
    tmp = tmp_path_factory.mktemp("held")
    token = uuid.uuid4().hex[:6]  # a Docker engine is shared: ids of this module's own
    outs: list[Path] = []
    with own_runtime_state(tmp_path_factory):
        for backend in ("process", "docker"):
            template = _ref_template(tmp, backend)
            u, s, t = (f"{c}{backend[0]}{token}" for c in "ust")
            _run(
                "run", "--headless", "--trace", "--template", str(template),
                f"--kill={s}:{SEED}", f"--kill={t}:{SEED}", f"--kill={t}:{SECOND}",
                *(f"{sid}={tmp / sid}" for sid in (u, s, t)), cwd=tmp,
            )  # fmt: skip
            assert _fired(tmp / s) == [str(SEED)]
            assert _fired(tmp / t) == [str(SEED), SECOND], lines(tmp / t / EvidenceFolder.ARMS)
            outs += [tmp / u, tmp / s, tmp / t]
        double = tmp / "double.json"
        double.write_text(json.dumps({"command": ["node", str(DOUBLE)], "backend": "process", "pause": 0.2,
                                      "runSeconds": 1.5, "faults": {}}))  # fmt: skip
        h = f"h{token}"
        _run("run", "--headless", "--trace", "--template", str(double), f"--kill={h}:{SEED}",
             f"--kill={h}:after:runResult", f"{h}={tmp / h}", cwd=tmp)  # fmt: skip
        assert _fired(tmp / h) == [str(SEED), "after:runResult"]
        outs.append(tmp / h)
        ref = _ref_template(tmp, "process")
        outs.append(_crash(tmp, ref, f"c{token}"))
        camp = tmp / "campaign"
        # Its first two classes, right after the first record and a decision: the reference study writes each of
        # those with the next in one burst, so a trial may be missed (exit 3); a missed trial has its folder too.
        _run("explore", "--headless", "--exit-when-done", "--template", str(ref), "--max-trials", "2",
             "--workers", "1", f"x{token}={camp}", cwd=tmp, status=(0, 3))  # fmt: skip
    trials = {int(p.name): Out.read(p) for p in sorted((camp / TRIALS).iterdir())}
    assert sorted(trials) == [1, 2] and {t["state"] for t in lines(camp / JOURNAL)} <= {"planned", "done", "missed"}
    campaign = Campaign(
        camp,
        load(camp / CAMPAIGN),
        lines(camp / JOURNAL),
        load(camp / ht.TEMPLATE_COPY.removeprefix(ht.CAMPAIGN_ROOT)),
        Out.read(camp / TRACE),
        trials,
    )
    templates = [load(p) for p in (_ref_template(tmp, "process"), double)]
    return World([Out.read(p) for p in outs] + [campaign.trace, *trials.values()], campaign, templates)


# --- the inventory ---------------------------------------------------------------------------------------------


def _fields(value: Any, keys: tuple[str, ...] = ()) -> Iterator[tuple[tuple[str, ...], bool]]:
    """Every leaf of a JSON value: its keys, and whether it is empty (an empty object or list, or null)."""
    if isinstance(value, dict):
        if not value:
            yield keys, True
        for k, v in value.items():
            yield from _fields(v, (*keys, k))
    elif isinstance(value, list):
        if not value:
            yield keys, True
        for v in value:
            yield from _fields(v, (*keys, "[]"))
    else:
        yield keys, value is None


def _file_fields(path: Path) -> Iterator[tuple[tuple[str, ...], bool]]:
    if path.suffix == ".json":
        yield from _fields(load(path))
    elif path.suffix == ".jsonl":
        for line in lines(path):
            yield from _fields(line)
    else:
        yield (), False  # text: the file is one field


Seen = dict[tuple[str, tuple[str, ...], bool], Path]  # (file as the lists name it, keys, empty) -> where first seen


def _walk_out(out: Path, seen: Seen, unknown: list[str], prefix: str = "") -> None:
    for path in sorted(out.rglob("*")):
        rel = path.relative_to(out).as_posix()
        if path.is_dir() or rel.startswith(EvidenceFolder.STUDY + "/"):
            continue  # OUT/study is the study's own
        name = prefix + ht.file_pattern(rel)
        if name not in ht.files():
            unknown.append(f"{name} ({path}): a file neither list of {HERE} names; name it in engine/contract/folder.py, "
                           "and list its fields")  # fmt: skip
            continue
        for keys, empty in _file_fields(path):
            seen.setdefault((name, keys, empty), path)


def walk(roots: Iterable[Path], campaigns: Iterable[Path] = ()) -> tuple[Seen, list[str]]:
    """Every field of every file: evidence folders, and campaigns (their own files, their trace and trials)."""
    seen: Seen = {}
    unknown: list[str] = []
    for out in roots:
        _walk_out(out, seen, unknown)
    for camp in campaigns:
        for path in sorted(camp.iterdir()):
            if path.is_dir() and path.name == TRACE:
                _walk_out(path, seen, unknown)
            elif path.is_dir() and path.name == TRIALS:
                for trial in sorted(path.iterdir()):
                    _walk_out(trial, seen, unknown)
            else:
                _walk_out_file(path, seen, unknown)
    return seen, unknown


def _walk_out_file(path: Path, seen: Seen, unknown: list[str]) -> None:
    name = ht.campaign_file(path.name)
    if name not in ht.files():
        unknown.append(f"{name} ({path}): a file neither list of {HERE} names")
        return
    for keys, empty in _file_fields(path):
        seen.setdefault((name, keys, empty), path)


def unlisted(seen: Seen, template_keys: set[str]) -> list[str]:
    """The fields in neither list, each with where to add it."""
    out = []
    for (file, keys, empty), path in sorted(seen.items(), key=lambda item: (item[0][0], item[0][1])):
        found = ht.classify(file, keys, empty)
        catch_all = found.once is not None and found.once.path == "*" and not found.twice
        if file == ht.RESEARCH and catch_all and keys[:1] and keys[0] not in template_keys:
            found = ht.Found((), None)  # research.json's catch-all is the template's keys, not the console's
        if not found.known:
            out.append(
                f"{file}: {ht.spelled(keys) or '(the whole file)'} (seen in {path}) is in neither list of {HERE}: "
                "if it repeats a fact another file or field holds, add its place to that fact's row of HELD_TWICE "
                "(or a new row), else add it to HELD_ONCE with a few words on what it is"
            )
    return out


def test_every_field_of_every_file_the_console_writes_is_in_one_of_the_lists(world: World) -> None:
    seen, unknown = walk(world.studies, [world.campaign.path])
    assert unknown == []
    problems = unlisted(seen, world.template_keys)
    assert problems == [], "\n".join(problems)
    # And every field the list says is held once is met in the runs, unless it says when it is written.
    for once in ht.HELD_ONCE:
        met = any(f == once.file and ht.matches(ht.segments(once.path), k, e) for f, k, e in seen)
        assert met or once.rare, f"HELD_ONCE lists {once.file} {once.path}, which no folder holds: say when, or drop it"
    assert len(seen) > 500  # the runs wrote what they should: hundreds of distinct fields


def test_a_field_added_to_a_real_file_is_in_neither_list(world: World, tmp_path: Path) -> None:
    """What a writer that starts repeating a fact leaves: a field the lists do not know, named with where to add it."""
    base = next(o for o in world.outs if len(o.kills) == 2)
    out = tmp_path / "out"
    shutil.copytree(base.path, out)
    kill = out / "kills" / "2" / KillFolder.KILL
    data = load(kill)
    data["killSentAgain"] = data["killSentEpoch"]  # a fact twice, that no row knows
    kill.write_text(json.dumps(data, indent=2))
    timeline = out / EvidenceFolder.TIMELINE
    rows = lines(timeline)
    rows[3]["seenEpoch"] = epoch(rows[3]["seenAt"])
    timeline.write_text("".join(json.dumps(r) + "\n" for r in rows))
    (out / "kills" / "2" / "scratch.json").write_text("{}")
    seen, unknown = walk([out])
    problems = unlisted(seen, world.template_keys)
    assert sorted(p.split(" (seen in")[0] for p in problems) == [
        f"{ht.KILL}: killSentAgain",
        f"{EvidenceFolder.TIMELINE}: seenEpoch",
    ]
    assert all("add its place to that fact's row of HELD_TWICE" in p and HERE in p for p in problems)
    assert len(unknown) == 1 and unknown[0].startswith("kills/<n>/scratch.json"), unknown
    # The same walk of the untouched folder finds nothing.
    seen, unknown = walk([base.path])
    assert unlisted(seen, world.template_keys) == [] and unknown == []


# --- the copies agree ----------------------------------------------------------------------------------------------


@dataclass
class Compare:
    """The comparisons of one row: how many, and those that failed (with what)."""

    row: ht.Twice
    made: int = 0
    failed: list[str] = field(default_factory=list)

    def that(self, ok: bool, what: str) -> None:
        self.made += 1
        if not ok:
            self.failed.append(what)

    def agree(self, values: list[Any], what: str) -> None:
        """The copies agree as the row says (its kind and tolerance, from the module)."""
        self.that(ht.agree(self.row, values), f"{what}: {values}")

    def ordered(self, values: list[float], what: str) -> None:
        self.that(ht.agree(ht.Twice("", "", (), ht.ORDER, "", self.row.tolerance), values), f"{what}: {values}")

    def equal(self, a: Any, b: Any, what: str) -> None:
        self.that(ht.agree(ht.Twice("", "", (), ht.EQUAL, ""), [a, b]), f"{what}: {a!r} against {b!r}")


Checker = Callable[[World, Compare], None]
CHECKERS: dict[str, Checker] = {}


def checks(name: str) -> Callable[[Checker], Checker]:
    def register(fn: Checker) -> Checker:
        CHECKERS[name] = fn
        return fn

    return register


def _point(kill: dict[str, Any]) -> KillPoint | None:
    return KillPoint.parse(kill["point"]) if kill.get("point") else None


@checks("timeline-is-the-ledger")
def _(w: World, c: Compare) -> None:
    for o in w.outs:
        seqs = [line["seq"] for line in o.timeline]
        c.equal(seqs, [r["seq"] for r in o.ledger], f"{o}: the timeline's seqs")
        by_seq = o.by_seq
        for line in o.timeline:
            r = by_seq.get(line["seq"], {})
            c.equal([line["kind"], line["at"]], [r.get("kind"), r.get("at")], f"{o}: timeline seq {line['seq']}")


@checks("ledger-at-kill")
def _(w: World, c: Compare) -> None:
    for o in w.outs:
        for k in o.kills.values():
            upto = [r for r in o.ledger if r["seq"] <= k.kill["beforeKillSeq"]]
            c.equal(k.at_kill, upto, f"{o} kill {k.n}: {KillFolder.AT_KILL}")


@checks("before-kill-seq")
def _(w: World, c: Compare) -> None:
    for o in w.outs:
        entries = {e["kill"]: e for e in (o.kill_report or {}).get("kills", [])}
        for k in o.kills.values():
            last = k.at_kill[-1]["seq"] if k.at_kill else 0
            c.equal(k.kill["beforeKillSeq"], last, f"{o} kill {k.n}: beforeKillSeq and the ledger at the kill")
            c.equal(entries[k.n]["beforeKillSeq"], last, f"{o} kill {k.n}: {EvidenceFolder.KILL_REPORT}")


@checks("trigger-record")
def _(w: World, c: Compare) -> None:
    for o in w.outs:
        for k in o.kills.values():
            point, seq = _point(k.kill), k.kill["triggerSeq"]
            if point is None or not point.on_record:
                c.equal([seq, k.kill["triggerAt"]], [None, None], f"{o} kill {k.n}: no record triggered it")
                continue
            r = o.by_seq[seq]
            purpose = next((p["content"].get("purpose") for p in o.ledger if p["kind"] == "runPlanned"
                            and p["content"].get("run") == r["content"].get("run")), None)  # fmt: skip
            c.equal(k.kill["triggerAt"], r["at"], f"{o} kill {k.n}: triggerAt")
            c.that(point.matches(r["kind"], purpose), f"{o} kill {k.n}: seq {seq} is not a {point} record")


@checks("accounts-are-the-ledger")
def _(w: World, c: Compare) -> None:
    for o in w.outs:
        if o.accounts is None:
            continue
        acc = o.accounts
        charges = [r for r in o.ledger if r["kind"] == "charge"]
        halts = [r for r in o.ledger if r["kind"] == "halt"]
        budget = next(r["content"]["budget"] for r in o.ledger if r["kind"] == "studyOpen")
        c.equal(
            [acc["budget"], acc["balance"], acc["records"], acc["lastSeq"], acc["halts"], acc["halt"]],
            [budget, charges[-1]["content"]["balance"] if charges else budget, len(o.ledger), o.ledger[-1]["seq"],
             len(halts), halts[-1] if halts else None],
            f"{o}: {EvidenceFolder.ACCOUNTS}'s totals",
        )  # fmt: skip
        c.that(acc["charged"] == sum(r["content"]["amount"] for r in charges), f"{o}: charged {acc['charged']}")
        exports = [r for r in o.ledger if r["kind"] == "export"]
        errors = [r for r in o.ledger if r["kind"] == "serviceError"]
        c.equal([acc["exports"], acc["exportCount"], acc["serviceErrors"], acc["serviceErrorCount"]],
                [exports, len(exports), errors, len(errors)], f"{o}: exports and service errors")  # fmt: skip
        runs = o.runs()
        mine = {a["run"]: a for a in acc["runs"]}
        c.equal(sorted(mine), sorted(runs), f"{o}: the runs accounted")
        for run, kinds in runs.items():
            plan = kinds["runPlanned"][0]["content"]
            starts = kinds.get("runStarted", [])
            expected = {
                "run": run,
                "purpose": plan["purpose"],
                "cell": plan["object"],
                "round": plan["round"],
                "container": starts[-1]["content"]["container"] if starts else None,
                "plans": [r["seq"] for r in kinds["runPlanned"]],
                "charges": [{"seq": r["seq"], "amount": r["content"]["amount"], "balance": r["content"]["balance"]}
                            for r in kinds.get("charge", [])],
                "starts": [r["seq"] for r in starts],
                "results": [{"seq": r["seq"], "exitCode": r["content"]["exitCode"]}
                            for r in kinds.get("runResult", [])],
            }  # fmt: skip
            c.equal(mine.get(run), expected, f"{o}: run {run}'s account")


@checks("result-seen")
def _(w: World, c: Compare) -> None:
    for o in w.outs:
        seen = o.seen
        for k in o.kills.values():
            for run, entry in ((k.window or {}).get("targets") or {}).items():
                seq = entry["resultSeq"]
                c.that(seq is not None, f"{o} kill {k.n}: {run} has no resultSeq")
                if seq is not None:
                    c.agree([entry["resultSeenEpoch"], seen[seq]], f"{o} kill {k.n}: {run}'s result (seq {seq}) seen")


@checks("trigger-seen")
def _(w: World, c: Compare) -> None:
    for o in w.outs:
        trace = {event_key(e): e for e in o.trace or [] if "gap" not in e}
        for k in o.kills.values():
            copies = [k.kill["triggerSeenEpoch"], epoch(k.kill["triggerSeenAt"])]
            if k.kill["triggerSeq"] is not None:
                copies.append(o.seen[k.kill["triggerSeq"]])
            elif k.kill["triggerEvent"] is not None and o.trace is not None:
                copies.append(epoch(trace[event_key(k.kill["triggerEvent"])]["seenAt"]))
            c.agree(copies, f"{o} kill {k.n}: the moment seen")


@checks("window-closed")
def _(w: World, c: Compare) -> None:
    for o in w.outs:
        for k in o.kills.values():
            if k.window is None:
                continue
            until = k.window["untilEpoch"]
            c.equal(abs(epoch(k.window["until"]) - until) <= ht.WRITTEN_NS, True, f"{o} kill {k.n}: until as text")
            for run, entry in k.window["targets"].items():
                if entry["resultSeenEpoch"] is not None:
                    c.agree([entry["resultSeenEpoch"], until], f"{o} kill {k.n}: {run}'s story ended in the window")


@checks("seen-around-the-kill")
def _(w: World, c: Compare) -> None:
    for o in w.outs:
        seen = o.seen
        for k in o.kills.values():
            sent = k.kill["killSentEpoch"]
            resumed = next(epoch(s["at"]) for s in o.starts() if epoch(s["at"]) >= sent - ht.WRITTEN_MS)
            for seq, t in seen.items():
                if seq <= k.kill["beforeKillSeq"]:
                    c.ordered([t, sent], f"{o} kill {k.n}: seq {seq} seen by the kill")
                else:
                    c.ordered([resumed, t], f"{o} kill {k.n}: seq {seq} seen after the resume")


@checks("kill-sent")
def _(w: World, c: Compare) -> None:
    for o in w.outs:
        for k in o.kills.values():
            c.equal(k.kill["at"], k.kill["killSentAt"], f"{o} kill {k.n}: at and killSentAt")
            c.agree([k.kill["killSentEpoch"], epoch(k.kill["at"])], f"{o} kill {k.n}: at and killSentEpoch")


@checks("frozen")
def _(w: World, c: Compare) -> None:
    for o in w.outs:
        for k in o.kills.values():
            c.agree([k.kill["frozenEpoch"], epoch(k.kill["frozenAt"])], f"{o} kill {k.n}: frozenAt")
            ms = round((k.kill["killSentEpoch"] - k.kill["frozenEpoch"]) * 1000, 3)
            c.equal(k.kill["frozenMs"], ms, f"{o} kill {k.n}: frozenMs")


@checks("since")
def _(w: World, c: Compare) -> None:
    for o in w.outs:
        for k in o.kills.values():
            copies = [k.kill["sinceEpoch"], epoch(k.kill["since"])]
            if k.window is not None:
                copies += [k.window["sinceEpoch"], epoch(k.window["since"])]
            c.agree(copies, f"{o} kill {k.n}: since")


@checks("kill-order")
def _(w: World, c: Compare) -> None:
    for o in w.outs:
        for k in o.kills.values():
            names = ("triggerSeenEpoch", "sinceEpoch", "frozenEpoch", "killSentEpoch", "killReturnedEpoch")
            c.agree([k.kill[n] for n in names], f"{o} kill {k.n} ({k.kill['trigger']}): {', '.join(names)}")
            if not k.ours:
                c.equal(len({k.kill[n] for n in names[2:]}), 1, f"{o} kill {k.n}: one moment for the end")


@checks("kill-then-end")
def _(w: World, c: Compare) -> None:
    for o in w.outs:
        after_kill = [line for line in o.heavy() if line["label"] == "after-kill"]
        ours = [k for k in o.kills.values() if k.ours]
        for k in o.kills.values():
            sent = k.kill["killSentEpoch"]
            end = o.end_of(k.kill["pid"], 0.0 if not k.ours else sent)
            assert end is not None, f"{o} kill {k.n}: no end line of pid {k.kill['pid']}"
            resumed = next(epoch(s["at"]) for s in o.starts() if epoch(s["at"]) >= sent - ht.WRITTEN_MS)
            if k.ours:
                snap = epoch(after_kill[ours.index(k)]["at"])
                c.agree([sent, epoch(end["at"]), snap, resumed], f"{o} kill {k.n}: SIGKILL, end, snapshot, resume")
            else:
                c.agree([epoch(end["at"]), sent, resumed], f"{o} kill {k.n}: the end, then kill.json, then resume")


@checks("point-fired")
def _(w: World, c: Compare) -> None:
    for o in w.outs:
        fired = [line for line in o.arms if line["event"] == "fired"]
        c.equal(sorted(line["kill"] for line in fired), sorted(k.n for k in o.kills.values() if k.kill["trigger"] ==
                "auto"), f"{o}: a fired line for each auto kill")  # fmt: skip
        for line in fired:
            k = o.kills[line["kill"]].kill
            c.equal([k["trigger"], k["point"]], ["auto", line["point"]], f"{o} kill {line['kill']}: the point")
            if k["triggerSeq"] is not None:
                run = o.by_seq[k["triggerSeq"]]["content"].get("run")
            else:
                run = o.run_of(event_name(k["triggerEvent"]))
            c.equal(line["run"], run, f"{o} kill {line['kill']}: the run of its moment")
            c.ordered([k["killSentEpoch"], epoch(line["at"])], f"{o} kill {line['kill']}: fired after SIGKILL")


@checks("point-counted-from")
def _(w: World, c: Compare) -> None:
    for o in w.outs:
        before = 0
        for line in o.arms:
            if line["event"] in ("fired", "missed"):
                c.equal(line["fromSeq"], before, f"{o}: {line['event']} {line['point']}'s fromSeq")
            if line["event"] == "fired":
                before = o.kills[line["kill"]].kill["beforeKillSeq"]


@checks("trigger-event")
def _(w: World, c: Compare) -> None:
    for o in w.outs:
        trace = {event_key(e): e for e in o.trace or [] if "gap" not in e}
        for k in o.kills.values():
            event = k.kill["triggerEvent"]
            if event is None:
                continue
            point = _point(k.kill)
            c.equal(event.get("Action"), point.what if point else None, f"{o} kill {k.n}: the event's action")
            line = {key: v for key, v in trace[event_key(event)].items() if key != "seenAt"}
            c.equal(event, line, f"{o} kill {k.n}: triggerEvent and the trace's line")


@checks("container-name")
def _(w: World, c: Compare) -> None:
    for o in w.outs:
        for k in o.kills.values():
            c.equal(k.kill["prefix"], o.prefix, f"{o} kill {k.n}: prefix")
            for t in k.targets:
                if t["container"] is not None:
                    c.equal(t["container"], o.prefix + t["run"], f"{o} kill {k.n}: {t['run']}'s container")
            for file, snap in k.snapshots.items():
                for name, one in snap.items():
                    if one:
                        c.equal(one["Name"].lstrip("/"), name, f"{o} kill {k.n}: {file} {name}'s Name")
        for where, one in o.snapshots():
            c.that(one["Name"].lstrip("/").startswith(o.prefix), f"{o}: {where} {one['Name']} is not in the stem")
        for e in o.events():
            c.that(event_name(e).startswith(o.prefix), f"{o}: an event of {event_name(e)}")
        for r in o.ledger:
            if r["kind"] == "runStarted":
                c.equal(r["content"]["container"], o.prefix + r["content"]["run"], f"{o}: seq {r['seq']}")
        for a in (o.accounts or {}).get("runs", []):
            c.that(a["container"] in (None, o.prefix + a["run"]), f"{o}: {a['run']}'s account names {a['container']}")


@checks("container-labels")
def _(w: World, c: Compare) -> None:
    for o in w.outs:
        found = [(where, (one.get("Config") or {}).get("Labels") or {}, one["Name"].lstrip("/"))
                 for where, one in o.snapshots()]  # fmt: skip
        found += [(f"event {event_key(e)}", e["Actor"]["Attributes"], event_name(e)) for e in o.events()]
        for where, labels, name in found:
            if "studymon.run" in labels or "studymon.study" in labels:
                c.equal([labels.get("studymon.run"), labels.get("studymon.study")], [o.run_of(name), o.study],
                        f"{o}: {where}'s labels")  # fmt: skip


@checks("container-id")
def _(w: World, c: Compare) -> None:
    for o in w.outs:
        # A container made and removed before it started did no work (a run charged, not started, at a kill: the
        # resume makes it again): the Ids of one name that ever started are one.
        started = {one["Id"] for _where, one in o.snapshots() if started_at(one) is not None}
        started |= {e["Actor"]["ID"] for e in o.events() if e["Action"] == "start"}
        ids: dict[str, set[str]] = {}
        for _where, one in o.snapshots():
            if one["Id"] in started:
                ids.setdefault(one["Name"].lstrip("/"), set()).add(one["Id"])
        for e in o.events():
            if e["Actor"]["ID"] in started:
                ids.setdefault(event_name(e), set()).add(e["Actor"]["ID"])
        for entry in (o.kill_report or {}).get("kills", []):
            for t in entry["targets"]:
                for die in ((t.get("events") or {}).get("dies")) or []:
                    ids.setdefault(t["container"], set()).add(die["Id"])
        for name, found in ids.items():
            c.equal(len(found), 1, f"{o}: the Ids of {name} ({sorted(found)})")


@checks("container-started")
def _(w: World, c: Compare) -> None:
    for o in w.outs:
        starts: dict[str, set[float]] = {}
        for where, one in o.snapshots():
            t = started_at(one)
            if t is not None:
                starts.setdefault(one["Id"], set()).add(t)
            state = one["State"]
            c.equal(state["Running"], state["Status"] == "running", f"{o}: {where}: Running and Status")
        for e in o.events():
            if e["Action"] == "start" and e["Actor"]["ID"] in starts:
                starts[e["Actor"]["ID"]].add(int(e["timeNano"]) / 1e9)
        for cid, found in starts.items():
            c.agree(sorted(found), f"{o}: the starts of {cid[:12]}")


@checks("container-exit")
def _(w: World, c: Compare) -> None:
    for o in w.outs:
        runs = o.runs()
        dies: dict[str, list[dict[str, Any]]] = {}
        for e in o.events():
            if e["Action"] == "die":
                dies.setdefault(e["Actor"]["ID"], []).append(e)
        for cid, found in dies.items():
            c.equal(len(found), 1, f"{o}: the dies of {cid[:12]}")
            e = found[0]
            results = runs.get(o.run_of(event_name(e)) or "", {}).get("runResult", [])
            code = int(e["Actor"]["Attributes"]["exitCode"])
            c.equal([code], [r["content"]["exitCode"] for r in results], f"{o}: {event_name(e)}'s exit")
        for where, one in o.snapshots():
            state = one["State"]
            if state["Status"] == "exited" and one["Id"] in dies:
                die = dies[one["Id"]][0]
                c.equal(state["ExitCode"], int(die["Actor"]["Attributes"]["exitCode"]), f"{o}: {where}'s ExitCode")
                c.agree([epoch(state["FinishedAt"]), int(die["timeNano"]) / 1e9], f"{o}: {where}'s FinishedAt")
        for a in (o.accounts or {}).get("runs", []):
            for r in a["results"]:
                c.equal(r["exitCode"], o.by_seq[r["seq"]]["content"]["exitCode"], f"{o}: {a['run']}'s account")
        for entry in (o.kill_report or {}).get("kills", []):
            for t in entry["targets"]:
                for d in ((t.get("events") or {}).get("dies")) or []:
                    e = dies[d["Id"]][0]
                    c.equal([d["exitCode"], d["timeNano"]], [int(e["Actor"]["Attributes"]["exitCode"]),
                            int(e["timeNano"])], f"{o}: {EvidenceFolder.KILL_REPORT}'s die of {t['run']}")  # fmt: skip


@checks("recordings-agree")
def _(w: World, c: Compare) -> None:
    for o in w.outs:
        trace = {event_key(e): e for e in o.trace or [] if "gap" not in e}
        for k in o.kills.values():
            back = {event_key(e): e for e in k.readback}
            for e in k.live:
                if "gap" in e:
                    continue
                bare = {key: v for key, v in e.items() if key not in ("seenAt", "readBack")}
                if event_key(e) in back:
                    c.equal(bare, back[event_key(e)], f"{o} kill {k.n}: live and read back {event_key(e)}")
                if o.trace is not None and not e.get("readBack"):
                    c.equal(e, trace.get(event_key(e)), f"{o} kill {k.n}: live and traced {event_key(e)}")


@checks("event-own-copies")
def _(w: World, c: Compare) -> None:
    for o in w.outs:
        for e in o.events():
            attributes = e["Actor"]["Attributes"]
            c.equal(
                [e.get("status"), e.get("id"), e.get("from"), e.get("time")],
                [e["Action"], e["Actor"]["ID"], attributes.get("image"), int(e["timeNano"]) // 10**9],
                f"{o}: {event_key(e)}'s own copies",
            )


@checks("read-back-in-window")
def _(w: World, c: Compare) -> None:
    for o in w.outs:
        for k in o.kills.values():
            if k.window is None:
                continue
            for e in k.readback:
                t = int(e["timeNano"]) / 1e9
                c.agree([k.window["sinceEpoch"], t, k.window["untilEpoch"]], f"{o} kill {k.n}: {event_key(e)}")


@checks("final-ending")
def _(w: World, c: Compare) -> None:
    for o in w.outs:
        final = o.starts()[-1]
        end = o.end_of(final["pid"])
        assert end is not None and o.outcome is not None and o.report is not None, o
        c.equal(o.outcome, {"code": end["code"], "signal": end["signal"]}, f"{o}: outcome.json")
        c.equal(o.report["ending"], o.outcome, f"{o}: report.json's ending")
        c.equal(o.report["finished"], end["code"] == 0, f"{o}: report.json's finished")


@checks("killed-controller")
def _(w: World, c: Compare) -> None:
    for o in w.outs:
        for k in o.kills.values():
            sent = k.kill["killSentEpoch"]
            running = [s for s in o.starts() if epoch(s["at"]) <= sent]
            c.equal(k.kill["pid"], running[-1]["pid"], f"{o} kill {k.n}: the controller running")
            end = o.end_of(k.kill["pid"], epoch(running[-1]["at"]))
            assert end is not None
            if k.ours:
                c.equal([k.kill["signal"], k.kill["signalled"], end["signal"], end["code"]],
                        ["SIGKILL", True, "SIGKILL", None], f"{o} kill {k.n}: SIGKILL")  # fmt: skip
            else:
                c.equal([k.kill["signal"], k.kill["signalled"], k.kill["trigger"]],
                        [None, False, "stop" if end["code"] == 130 else "crash"], f"{o} kill {k.n}: {end}")  # fmt: skip


@checks("controller-in-snapshots")
def _(w: World, c: Compare) -> None:
    for o in w.outs:
        for s in o.starts():
            end = o.end_of(s["pid"], epoch(s["at"]))
            life = (epoch(s["at"]), epoch(end["at"]) if end else float("inf"))
            for snap in o.heavy():
                at = epoch(snap["at"])
                present = any(p["pid"] == s["pid"] and p["started"] == s["startTime"] for p in snap["processes"])
                inside = life[0] - ht.WRITTEN_MS <= at <= life[1] + ht.WRITTEN_MS
                c.that(not present or inside, f"{o}: pid {s['pid']} in the {snap['label']} snapshot at {snap['at']}")
                c.that(present or not life[0] + 1 < at < life[1] - 1, f"{o}: pid {s['pid']} not in {snap['label']}")


@checks("snapshot-per-launch")
def _(w: World, c: Compare) -> None:
    for o in w.outs:
        heavy = o.heavy()
        launching = [s for s in heavy if s["label"] in ("start", "resume")]
        starts = o.starts()
        c.equal([s["label"] for s in launching], ["resume" if s["resume"] else "start" for s in starts],
                f"{o}: a start or resume snapshot per start")  # fmt: skip
        for snap, start in zip(launching, starts, strict=False):
            c.ordered([epoch(snap["at"]), epoch(start["at"])], f"{o}: the {snap['label']} snapshot before pid "
                      f"{start['pid']}")  # fmt: skip
        c.equal(sum(s["label"] == "after-kill" for s in heavy), sum(k.ours for k in o.kills.values()),
                f"{o}: an after-kill snapshot per kill")  # fmt: skip
        ends = [s for s in heavy if s["label"] == "end"]
        c.equal(len(ends), 1 if o.outcome is not None else 0, f"{o}: the end snapshot")
        final = o.end_of(starts[-1]["pid"])
        if ends and final is not None:
            c.ordered([epoch(final["at"]), epoch(ends[0]["at"])], f"{o}: the end snapshot after the end")


@checks("launch-argv")
def _(w: World, c: Compare) -> None:
    for o in w.outs:
        command = list(o.research["command"])
        # Where OUT was when the controllers ran (a campaign's trial ran in its worker's folder, then was shipped).
        ran = Path(o.starts()[0]["argv"][len(command) + 1]).parent
        c.that(ran == o.path or o.path.is_relative_to(w.campaign.path), f"{o}: ran in {ran}")
        for s in o.starts():
            argv = list(s["argv"])
            if command[0] in PYTHONS:
                command[0] = argv[0]  # the console's own interpreter runs it
            tail = ["--config", str(ran / EvidenceFolder.RESEARCH), "--dir", str(ran / EvidenceFolder.STUDY)]
            c.equal(argv, command + tail + (["--resume"] if s["resume"] else []), f"{o}: pid {s['pid']}'s argv")


def _expected_targets(o: Out, k: Kill) -> dict[str, dict[str, Any]]:
    """What the ledger at the kill (and, for a run not started by it, its container) says the targets are."""
    assert k.at_kill is not None
    runs: dict[str, dict[str, list[dict[str, Any]]]] = {}
    settled = set()
    for r in k.at_kill:
        run = r["content"].get("run")
        if r["kind"] == "diagnosisSettlement":
            settled.add(r["content"]["round"])
        elif isinstance(run, str):
            runs.setdefault(run, {}).setdefault(r["kind"], []).append(r)
    before = k.snapshots.get(KillFolder.BEFORE, {})
    out = {}
    for run, kinds in runs.items():
        plan = kinds["runPlanned"][0]
        start = kinds.get("runStarted", [None])[-1]
        base = {"run": run, "cell": plan["content"]["object"], "round": plan["content"]["round"],
                "planSeq": plan["seq"], "startSeq": start["seq"] if start else None,
                "container": start["content"]["container"] if start else None}  # fmt: skip
        if start and "runResult" not in kinds:
            out[run] = {**base, "class": "inFlight"}
        elif start and plan["content"]["purpose"] == "diagnosis" and plan["content"]["round"] not in settled:
            out[run] = {**base, "class": "unsettled"}
        elif not start and "runResult" not in kinds:
            snap = before.get(o.prefix + run)
            if snap and started_at(snap) is not None:
                out[run] = {**base, "class": "unrecorded", "container": o.prefix + run}
            elif "charge" in kinds:
                out[run] = {**base, "class": "charged"}
    return out


@checks("targets-from-ledger")
def _(w: World, c: Compare) -> None:
    for o in w.outs:
        for k in o.kills.values():
            c.equal({t["run"]: t for t in k.targets}, _expected_targets(o, k), f"{o} kill {k.n}: the targets")


def _story_end(o: Out, target: dict[str, Any]) -> int | None:
    if target["class"] == "unsettled":
        return next((r["seq"] for r in o.ledger if r["kind"] == "diagnosisSettlement"
                     and r["content"]["round"] == target["round"]), None)  # fmt: skip
    return next((r["seq"] for r in o.ledger if r["kind"] == "runResult" and r["content"]["run"] == target["run"]), None)


@checks("targets-in-window")
def _(w: World, c: Compare) -> None:
    for o in w.outs:
        entries = {e["kill"]: e for e in (o.kill_report or {}).get("kills", [])}
        for k in o.kills.values():
            window = (k.window or {}).get("targets", {})
            c.equal(sorted(window), sorted(t["run"] for t in k.targets), f"{o} kill {k.n}: the window's targets")
            for t in k.targets:
                seq = (window.get(t["run"]) or {}).get("resultSeq")
                c.equal(seq, _story_end(o, t), f"{o} kill {k.n}: {t['run']}'s resultSeq")
            reported = [[t["run"], t["container"], t["resultSeq"]] for t in entries[k.n]["targets"]]
            c.equal(reported, [[t["run"], t["container"], window[t["run"]]["resultSeq"]] for t in k.targets],
                    f"{o} kill {k.n}: {EvidenceFolder.KILL_REPORT}'s targets")  # fmt: skip


@checks("targets-snapshotted")
def _(w: World, c: Compare) -> None:
    for o in w.outs:
        for k in o.kills.values():
            names = sorted(t["container"] for t in k.targets if t["container"])
            for file in KillFolder.SNAPSHOTS:
                c.equal(sorted(k.snapshots[file]), names, f"{o} kill {k.n}: {file}'s containers")


@checks("restart-gap")
def _(w: World, c: Compare) -> None:
    for o in w.outs:
        for k in o.kills.values():
            gaps = [e["gap"] for e in k.live if "gap" in e]
            for line in lines(k.folder / KillFolder.RESTARTS):
                stretch = {"from": line["from"], "to": line["to"]}
                c.that(stretch in gaps, f"{o} kill {k.n}: the restart {stretch} is no gap of the live recording")


@checks("trial-identity")
def _(w: World, c: Compare) -> None:
    camp = w.campaign
    summary = {t["n"]: t for t in camp.summary["trials"]}
    for n, t in camp.last.items():
        expected = [f"{camp.summary['study']}-{n}", f"{TRIALS}/{n}"]
        c.equal([t["id"], t["out"]], expected, f"trial {n} in the journal")
        c.equal([summary[n]["id"], summary[n]["out"]], expected, f"trial {n} in {CAMPAIGN}")
        c.equal(camp.trials[n].study, t["id"], f"trial {n}'s research.json")


@checks("trial-points")
def _(w: World, c: Compare) -> None:
    camp = w.campaign
    summary = {t["n"]: t for t in camp.summary["trials"]}
    for n, t in camp.last.items():
        armed = [line["point"] for line in camp.trials[n].arms if line["event"] == "arm"]
        c.equal(t["points"], armed, f"trial {n}'s points and arms.jsonl")
        c.equal(summary[n]["points"], armed, f"trial {n}'s points in {CAMPAIGN}")


@checks("trial-class")
def _(w: World, c: Compare) -> None:
    camp = w.campaign
    points = {p["point"]: p["class"] for p in camp.summary["points"]}
    for n, t in camp.last.items():
        c.equal([t["cls"], t["class"]], [points[t["points"][0]]] * 2, f"trial {n}'s class")
    for entry in camp.summary["trials"]:
        c.equal(entry["cls"], entry["class"], f"trial {entry['n']}'s class in {CAMPAIGN}")
    for cls in camp.summary["classes"]:
        c.equal(cls["candidates"], [p for p, name in points.items() if name == cls["name"]], f"class {cls['name']}")


def _overall(oks: list[bool | None]) -> bool | None:
    return False if False in oks else None if None in oks else True


@checks("trial-verdict")
def _(w: World, c: Compare) -> None:
    camp = w.campaign
    for n, t in camp.last.items():
        report = camp.trials[n].report
        assert report is not None, f"trial {n} has no report.json"
        checks_ = report["checks"]
        ok = _overall([check["ok"] for check in checks_])
        c.equal(t["exit"], {True: 0, False: 1, None: 3}[ok], f"trial {n}'s exit status")
        fired = [line["event"] for line in camp.trials[n].arms if line["event"] in ("fired", "missed")]
        c.equal(t["state"], "done" if fired == ["fired"] else "missed", f"trial {n}'s state and its arms.jsonl")
        if t["state"] != "done":
            c.equal([t["ok"], t["failed"], t["unknown"], t["checks"]], [None, [], [], {}], f"trial {n}: no verdict")
            continue
        by_name: dict[str, list[bool | None]] = {}
        for check in checks_:
            by_name.setdefault(check["name"], []).append(check["ok"])
        expected = {
            "ok": ok,
            "failed": [f"{x['scope']} · {x['name']}" for x in checks_ if x["ok"] is False],
            "unknown": [f"{x['scope']} · {x['name']}" for x in checks_ if x["ok"] is None],
            "checks": {name: _overall(oks) for name, oks in by_name.items()},
        }
        c.equal({key: t[key] for key in expected}, expected, f"trial {n}'s verdict")


@checks("campaign-is-the-journal")
def _(w: World, c: Compare) -> None:
    camp = w.campaign
    last = camp.last
    c.equal(camp.summary["trials"], list(last.values()), f"{CAMPAIGN}'s trials and {JOURNAL}")
    c.equal(camp.summary["matrix"], matrix({n: Trial.from_json(t) for n, t in last.items()}), f"{CAMPAIGN}'s matrix")


@checks("campaign-template")
def _(w: World, c: Compare) -> None:
    camp = w.campaign
    template = camp.summary["template"]
    c.equal(camp.template_copy, template, f"{ht.TEMPLATE_COPY} and {CAMPAIGN}'s template")
    for o in [camp.trace, *camp.trials.values()]:
        research = {k: v for k, v in o.research.items() if k not in ("study", "backend")}
        c.equal(research, {k: v for k, v in template.items() if k != "backend"}, f"{o}: research.json")
        c.that(template.get("backend", "auto") in ("auto", o.research["backend"]), f"{o}: the backend")


@checks("checks-in-reports")
def _(w: World, c: Compare) -> None:
    for o in w.outs:
        if o.report is None:
            continue
        got = {(x["scope"], x["name"]): x for x in o.report["checks"]}
        c.equal(o.report["ok"], _overall([x["ok"] for x in o.report["checks"]]), f"{o}: report.json's ok")
        for name, ok in (o.accounts or {}).get("checks", {}).items():
            c.equal(ok, got[("study", name)]["ok"], f"{o}: {EvidenceFolder.ACCOUNTS}'s {name}")
        for entry in (o.kill_report or {}).get("kills", []):
            scopes = [(f"kill {entry['kill']}", entry)]
            scopes += [(f"kill {entry['kill']} · {t['run']}", t) for t in entry["targets"]]
            for scope, part in scopes:
                for name, ok in part["checks"].items():
                    c.equal([ok, part["details"][name]], [got[(scope, name)]["ok"], got[(scope, name)]["detail"]],
                            f"{o}: {EvidenceFolder.KILL_REPORT}'s {scope} {name}")  # fmt: skip


@checks("kill-report-is-the-folder")
def _(w: World, c: Compare) -> None:
    for o in w.outs:
        if o.report is None:
            continue
        c.equal(o.report["study"], o.study, f"{o}: report.json's study")
        if o.kill_report is None:
            c.equal(o.kills, {}, f"{o}: no kill-report.json, no kill")
            continue
        c.equal(o.kill_report["study"], o.study, f"{o}: kill-report.json's study")
        entries = {e["kill"]: e for e in o.kill_report["kills"]}
        c.equal(sorted(entries), sorted(o.kills), f"{o}: an entry per kill folder")
        dies = {(e["Actor"]["ID"], int(e["timeNano"])): e for e in o.events() if e["Action"] == "die"}
        for n, k in o.kills.items():
            c.equal([entries[n]["trigger"], entries[n]["windowOpen"]], [k.kill["trigger"], k.window is None],
                    f"{o} kill {n}: its entry")  # fmt: skip
            for t in entries[n]["targets"]:
                for d in (t.get("events") or {}).get("dies", []):
                    c.that((d["Id"], d["timeNano"]) in dies, f"{o} kill {n}: {t['run']}'s die is not recorded")


def test_every_row_has_its_comparison_and_every_fact_of_the_contract_its_rows() -> None:
    assert sorted(CHECKERS) == sorted(row.name for row in ht.HELD_TWICE)
    assert len({row.name for row in ht.HELD_TWICE}) == len(ht.HELD_TWICE)
    assert {row.fact for row in ht.HELD_TWICE} == {*ht.FACTS, ht.VERDICT}
    for row in ht.HELD_TWICE:
        assert row.agree in (ht.EQUAL, ht.WITHIN, ht.ORDER), row.name
        assert (row.agree == ht.EQUAL) or row.tolerance_name, f"{row.name}: a tolerance of a name"
        if row.tolerance_name:
            assert getattr(ht, row.tolerance_name) == row.tolerance, row.name
        assert len(row.places) >= 2, row.name
    twice = {(p.file, p.path) for row in ht.HELD_TWICE for p in row.places}
    assert [(o.file, o.path) for o in ht.HELD_ONCE if (o.file, o.path) in twice] == []


def test_the_lists_name_the_files_of_folder_py_and_every_file_it_names() -> None:
    def constants(cls: type) -> set[str]:
        return {v for k, v in vars(cls).items() if k.isupper() and isinstance(v, str)}

    named = (constants(EvidenceFolder) - {EvidenceFolder.STUDY, EvidenceFolder.KILLS}) | {
        ht.kill_file(name) for name in constants(KillFolder)
    }
    campaign = {ht.campaign_file(n) for n in (CAMPAIGN, JOURNAL)} | {ht.TEMPLATE_COPY}
    campaign |= {ht.campaign_file(f"{TRACE}/{EvidenceFolder.RESEARCH}")}
    campaign |= {ht.trial_file(n) for n in constants(EvidenceFolder)}
    assert ht.files() - named - campaign == set()
    assert named - ht.files() == set()  # every file of the folder has its fields listed


def test_every_fact_held_twice_agrees_in_real_folders(world: World) -> None:
    failed = []
    for row in ht.HELD_TWICE:
        if row.rare:
            continue
        c = Compare(row)
        CHECKERS[row.name](world, c)
        assert c.made > 0, f"{row.name}: no folder of the runs holds the fact twice"
        failed += [f"{row.name} ({row.fact}): {what}" for what in c.failed[:5]]
    assert failed == [], "\n".join(failed)


def _copy_of(w: World, tmp: Path, pick: Callable[[Out], bool]) -> Out:
    base = next(o for o in w.outs if pick(o))
    shutil.copytree(base.path, tmp / base.path.name)
    return Out.read(tmp / base.path.name)


def _compare(name: str, outs: list[Out], campaign: Campaign) -> list[str]:
    c = Compare(next(row for row in ht.HELD_TWICE if row.name == name))
    CHECKERS[name](World(outs, campaign, []), c)
    return c.failed


def test_a_copy_changed_in_a_real_folder_disagrees(world: World, tmp_path: Path) -> None:
    """Each change makes its row's comparison fail, and only where the copy was changed."""
    o = _copy_of(world, tmp_path, lambda o: len(o.kills) == 2)
    assert _compare("result-seen", [o], world.campaign) == []
    window = o.kills[1].window
    assert window is not None
    run = next(iter(window["targets"]))
    window["targets"][run]["resultSeenEpoch"] += 2.5  # stamped when it was got round to, not when it was seen
    assert len(_compare("result-seen", [o], world.campaign)) == 1
    o.kills[2].kill["sinceEpoch"] = o.kills[2].kill["frozenEpoch"] + 0.0011  # the window opened after the freeze
    assert len(_compare("kill-order", [o], world.campaign)) == 1
    o.ledger[2] = {**o.ledger[2], "at": "2026-01-01T00:00:00.000Z"}
    assert _compare("timeline-is-the-ledger", [o], world.campaign)
    assert _compare("ledger-at-kill", [o], world.campaign)


# --- what the writer was made to agree on ---------------------------------------------------------------------------


def test_an_unsettled_target_s_window_closes_at_its_settlement_stamped_when_it_was_seen(world: World) -> None:
    """Killed right after its result, the double's first diagnosis run is an unsettled target: the record that ends
    its story is its round's settlement.  The window notes it as it is read (not at the next result, seconds
    later), with the time the timeline gives it."""
    o = next(o for o in world.outs if o.research["command"][0] == "node")
    k = o.kills[2]
    assert [t["class"] for t in k.targets] == ["unsettled"]
    assert k.window is not None
    entry = k.window["targets"][k.targets[0]["run"]]
    settlement = next(r for r in o.ledger if r["kind"] == "diagnosisSettlement" and r["seq"] > k.kill["beforeKillSeq"])
    assert entry["resultSeq"] == settlement["seq"]
    assert abs(entry["resultSeenEpoch"] - o.seen[settlement["seq"]]) <= ht.WRITTEN_MS
    later = next(r for r in o.ledger if r["kind"] == "runResult" and r["seq"] > settlement["seq"])
    assert k.window["untilEpoch"] < o.seen[later["seq"]], "the window stayed open until the next result"


def test_when_a_record_was_seen_is_read_from_the_timeline_s_end_whatever_its_length(tmp_path: Path) -> None:
    path = tmp_path / EvidenceFolder.TIMELINE
    base = 1_796_000_000.0
    text = "".join(
        json.dumps({"seq": n, "kind": "charge", "at": "x", "seenAt": rfc3339_ms(base + n / 1000)}) + "\n"
        for n in range(1, 5001)
    )
    path.write_text(text + '{"seq": 5001, "kind": "ch')  # a torn last line
    found = seen_in_timeline(path, {4999, 3, 2500})
    assert found == {n: parse_rfc3339(rfc3339_ms(base + n / 1000)) for n in (4999, 3, 2500)}
    assert seen_in_timeline(path, {6000}) == {}
    assert seen_in_timeline(tmp_path / "none.jsonl", {1}) == {}


# --- the docs -----------------------------------------------------------------------------------------------------


def test_docs_show_the_table_the_module_holds() -> None:
    text = DOCS.read_text(encoding="utf-8")
    assert "## Facts held twice" in text
    found = re.search(re.escape(ht.DOC_BEGIN) + r".*?" + re.escape(ht.DOC_END), text, re.DOTALL)
    assert found is not None, f"docs/evidence.md has no table between {ht.DOC_BEGIN} and {ht.DOC_END}"
    assert found.group(0) == ht.markdown(), (
        "docs/evidence.md's table is not the module's: paste "
        "`python3 -c 'from studymon.engine.evidence.heldtwice import markdown; print(markdown())'` in its place"
    )
