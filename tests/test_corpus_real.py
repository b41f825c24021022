"""The evidence corpus on real folders: studymon's own evidence, each copy changed in exactly one way.

``tests/test_corpus.py`` judges folders that ``tests/corpus.py`` derives
from a scenario.  Here the base is what studymon itself writes: the
reference study (its default template, with the short configuration of
``tests/studies.py``), run by ``studymon run --headless`` with
``--kill-after-first-diagnosis-start``, killed at its first diagnosis run's
``runStarted`` and resumed to its end, once on the process runtime and once
on Docker.  Each base must hold every check (``studymon report`` exits 0).

Each case copies a base and changes it in one way (an event added to both
recordings, a snapshot's field, a ledger record, a launch line, a field of
``kill.json``), then asks for the exact set of checks that do not hold:
``False`` (✗) or ``None`` (?), every other check ✓.  The expectations are
PROTOCOL.md §6 and docs/contract.md's, worked out before the judge was
asked; the comment by each case says why.  The bases' files are JSON as
``json.dumps`` writes it (checked below), so a case that rewrites a file
through ``json`` changes nothing in it but its one change.
"""

from __future__ import annotations

import copy
import hashlib
import json
import shutil
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from studymon.engine.io.clock import parse_rfc3339, rfc3339_ms
from studymon.engine.judge import judge
from studymon.engine.runtimes import open_runtime
from tests.studies import KILL_FILES, own_runtime_state, studymon, template

pytestmark = pytest.mark.slow

SID = "real"
RUN = "d1"  # the first diagnosis run: the armed kill's one target
ST = "study"
K1 = "kill 1"
D1 = f"kill 1 · {RUN}"
SNAPSHOTS = ("container-before.json", "container-after-kill.json", "container-before-resume.json")
LIVE = "kills/1/container-events-live.jsonl"
BACK = "kills/1/container-events.jsonl"
Key = tuple[str, str]


# --- files ---------------------------------------------------------------------------


def read_json(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"))


def write_json(path: Path, value: Any) -> None:
    path.write_text(json.dumps(value, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")


def read_jsonl(path: Path) -> list[Any]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def write_jsonl(path: Path, lines: list[Any]) -> None:
    path.write_text("".join(json.dumps(v, ensure_ascii=False) + "\n" for v in lines), encoding="utf-8")


def edit_json(path: Path, fn: Callable[[Any], None]) -> None:
    value = read_json(path)
    fn(value)
    write_json(path, value)


def edit_jsonl(path: Path, fn: Callable[[list[Any]], None]) -> None:
    lines = read_jsonl(path)
    fn(lines)
    write_jsonl(path, lines)


def verdicts(out: Path) -> dict[Key, bool | None]:
    return {(c.scope, c.name): c.ok for c in judge(out).checks}


def not_holding(out: Path) -> dict[Key, bool | None]:
    return {k: v for k, v in verdicts(out).items() if v is not True}


def table(out: Path) -> str:
    marks = {True: "✓", False: "✗", None: "?"}
    return "\n".join(f"  {c.scope:12} {c.name:26} {marks[c.ok]} {c.detail}" for c in judge(out).checks)


# --- the events, Docker-shaped -------------------------------------------------------


def event_action(e: dict[str, Any]) -> str:
    return str(e.get("Action") or e.get("status") or "").split(":", 1)[0]


def event_id(e: dict[str, Any]) -> str:
    return str((e.get("Actor") or {}).get("ID") or e.get("id") or "")


def event_ns(e: dict[str, Any]) -> int:
    return int(e["timeNano"])


def hex_id(seed: str) -> str:
    """A 64-digit container or exec Id of the test's own."""
    return hashlib.sha256(seed.encode()).hexdigest()


# --- the bases -------------------------------------------------------------------------


@dataclass(frozen=True)
class Base:
    """A real evidence folder and the facts of it that the cases change."""

    backend: str
    out: Path
    prefix: str
    kill: dict[str, Any]
    window: dict[str, Any]
    container: str  # the target's container name
    cid: str  # its Id, as every snapshot shows it
    die: dict[str, Any]  # its one die, as the read-back holds it (the live copy has seenAt beside)
    checks: frozenset[Key] = field(default_factory=frozenset)

    @property
    def since(self) -> float:
        return float(self.window["sinceEpoch"])

    @property
    def until(self) -> float:
        return float(self.window["untilEpoch"])

    def inside(self, at: float) -> float:
        """A time ``at`` of the way from the window's start to its end."""
        return self.since + at * (self.until - self.since)

    def stem(self) -> str:
        return f"{self.prefix}-{SID}-"

    def like_die(self, action: str, when: float, cid: str | None = None, **attrs: str) -> dict[str, Any]:
        """An event of the target's container shaped as its real die is (Docker's fields), of ``action`` at ``when``."""
        e = copy.deepcopy(self.die)
        ns = round(when * 1e9)
        e.update(status=action, Action=action, time=ns // 1_000_000_000, timeNano=ns)
        e["Actor"]["Attributes"].pop("exitCode", None)
        e["Actor"]["Attributes"].update(attrs)
        if cid is not None:
            e["id"] = e["Actor"]["ID"] = cid
        return e


def _target_die(lines: list[Any], cid: str) -> list[dict[str, Any]]:
    return [e for e in lines if "gap" not in e and event_action(e) == "die" and event_id(e) == cid]


@pytest.fixture(scope="module", params=["process", pytest.param("docker", marks=pytest.mark.docker)])
def base(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Base]:
    """The reference study killed at its first diagnosis start and resumed to its end, on one runtime."""
    backend = str(request.param)
    if backend == "docker":
        request.getfixturevalue("docker_engine")
    root = tmp_path_factory.mktemp(f"base-{backend}")
    prefix = "cr" + hex_id(str(root))[:8]
    with own_runtime_state(tmp_path_factory):
        try:
            t = template(root, backend=backend, containerPrefix=prefix)
            proc = studymon(
                "run",
                "--headless",
                "--template",
                str(t),
                "--kill-after-first-diagnosis-start",
                SID,
                f"{SID}={SID}",
                cwd=root,
            )
            out = root / SID
            assert proc.returncode == 0, f"exit {proc.returncode}\n{proc.stdout}\n{proc.stderr}"
            folder = out / "kills" / "1"
            kill = read_json(folder / "kill.json")
            window = read_json(folder / "container-events-window.json")
            assert [t["run"] for t in kill["targets"]] == [RUN], kill["targets"]
            name = kill["targets"][0]["container"]
            assert name == f"{prefix}-{SID}-{RUN}"
            cid = read_json(folder / "container-before.json")[name]["Id"]
            dies = _target_die(read_jsonl(out / BACK), cid)
            assert len(dies) == 1, dies
            yield Base(backend, out, prefix, kill, window, name, cid, dies[0], frozenset(verdicts(out)))
        finally:
            runtime = open_runtime(backend)
            try:
                for left in runtime.list(prefix + "-"):
                    runtime.remove(left["Name"].lstrip("/"), force=True)
            finally:
                runtime.close()


def test_each_base_holds_every_check(base: Base) -> None:
    """The real folder is what the cases assume, and every check holds (``studymon report`` exits 0)."""
    out = base.out
    assert not not_holding(out), table(out)
    # 7 per study (killTriggered: it was armed), 2 for the kill, 3 for its one target.
    assert len(base.checks) == 12, sorted(base.checks)
    rep = studymon("report", str(out), cwd=out.parent)
    assert rep.returncode == 0, rep.stdout + rep.stderr
    assert "all 12 checks hold" in rep.stdout, rep.stdout

    folder = out / "kills" / "1"
    for name in KILL_FILES:
        assert (folder / name).is_file(), name
    assert not (out / "kills" / "2").exists()
    assert base.kill["trigger"] == "auto" and base.kill["beforeKillSeq"] == base.kill["triggerSeq"]
    # The target ran through the kill: running in the snapshots before and after it, one Id throughout.
    snaps = [read_json(folder / f)[base.container] for f in SNAPSHOTS]
    assert {s["Id"] for s in snaps} == {base.cid}
    assert snaps[0]["State"]["Running"] and snaps[1]["State"]["Running"], [s["State"] for s in snaps]
    # Its one die, in both recordings, inside the window, before its result was seen.
    live_dies = _target_die(read_jsonl(out / LIVE), base.cid)
    assert [event_ns(e) for e in live_dies] == [event_ns(base.die)]
    seen = base.window["targets"][RUN]["resultSeenEpoch"]
    assert base.since < event_ns(base.die) / 1e9 < seen <= base.until
    # Launches: started, killed by SIGKILL, resumed, exit 0.
    launches = [
        (x["event"], x.get("resume"), x.get("code"), x.get("signal")) for x in read_jsonl(out / "launches.jsonl")
    ]
    assert launches == [
        ("start", False, None, None),
        ("end", None, None, "SIGKILL"),
        ("start", True, None, None),
        ("end", None, 0, None),
    ], launches
    ledger = read_jsonl(out / "study" / "ledger.jsonl")
    assert ledger[-1]["kind"] == "halt" and ledger[-1]["content"]["reason"] == "balance exhausted"
    assert [r["seq"] for r in read_jsonl(out / "timeline.jsonl")] == [r["seq"] for r in ledger]
    # The files round-trip through json exactly: a case's rewrite changes only what it changes.
    for rel in ("study/ledger.jsonl", "timeline.jsonl", "launches.jsonl", LIVE, BACK):
        assert (out / rel).read_text(encoding="utf-8") == "".join(
            json.dumps(v, ensure_ascii=False) + "\n" for v in read_jsonl(out / rel)
        ), rel
    for rel in ("kill.json", "ledger-at-kill.json", *SNAPSHOTS):
        text = (folder / rel).read_text(encoding="utf-8")
        assert text == json.dumps(json.loads(text), indent=2, ensure_ascii=False) + "\n", rel


# --- the changes -----------------------------------------------------------------------


def add_event(out: Path, e: dict[str, Any], *, live: bool = True, readback: bool = True) -> None:
    """``e`` in the live recording (with the console's ``seenAt``) and the read-back, each in time order."""

    def insert(lines: list[Any], line: dict[str, Any]) -> None:
        at = next((i for i, x in enumerate(lines) if "gap" not in x and event_ns(x) > event_ns(e)), len(lines))
        lines.insert(at, line)

    if live:
        edit_jsonl(out / LIVE, lambda lines: insert(lines, dict(e, seenAt=rfc3339_ms(event_ns(e) / 1e9 + 0.002))))
    if readback:
        edit_jsonl(out / BACK, lambda lines: insert(lines, copy.deepcopy(e)))


def _exec_into_target(out: Path, b: Base) -> None:
    command = "sh -c 'refstudy again'"
    exec_id = hex_id("exec " + b.cid)
    for i, action in enumerate(("exec_create", "exec_start")):
        add_event(out, b.like_die(f"{action}: {command}", b.inside(0.3) + 0.001 * i, execID=exec_id))


def _restart_target(out: Path, b: Base) -> None:
    add_event(out, b.like_die("restart", b.inside(0.5)))


def _remake_target_name_after_result(out: Path, b: Base) -> None:
    """Made again under its name (a new Id): created and started after its result was seen, before the window closed."""
    seen = float(b.window["targets"][RUN]["resultSeenEpoch"])
    new_id = hex_id("again " + b.cid)
    for i, action in enumerate(("create", "start"), 1):
        when = seen + i * (b.until - seen) / 3
        assert seen < when < b.until
        add_event(out, b.like_die(action, when, cid=new_id))


def _snapshot_named_as_another(out: Path, b: Base) -> None:
    other = b.stem() + "d2"
    assert any(r["content"].get("run") == "d2" for r in read_jsonl(out / "study" / "ledger.jsonl"))
    edit_json(out / "kills" / "1" / "container-after-kill.json", lambda s: s[b.container].update(Name="/" + other))


def _exit_disagrees(out: Path, b: Base) -> None:
    """A snapshot's exit against the die's; the bases' snapshots show it running, so: the two recordings' dies."""
    folder = out / "kills" / "1"
    exited = [f for f in SNAPSHOTS if not read_json(folder / f)[b.container]["State"]["Running"]]
    if exited:
        edit_json(
            folder / exited[-1],
            lambda s: s[b.container]["State"].update(ExitCode=s[b.container]["State"]["ExitCode"] + 1),
        )
        return

    def change(lines: list[Any]) -> None:
        (die,) = _target_die(lines, b.cid)
        assert die["Actor"]["Attributes"]["exitCode"] == "0"
        die["Actor"]["Attributes"]["exitCode"] = "1"

    edit_jsonl(out / BACK, change)


def _time_nano_an_hour_off(out: Path, b: Base) -> None:
    def change(lines: list[Any]) -> None:
        (die,) = _target_die(lines, b.cid)
        die["timeNano"] = event_ns(die) + 3600 * 10**9

    edit_jsonl(out / LIVE, change)
    edit_jsonl(out / BACK, change)


def _at_kill_float(out: Path, _b: Base) -> None:
    def change(records: list[Any]) -> None:
        (rec,) = [r for r in records if r["kind"] == "stageOpen" and r["content"].get("stage") == "diagnosis"]
        assert type(rec["content"]["round"]) is int and rec["content"]["round"] == 1
        rec["content"]["round"] = 1.0

    edit_json(out / "kills" / "1" / "ledger-at-kill.json", change)


def _killed_end_before_kill(out: Path, b: Base) -> None:
    pid, kill_at = b.kill["pid"], parse_rfc3339(b.kill["at"])

    def change(lines: list[Any]) -> None:
        (start,) = [x for x in lines if x["event"] == "start" and x["pid"] == pid]
        (end,) = [x for x in lines if x["event"] == "end" and x["pid"] == pid]
        end["at"] = rfc3339_ms(kill_at - 0.05)
        assert parse_rfc3339(start["at"]) < parse_rfc3339(end["at"]) < kill_at

    edit_jsonl(out / "launches.jsonl", change)


def _renumber(out: Path, b: Base, fn: Callable[[list[dict[str, Any]]], list[dict[str, Any]]]) -> None:
    """The ledger as ``fn`` makes it, seq 1..n again, and timeline.jsonl to match; nothing up to the kill changes.

    A record ``fn`` adds has no ``seq`` (its timeline line is seen as the record after it was); the others
    keep their timeline lines, renumbered.
    """
    ledger_path, timeline_path = out / "study" / "ledger.jsonl", out / "timeline.jsonl"
    old = read_jsonl(ledger_path)
    seen = {line["seq"]: line for line in read_jsonl(timeline_path)}
    new = fn(copy.deepcopy(old))
    timeline: list[dict[str, Any]] = []
    for i, rec in enumerate(new, 1):
        line = seen[rec["seq"]] if "seq" in rec else None
        if line is None:  # an added record: seen as the next kept one was
            after = next(r for r in new[i:] if "seq" in r)
            line = dict(seen[after["seq"]], kind=rec["kind"], at=rec["at"])
        new[i - 1] = {"seq": i, **{k: v for k, v in rec.items() if k != "seq"}}  # as the study writes it: seq first
        timeline.append(dict(line, seq=i))
    upto = b.kill["beforeKillSeq"]
    assert new[:upto] == old[:upto], "the ledger up to the kill must not change"
    write_jsonl(ledger_path, new)
    write_jsonl(timeline_path, timeline)


def _twin_before_halt(out: Path, b: Base) -> None:
    """A run d1b of d1's purpose, cell and round with one experiment in common: planned, charged, started, resulted."""

    def add(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
        (plan,) = [r for r in records if r["kind"] == "runPlanned" and r["content"]["run"] == RUN]
        halt = records[-1]
        assert halt["kind"] == "halt"
        balance = next(r for r in reversed(records) if r["kind"] == "charge")["content"]["balance"]
        amount = next(r for r in records if r["kind"] == "charge" and r["content"]["run"] == RUN)["content"]["amount"]
        common, new = plan["content"]["experiments"][-1], "e99"
        at = halt["at"]
        twin = [
            {
                "kind": "runPlanned",
                "content": {
                    "run": "d1b",
                    "purpose": plan["content"]["purpose"],
                    "object": plan["content"]["object"],
                    "round": plan["content"]["round"],
                    "experiments": [common, new],
                },
            },
            {"kind": "charge", "content": {"run": "d1b", "amount": amount, "balance": balance - amount}},
            {"kind": "runStarted", "content": {"run": "d1b", "container": b.stem() + "d1b"}},
            {"kind": "runResult", "content": {"run": "d1b", "exitCode": 0, "outputs": {common: 0.5, new: 0.25}}},
        ]
        return records[:-1] + [{"at": at, **r} for r in twin] + [halt]

    _renumber(out, b, add)


def _lose_the_result(out: Path, b: Base) -> None:
    def drop(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
        lost = [r for r in records if r["kind"] in ("runResult", "diagnosisSettlement") and r["content"]["run"] == RUN]
        assert [r["kind"] for r in lost] == ["runResult", "diagnosisSettlement"], lost
        return [r for r in records if r not in lost]

    _renumber(out, b, drop)

    # The window says what a console writes of a study that finished without the target's result: no seq, no time
    # (the window names the record that ended a story as the ledger holds it: kept agreeing, this case is the lost
    # result alone).
    def agree(window: dict[str, Any]) -> None:
        window["targets"][RUN].update(resultSeq=None, resultSeenEpoch=None)

    edit_json(out / "kills" / "1" / "container-events-window.json", agree)


def _kill_json_without_since(out: Path, _b: Base) -> None:
    def drop(kill: dict[str, Any]) -> None:
        del kill["since"], kill["sinceEpoch"]

    edit_json(out / "kills" / "1" / "kill.json", drop)


def _gap_in_window(out: Path, b: Base) -> None:
    start, end = rfc3339_ms(b.inside(0.1)), rfc3339_ms(b.inside(0.2))

    def insert(lines: list[Any]) -> None:
        at = next((i for i, x in enumerate(lines) if "gap" not in x and x["seenAt"] > start), len(lines))
        lines.insert(at, {"gap": {"from": start, "to": end}})

    edit_jsonl(out / LIVE, insert)


def _final_end_says_1(out: Path, _b: Base) -> None:
    def change(lines: list[Any]) -> None:
        assert (lines[-1]["event"], lines[-1]["code"]) == ("end", 0)
        lines[-1]["code"] = 1

    edit_jsonl(out / "launches.jsonl", change)


def _final_exit_1(out: Path, b: Base) -> None:
    """The final end says exit 1, and the files a finish writes only after an exit 0 are not there (a study that
    ended so has none of them)."""
    _final_end_says_1(out, b)
    for name in ("outcome.json", "accounts.json", "kill-report.json", "report.json", "report.svg"):
        (out / name).unlink(missing_ok=True)


# --- the cases ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Case:
    name: str
    why: str
    edit: Callable[[Path, Base], None]
    expected: dict[Key, bool | None]
    # Per named check, what its detail holds (one of them, where the base decides which: see _exit_disagrees).
    detail: dict[Key, str | tuple[str, ...]] = field(default_factory=dict)


def fails(*keys: Key) -> dict[Key, bool | None]:
    return dict.fromkeys(keys, False)


def unknown(*keys: Key) -> dict[Key, bool | None]:
    return dict.fromkeys(keys)


RERUN = (D1, "sameContainerNoRerun")
CASES = [
    # §6.4 allowed events: exec_create and exec_start are not in the target's story.
    Case(
        "exec-into-target",
        "exec_create and exec_start of d1's container Id in the window, in both recordings",
        _exec_into_target,
        fails(RERUN),
        {RERUN: "exec_create"},
    ),
    Case(
        "restart-of-target",
        "a restart of d1's container in the window, in both recordings",
        _restart_target,
        fails(RERUN),
        {RERUN: "restart"},
    ),
    # §6.4: the target's name is never created or started in the kill's window, after its own result too.
    Case(
        "target-name-remade-after-result",
        "d1's name created and started again (a new Id) after its result was seen, inside the window",
        _remake_target_name_after_result,
        fails(RERUN),
        {RERUN: "create"},
    ),
    # §6.4 snapshots: each one's Name is the name it is filed under.
    Case(
        "snapshot-name-of-another-container",
        "container-after-kill.json files d1's container under d2's Name",
        _snapshot_named_as_another,
        fails(RERUN),
    ),
    # §6.4: a snapshot's exit is the die's; the bases show the target running, so the recordings disagree instead.
    Case(
        "exit-code-disagrees",
        "a snapshot that shows d1 exited says another code than its die; with none (the bases' d1 runs through "
        "the resume), the read-back's copy of its die says exit 1, the live one (and runResult) 0",
        _exit_disagrees,
        fails(RERUN),
        {RERUN: ("the recordings disagree", "the die is not the exit the snapshots show")},
    ),
    # §6.4 times: time and timeNano agree within a second.
    Case(
        "time-nano-an-hour-from-time",
        "d1's die: timeNano an hour after its time, in both recordings",
        _time_nano_an_hour_off,
        fails(RERUN),
    ),
    # §6.5: ledger-at-kill.json equals the ledger exactly, types included (a consistency, not a missing file:
    # killTriggered's "complete" holds).
    Case(
        "at-kill-float-for-int",
        "ledger-at-kill.json has round 1.0 where the ledger has 1",
        _at_kill_float,
        fails((K1, "killEvidence")),
    ),
    # §6.3: killDelivered reads the killed pid's first end at or after the kill's at.
    Case(
        "killed-end-before-kill",
        "the killed pid's end line is 50 ms before the kill's at",
        _killed_end_before_kill,
        fails((K1, "killDelivered")),
    ),
    # §6.4 twins (chargedOnce); rule 14: the twin is a diagnosis run with a result no settlement names.
    Case(
        "twin-before-halt",
        "d1b, planned after the kill with d1's purpose, cell and round and one experiment in "
        "common, charged, started and resulted before the halt",
        _twin_before_halt,
        fails((D1, "chargedOnce"), (ST, "resultsAccounted")),
        {(D1, "chargedOnce"): "d1b"},
    ),
    # §6.4 lost is lost, rule 14: the study finished (exit 0) without d1's result; its die has no runResult
    # whose exit it could be, and once finished nothing of the window is ?.
    Case(
        "lost-result",
        "d1's runResult and its settlement are not in the ledger (seqs renumbered)",
        _lose_the_result,
        fails((ST, "resultsAccounted"), (D1, "resultSettledAndFinished"), RERUN),
        {(ST, "resultsAccounted"): "the study finished without d1's result"},
    ),
    # §6.5: without since/sinceEpoch kill.json is incomplete (killEvidence); killTriggered asks that the armed
    # kill's folder be complete (docs/contract.md: "without them the folder is incomplete").
    Case(
        "kill-json-without-since",
        "kill.json has neither since nor sinceEpoch",
        _kill_json_without_since,
        fails((K1, "killEvidence"), (ST, "killTriggered")),
    ),
    # §6.4 gaps: a gap overlapping the window makes the container check ?, never ✓ (and the study finished:
    # nothing to resume).
    Case("gap-in-window", "the live recording has a gap inside the window", _gap_in_window, unknown(RERUN)),
    # §6.6: exit 1 is a crash that --resume continues: the clean exit, and a finished study, may still come.
    Case(
        "final-exit-1",
        "the resumed controller's end says exit 1",
        _final_exit_1,
        unknown((ST, "exitedCleanly"), (D1, "resultSettledAndFinished")),
    ),
    # §6.9: outcome.json (written once the final controller exited 0) and launches.jsonl's final end hold one fact;
    # and a folder with outcome.json is resumed by no console, so nothing is ? for being still to come (§6.6).
    Case(
        "outcome-disagrees",
        "the final end says exit 1, outcome.json says the study finished",
        _final_end_says_1,
        {(ST, "exitedCleanly"): False},
    ),
]


def mutated(base: Base, case: Case, tmp_path: Path) -> Path:
    out = tmp_path / SID
    shutil.copytree(base.out, out, symlinks=True)
    case.edit(out, base)
    return out


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_each_change_fails_exactly_its_checks(base: Base, case: Case, tmp_path: Path) -> None:
    out = mutated(base, case, tmp_path)
    checks = {(c.scope, c.name): c for c in judge(out).checks}
    got = {k: c.ok for k, c in checks.items() if c.ok is not True}
    assert got == case.expected, f"{case.why} ({base.backend}):\n{table(out)}"
    assert set(checks) == base.checks
    for key, pieces in case.detail.items():
        alternatives = (pieces,) if isinstance(pieces, str) else pieces
        assert any(p in checks[key].detail for p in alternatives), (key, checks[key].detail)


REPORTED = ("exec-into-target", "lost-result", "kill-json-without-since", "gap-in-window", "final-exit-1")


@pytest.mark.parametrize("name", REPORTED)
def test_report_exits_1_for_a_fail_3_for_an_unknown_alone(base: Base, name: str, tmp_path: Path) -> None:
    case = next(c for c in CASES if c.name == name)
    out = mutated(base, case, tmp_path)
    proc = studymon("report", str(out), cwd=tmp_path)
    said = proc.stdout + proc.stderr
    assert proc.returncode == (1 if False in case.expected.values() else 3), said
    assert "Traceback" not in said, said
    finished = judge(out).finished
    # §6.6: the --resume command only where a resume can continue the study; never for one that finished.
    assert ("studymon run --resume" in said) is (not finished), said
    assert finished is (name != "final-exit-1")
