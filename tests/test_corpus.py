"""The adversarial evidence corpus: each wrong folder fails exactly its checks; hostile files never crash ``report``."""

from __future__ import annotations

import copy
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from studymon.engine.io.clock import rfc3339_ms
from studymon.engine.judge import judge
from tests.corpus import CORPUS, HOSTILE, MARKER, Case, Files, Hostile, at_point, derive, sound, write

ROOT = Path(__file__).resolve().parent.parent


def verdicts(out: Path) -> dict[tuple[str, str], bool | None]:
    return {(c.scope, c.name): c.ok for c in judge(out).checks}


def test_the_sound_folder_holds_every_check(tmp_path: Path) -> None:
    out = write(derive(sound()), tmp_path / "s")
    got = verdicts(out)
    assert all(ok is True for ok in got.values()), {k: v for k, v in got.items() if v is not True}
    # Every check of the table is there: 6 per study, killTriggered, 2 per kill, 3 per target.
    assert len(got) == 7 + 2 * 2 + 3 * 3


@pytest.mark.parametrize("point, kind", [("charge", "charged"), ("started", "unrecorded"), ("runResult", "unsettled")])
def test_each_point_s_sound_story_holds(tmp_path: Path, point: str, kind: str) -> None:
    """§7: killed after d1's charge (started once after the kill, never charged again), after its container started
    but before its runStarted (adopted), or after its result (settled once, never run again): every check holds."""
    s = sound()
    at_point(point)(s)
    out = write(derive(s), tmp_path / point)
    got = verdicts(out)
    assert all(ok is True for ok in got.values()), [(c.scope, c.name, c.detail) for c in judge(out).checks if not c.ok]
    assert {name for scope, name in got if scope == "kill 1 · d1"} == {
        "sameContainerNoRerun", "chargedOnce", "resultSettledAndFinished"}
    kill = json.loads((out / "kills" / "1" / "kill.json").read_text())
    assert [(t["run"], t["class"]) for t in kill["targets"]] == [("d1", kind)]


def test_the_corpus_is_large_and_names_are_unique() -> None:
    assert len(CORPUS) >= 25
    assert len({c.name for c in CORPUS}) == len(CORPUS)


@pytest.mark.parametrize("case", CORPUS, ids=[c.name for c in CORPUS])
def test_each_wrong_folder_fails_exactly_its_checks(tmp_path: Path, case: Case) -> None:
    sound_keys = set(verdicts(write(derive(sound()), tmp_path / "sound")))
    out = write(case.build(), tmp_path / "s")
    got = verdicts(out)
    not_holding = {k: v for k, v in got.items() if v is not True}
    assert not_holding == case.expected, f"{case.why}: {[(c.scope, c.name, c.ok, c.detail) for c in judge(out).checks if c.ok is not True]}"
    details = {(c.scope, c.name): c.detail for c in judge(out).checks}
    for key, detail in case.details.items():
        assert details[key] == detail, key
    # Nothing vanished from the table but what the fault took away (a target dropped, a folder gone).
    assert set(case.expected) <= set(got)
    if not case.expected:
        assert set(got) == sound_keys


def _report(out: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, PYTHONPATH=str(ROOT), COLUMNS="200")
    return subprocess.run([sys.executable, "-m", "studymon.tui.cli", "report", *extra, str(out)],
                          capture_output=True, text=True, timeout=120, env=env)


@pytest.mark.parametrize("hostile", HOSTILE, ids=[h.name for h in HOSTILE])
def test_hostile_files_fail_their_checks_without_a_crash(tmp_path: Path, hostile: Hostile) -> None:
    out = write(derive(sound()), tmp_path / "s")
    hostile.prepare(out)
    got = verdicts(out)
    wrong = {k for k, v in got.items() if v is not True}
    assert hostile.failing <= wrong, (hostile.failing - wrong, got)
    assert any(v is False for v in got.values())


def test_report_never_crashes_nor_prints_the_file(tmp_path: Path) -> None:
    """Every hostile folder at once, as the command line judges them (one process for all: a process a folder
    cost a second each), as a table and as JSON: judged, nothing of the files printed."""
    outs = []
    for hostile in HOSTILE:
        out = write(derive(sound()), tmp_path / hostile.name)
        hostile.prepare(out)
        outs.append(out)
    for extra in ((), ("--json",)):
        proc = _report_many(outs, *extra)
        assert proc.returncode == 1, proc.stdout[-2000:] + proc.stderr[-2000:]  # every one fails a check
        assert "Traceback" not in proc.stderr, proc.stderr
        assert MARKER not in proc.stdout + proc.stderr
        assert "root:x:0" not in proc.stdout
    # Each folder is in the (JSON) report: none was left out by the one before it.
    assert all(str(out) in proc.stdout for out in outs)


def _report_many(outs: list[Path], *extra: str) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, PYTHONPATH=str(ROOT), COLUMNS="200")
    return subprocess.run([sys.executable, "-m", "studymon.tui.cli", "report", *extra, *map(str, outs)],
                          capture_output=True, text=True, timeout=300, env=env)


def test_report_of_the_sound_folder_exits_0(tmp_path: Path) -> None:
    out = write(derive(sound()), tmp_path / "s")
    proc = _report(out)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "all 20 checks hold" in proc.stdout


# --- what the judge reads, piece by piece ------------------------------------------------------

from studymon.engine.contract.folder import EvidenceFolder  # noqa: E402
from studymon.engine.judge import NotEvidence  # noqa: E402
from studymon.engine.judge.read import last_ending  # noqa: E402
from tests.corpus import FIRST_PID, add_event, build, container, container_id, event, in_window, t  # noqa: E402


def _checks(out: Path) -> dict[tuple[str, str], Any]:
    return {(c.scope, c.name): (c.ok, c.detail) for c in judge(out).checks}


def test_not_an_evidence_folder(tmp_path: Path) -> None:
    with pytest.raises(NotEvidence) as err:
        judge(tmp_path)
    assert str(err.value) == f"{tmp_path} is not a studymon evidence folder (no launches.jsonl)"
    (tmp_path / "research.json").write_text("{}")
    with pytest.raises(NotEvidence):
        judge(tmp_path)
    (tmp_path / "launches.jsonl").write_text("")
    j = judge(tmp_path)
    assert j.ok is False and j.finished is False and j.study == tmp_path.name


def test_an_evidence_folder_without_its_research_json_is_judged_and_fails(tmp_path: Path) -> None:
    """launches.jsonl marks the console's folder: with research.json gone, the checks that need it fail (a hostile
    folder is judged, never refused as bad input)."""
    out = write(derive(sound()), tmp_path / "s")
    (out / "research.json").unlink()
    checks = {(c.scope, c.name): (c.ok, c.detail) for c in judge(out).checks}
    assert checks[("study", "contractKept")] == (False, "rule 4 cannot be checked: research.json: missing")


def test_last_ending_and_finished(tmp_path: Path) -> None:
    files = derive(sound())
    out = write(files, tmp_path / "a")
    assert last_ending(out) == ({"code": 0, "signal": None}, True)
    j = judge(out)
    assert j.finished is True and j.ending == {"code": 0, "signal": None}
    # A start after the last end: the final controller is that one, running, not finished (§6.3).
    files["launches.jsonl"].append({"event": "start", "pid": 9, "at": rfc3339_ms(t(99)), "resume": True})
    out = write(files, tmp_path / "b")
    assert last_ending(out) == (None, False)
    j = judge(out)
    assert j.finished is False
    assert _checks(out)[("study", "exitedCleanly")] == (None, "the controller (pid 9) has not ended")
    # Lines that are not launches are read past, and named: exitedCleanly fails on them.
    files = derive(sound())
    files["launches.jsonl"].insert(1, "not json")
    files["launches.jsonl"].insert(1, ["a list"])
    out = write(files, tmp_path / "c")
    assert judge(out).finished is True
    assert _checks(out)[("study", "exitedCleanly")][0] is False
    assert "launches.jsonl line 2: a list, not a launch" in _checks(out)[("study", "exitedCleanly")][1]
    # An end whose code or signal is not one is no end: the final controller has not ended; but a launches.jsonl not
    # read whole cannot say for sure, and counts as finished (nothing to come hides behind a ?).
    files = derive(sound())
    files["launches.jsonl"][-1].update(code="0", signal="SIG\x1b")
    out = write(files, tmp_path / "d")
    assert last_ending(out) == (None, False)
    assert judge(out).finished is True and _checks(out)[("study", "exitedCleanly")][0] is False
    files["launches.jsonl"][-1].update(code=None, signal="SIGKILL")
    assert last_ending(write(files, tmp_path / "e")) == ({"code": None, "signal": "SIGKILL"}, True)
    assert _checks(tmp_path / "e")[("study", "exitedCleanly")] == (
        None, "the controller was killed by SIGKILL; `studymon run --resume` continues it")
    assert last_ending(tmp_path / "nowhere") == (None, False)


def test_the_keeper_end_of_the_killed_pid(tmp_path: Path) -> None:
    files = derive(sound())
    kill_at = files["kills/1/kill.json"]["at"]
    launches = files["launches.jsonl"]
    # The same pid earlier (a recycled pid), ended cleanly before the kill: not the killed controller.
    launches[0:0] = [{"event": "start", "pid": FIRST_PID, "at": rfc3339_ms(t(-9)), "resume": False},
                     {"event": "end", "pid": FIRST_PID, "at": rfc3339_ms(t(-8)), "code": 0, "signal": None}]
    assert _checks(write(files, tmp_path / "a"))[("kill 1", "killDelivered")][0] is True
    # Ended cleanly after the kill, by SIGKILL before it: the first end at or after the kill counts.
    files = derive(sound())
    for line in files["launches.jsonl"]:
        if line["event"] == "end" and line["pid"] == FIRST_PID:
            line["at"] = rfc3339_ms(t(1))
    files["launches.jsonl"].insert(3, {"event": "end", "pid": FIRST_PID, "at": kill_at, "code": 0, "signal": None})
    # By time, its SIGKILL end came before the kill: the kill met a controller that had ended (§6.8).
    ok, detail = _checks(write(files, tmp_path / "b"))[("kill 1", "killDelivered")]
    assert ok is False and detail.startswith(f"pid {FIRST_PID} had ended (launches.jsonl line ")
    # An end exactly at the kill's time is the one.
    files = derive(sound())
    for line in files["launches.jsonl"]:
        if line["event"] == "end" and line["pid"] == FIRST_PID:
            line["at"] = kill_at
    assert _checks(write(files, tmp_path / "c"))[("kill 1", "killDelivered")][0] is True
    # Three ends of the pid, one before the kill: by time that one ended the controller, and the kill met none
    # (a controller ends once; the end at the kill cannot be its).
    files = derive(sound())
    launches = files["launches.jsonl"]
    i = next(i for i, line in enumerate(launches) if line["event"] == "end" and line["pid"] == FIRST_PID)
    launches[i]["at"] = kill_at
    launches.insert(i, {"event": "end", "pid": FIRST_PID, "at": rfc3339_ms(t(1)), "code": 0, "signal": None})
    launches.insert(i + 2, {"event": "end", "pid": FIRST_PID, "at": rfc3339_ms(t(30)), "code": 0, "signal": None})
    ok, detail = _checks(write(files, tmp_path / "e"))[("kill 1", "killDelivered")]
    assert ok is False and detail == f"pid {FIRST_PID} had ended (launches.jsonl line {i + 1}) before the kill"
    # Ends whose times cannot be read are no ends, and lines that are not launches: the delivery cannot be told.
    for line in launches:
        if line["event"] == "end" and line["pid"] == FIRST_PID:
            line["at"] = "unreadable"
    assert _checks(write(files, tmp_path / "f"))[("kill 1", "killDelivered")] == (
        False, f"launches.jsonl cannot be relied on: launches.jsonl line {i + 1}: an end line whose at is not a time; "
        f"a controller was started after the kill while pid {FIRST_PID} had not ended")
    # Only an end before the kill: not the kill's.
    files = derive(sound())
    for line in files["launches.jsonl"]:
        if line["event"] == "end" and line["pid"] == FIRST_PID:
            line["at"] = rfc3339_ms(t(1))
    assert _checks(write(files, tmp_path / "d"))[("kill 1", "killDelivered")] == (
        False, f"pid {FIRST_PID} had ended (launches.jsonl line 2) before the kill")


def test_kill_folders_are_numbered_directories_inside_out(tmp_path: Path) -> None:
    out = write(derive(sound()), tmp_path / "s")
    (out / "kills" / "01").mkdir()
    (out / "kills" / "x3").mkdir()
    (out / "kills" / "3").write_text("not a folder")
    (tmp_path / "elsewhere").mkdir()
    os.symlink(tmp_path / "elsewhere", out / "kills" / "4")
    os.symlink(out / "kills" / "2", out / "kills" / "10")  # a link inside OUT: no folder the console made either
    assert [k.path for k in EvidenceFolder(out).kills()] == [out / "kills" / "1", out / "kills" / "2"]
    assert EvidenceFolder(tmp_path / "elsewhere").kills() == []
    os.symlink(tmp_path / "elsewhere", tmp_path / "t-kills")
    other = write(derive(sound()), tmp_path / "t")
    import shutil
    shutil.rmtree(other / "kills")
    os.symlink(out / "kills", other / "kills")
    assert EvidenceFolder(other).kills() == []


def test_the_container_prefix_defaults_and_is_checked(tmp_path: Path) -> None:
    files = derive(sound())
    del files["research.json"]["containerPrefix"]
    assert all(v is True for v in verdicts(write(files, tmp_path / "a")).values())
    s = sound()
    s.prefix = "lab"
    for e in s.entries:
        if e.kind == "runStarted":
            e.content["container"] = container(e.content["run"], prefix="lab")
    files = derive(s)
    assert all(v is True for v in verdicts(write(files, tmp_path / "b")).values())
    files["research.json"]["containerPrefix"] = "inforsi"
    got = _checks(write(files, tmp_path / "c"))
    assert got[("study", "contractKept")] == (False, "rule 4, line 7: runStarted.container for run d1 is not inforsi-s-d1 "
                                                     "(4 more lines break a rule)")
    assert got[("kill 1", "killEvidence")] == (False, "kill.json prefix is not the study's inforsi-s-")
    files["research.json"].update(study="S", containerPrefix="-x")
    got = _checks(write(files, tmp_path / "d"))
    assert got[("study", "contractKept")] == (False, "rule 4 cannot be checked: research.json: study is not a valid "
                                                     "study id; research.json: containerPrefix is not a container name prefix")
    assert judge(tmp_path / "d").study == "d"


def test_ledger_at_kill_details(tmp_path: Path) -> None:
    files = derive(sound())
    files["kills/1/ledger-at-kill.json"][3]["content"]["x"] = 1
    assert _checks(write(files, tmp_path / "a"))[("kill 1", "killEvidence")] == (
        False, "ledger-at-kill.json differs from the ledger at record 4 (seq 4)")
    files = derive(sound())
    files["kills/1/ledger-at-kill.json"].pop()
    assert _checks(write(files, tmp_path / "b"))[("kill 1", "killEvidence")] == (
        False, "ledger-at-kill.json ends at seq 6, not at beforeKillSeq 7")
    files = derive(build(rounds=1, ablation=(False,), kills=(("d1", "manual"),)))
    ledger = files["study/ledger.jsonl"]
    files["kills/1/ledger-at-kill.json"] = copy.deepcopy(ledger) + [dict(ledger[-1], seq=len(ledger) + 1)]
    assert "ledger-at-kill.json holds more records than the ledger" in \
        _checks(write(files, tmp_path / "c"))[("kill 1", "killEvidence")][1]
    files["kills/1/ledger-at-kill.json"] = []
    assert _checks(write(files, tmp_path / "d"))[("kill 1", "killEvidence")] == (
        False, "ledger-at-kill.json ends at seq 0, not at beforeKillSeq 7")
    (tmp_path / "d" / "kills" / "1" / "ledger-at-kill.json").write_text('[{"seq": 1}, 7')
    # It differs at its first record, and is read to its end all the same: whether it reads as the console writes it
    # does not depend on where it first differs.
    said = _checks(tmp_path / "d")[("kill 1", "killEvidence")][1]
    assert "ledger-at-kill.json differs from the ledger at record 1" in said
    assert "ledger-at-kill.json: the JSON list is not closed" in said
    (tmp_path / "d" / "kills" / "1" / "ledger-at-kill.json").write_text(json.dumps(ledger)[:-1])
    assert _checks(tmp_path / "d")[("kill 1", "killEvidence")] == (False, "ledger-at-kill.json: the JSON list is not closed")
    (tmp_path / "d" / "kills" / "1" / "ledger-at-kill.json").write_text("[" + json.dumps(ledger[0]) + ", {")
    assert _checks(tmp_path / "d")[("kill 1", "killEvidence")][1] == "ledger-at-kill.json: not JSON"


def test_report_json_and_accounts(tmp_path: Path) -> None:
    out = write(derive(sound()), tmp_path / "s")
    j = judge(out)
    doc = j.report_json()
    assert set(doc) == {"study", "out", "finished", "ending", "ok", "checks"}
    assert (doc["study"], doc["out"], doc["finished"], doc["ok"]) == ("s", str(out), True, True)
    assert doc["checks"][0] == {"name": "ledgerWellFormed", "scope": "study", "ok": True, "detail": "40 lines, seq 1..40"}
    acc = j.accounts
    assert acc is j.accounts  # built once
    assert acc["checks"] == {"ledgerWellFormed": True, "contractKept": True, "haltedAtExport": True,
                             "chargedEqualsStarts": True, "exitedCleanly": True, "resultsAccounted": True}
    assert acc["contract"] is None and acc["ledgerIssues"] == [] and acc["ledgerIssueCount"] == 0
    assert (acc["budget"], acc["balance"], acc["charged"], acc["records"], acc["lastSeq"]) == (50, 0, 50, 40, 40)
    assert acc["halt"]["kind"] == "halt" and acc["halts"] == 1 and acc["exports"] == [] and acc["exportCount"] == 0
    d1 = next(r for r in acc["runs"] if r["run"] == "d1")
    assert d1 == {"run": "d1", "purpose": "diagnosis", "cell": "c1", "round": 1, "container": "inforsi-s-d1",
                  "plans": [5], "charges": [{"seq": 6, "amount": 10, "balance": 40}], "starts": [7],
                  "results": [{"seq": 8, "exitCode": 0}]}
    kills = j.kills
    assert [k["kill"] for k in kills] == [1, 2] and kills[0]["trigger"] == "auto" and kills[0]["beforeKillSeq"] == 7
    assert kills[0]["files"]["kill.json"] == "ok" and kills[0]["windowOpen"] is False and kills[0]["gaps"] == 0
    assert kills[0]["checks"] == {"killDelivered": True, "killEvidence": True}
    assert kills[0]["details"]["killDelivered"] == "SIGKILL sent to pid 4242; its keeper recorded the end by SIGKILL"
    target = kills[0]["targets"][0]
    assert (target["run"], target["container"], target["resultSeq"]) == ("d1", "inforsi-s-d1", 8)
    assert target["events"]["forbidden"] == []
    assert target["events"]["dies"] == [
        {"Id": container_id("inforsi-s-d1"), "exitCode": 0, "timeNano": round((t(8) - 0.5) * 1e9)}]
    assert target["checks"] == {"sameContainerNoRerun": True, "chargedOnce": True, "resultSettledAndFinished": True}
    assert target["details"]["chargedOnce"] == "1 charge, 1 runStarted; no run planned after the kill repeats d1"
    assert set(target) == {"run", "container", "resultSeq", "events", "checks", "details"}


def test_the_kill_report_names_what_is_wrong(tmp_path: Path) -> None:
    files = derive(sound())
    files["kills/1/kill.json"]["targets"][0]["container"] = "not a name"
    del files["kills/1/container-events-live.jsonl"]
    add_event(files, 2, event("stop", container("a2"), in_window(files, 2, 0.2)), live=False)
    j = judge(write(files, tmp_path / "s"))
    one, two = j.kills
    assert one["files"]["container-events-live.jsonl"] == "container-events-live.jsonl: missing"
    assert one["files"]["kill.json"] == "ok"
    assert one["targets"][0]["container"] is None
    assert one["checks"]["killEvidence"] is False
    assert one["details"]["killEvidence"] == ("missing: container-events-live.jsonl; "
                                              "kill.json's target d1 disagrees with the ledger on container")
    a2 = two["targets"][0]
    assert a2["events"]["forbidden"] == [{"action": "stop", "timeNano": int(round(in_window(files, 2, 0.2) * 1e9))}]
    assert a2["details"]["sameContainerNoRerun"].startswith("stop of inforsi-s-a2 at")


def test_a_judgement_without_kills() -> None:
    from studymon.engine.judge import Judgement
    j = Judgement("s", Path("."), [], True, None, {})
    assert j.kills == [] and j.ok is True and j.accounts == {}
    assert Judgement("s", Path("."), [], True, None, lambda: {"a": 1}).accounts == {"a": 1}


def test_lines_that_are_not_events_are_named(tmp_path: Path) -> None:
    out = write(derive(sound()), tmp_path / "s")
    (out / "kills" / "1" / "container-events-live.jsonl").write_text(
        'x\n[1]\n{"Type": "container", "Action": 1, "seenAt": "2026-12-01T00:00:00.000Z"}\n{"Action": "die"}\n'
    )
    got = _checks(out)[("kill 1 · d1", "sameContainerNoRerun")]
    assert got == (False, "container-events-live.jsonl line 1: not JSON; container-events-live.jsonl line 2: a list, "
                          "not an event; container-events-live.jsonl line 3: an event without an Action "
                          "(and 1 more line that is not an event)")
    # A live line the console did not stamp (no seenAt) is not one of its lines, whatever the event.
    live = out / "kills" / "1" / "container-events-live.jsonl"
    lines = [json.loads(x) for x in _sound_live(tmp_path)]
    del lines[0]["seenAt"]
    live.write_text("".join(json.dumps(x) + "\n" for x in lines))
    got = _checks(out)[("kill 1 · d1", "sameContainerNoRerun")]
    assert got == (False, "container-events-live.jsonl line 1: a live event without its seenAt (a time), or with a "
                          "readBack that is not a boolean")


def _sound_live(tmp_path: Path) -> list[str]:
    out = write(derive(sound()), tmp_path / "sound-live")
    return (out / "kills" / "1" / "container-events-live.jsonl").read_text().splitlines()


def test_a_broken_ledger_is_reported_in_the_accounts(tmp_path: Path) -> None:
    files = derive(sound())
    files["study/ledger.jsonl"].insert(3, "garbage")
    files["study/ledger.jsonl"][5]["content"]["round"] = "2"
    out = write(files, tmp_path / "s")
    acc = judge(out).accounts
    assert acc["ledgerIssueCount"] == 1 and acc["ledgerIssues"][0]["kind"] == "malformed"
    assert acc["contract"] == "rule 6, line 6: runPlanned.round is a string, not an integer"
    assert acc["checks"]["ledgerWellFormed"] is False and acc["checks"]["contractKept"] is False


def test_a_garbage_ledger_is_not_read_to_its_end(tmp_path: Path) -> None:
    out = write(derive(sound()), tmp_path / "s")
    (out / "study" / "ledger.jsonl").write_bytes(b"x\n" * 1_000_000)  # two chunks of garbage
    got = _checks(out)
    assert got[("study", "ledgerWellFormed")][1].startswith("reading stopped after 524288 issues; line 1: malformed")
    assert got[("study", "contractKept")][1].startswith("the ledger cannot be judged: reading stopped after")


def test_many_targets_and_events_are_judged_in_linear_time(tmp_path: Path) -> None:
    import time

    from tests.corpus import add_event, event, in_window

    files = derive(sound())
    kill = files["kills/1/kill.json"]
    n = 5000
    kill["targets"] += [{"run": f"x{i}", "cell": "c", "round": 1, "planSeq": 1, "startSeq": 1,
                         "container": f"inforsi-s-x{i}"} for i in range(n)]
    for i in range(n):
        add_event(files, 1, event("start", f"inforsi-s-x{i}", in_window(files, 1, 0.5)))
    out = write(files, tmp_path / "s")
    began = time.monotonic()
    j = judge(out)
    assert time.monotonic() - began < 20  # about a second; quadratic would be minutes
    # Listed runs that were not in flight get no checks of their own: one reason, with their count.
    assert len(j.checks) == 20
    got = {(c.scope, c.name): c for c in j.checks}
    assert got[("kill 1", "killEvidence")].ok is False
    assert got[("kill 1", "killEvidence")].detail.startswith(f"kill.json lists {n} runs the kill did not leave unfinished at seq 7 (x0, x1, x10 and")
    assert [t["run"] for t in j.kills[0]["targets"]] == ["d1"]
    # The starts of the listed runs' containers are containers of the study made in the window.
    assert got[("kill 1 · d1", "sameContainerNoRerun")].ok is False
    assert "more containers of the study made in the window)" in got[("kill 1 · d1", "sameContainerNoRerun")].detail


def _manual_only() -> Files:
    """The sound study with both kills manual and nothing armed."""
    files = derive(sound())
    files["kills/1/kill.json"].update(trigger="manual", triggerSeq=None)
    del files["arms.jsonl"]
    return files


def test_arms_read_line_by_line(tmp_path: Path) -> None:
    files = _manual_only()
    assert ("study", "killTriggered") not in _checks(write(files, tmp_path / "a"))
    files["arms.jsonl"] = [{"event": "arm"}, {"event": "disarm"}]
    assert ("study", "killTriggered") not in _checks(write(files, tmp_path / "b"))
    files["arms.jsonl"] = [{"event": "disarm"}, {"event": "arm"}]
    assert _checks(write(files, tmp_path / "c"))[("study", "killTriggered")] == (
        False, "armed at after:runStarted/diagnosis, but the study finished without a kill there (none fired, none was missed)")
    files["arms.jsonl"] = [{"event": "arm"}, "not json", ["x"], {"event": "disarm"}]
    assert _checks(write(files, tmp_path / "d"))[("study", "killTriggered")] == (
        False, "arms.jsonl: 2 lines are not arming events")
    files["arms.jsonl"] = [{"event": "arm"}, {"event": "missed", "run": "d1", "detail": "late"}]
    # A missed point is not tested there: ? (§6.6, v4), never ✗.
    assert _checks(write(files, tmp_path / "e"))[("study", "killTriggered")] == (None, "missed d1, not tested: late")
    files["arms.jsonl"] = [{"event": "arm"}, {"event": "fired", "run": "d1", "kill": 1, "at": rfc3339_ms(t(7) + 0.05)},
                           {"event": "arm"}]
    got = _checks(write(files, tmp_path / "f"))[("study", "killTriggered")]
    assert got == (False, "kill 1 was not triggered automatically; kill 1 fired at seq ?, not at after:runStarted/diagnosis's "
                          "moment (seq 7, d1's runStarted); armed at after:runStarted/diagnosis, but the study finished "
                          "without a kill there (none fired, none was missed)")


def test_arms_fired_at_another_run(tmp_path: Path) -> None:
    files = derive(sound())
    files["arms.jsonl"][1]["run"] = "a1"
    assert _checks(write(files, tmp_path / "s"))[("study", "killTriggered")] == (
        False, "arms.jsonl says kill 1 fired at a1, not at d1")


def test_ledger_watch_lines(tmp_path: Path) -> None:
    files = derive(sound())
    at = rfc3339_ms(t(20))
    files["ledger-watch.jsonl"] = [{"event": "truncated", "at": at, "offset": 9, "size": 1, "line": 2}] * 4 + ["bad"]
    got = _checks(write(files, tmp_path / "a"))[("study", "ledgerWellFormed")]
    assert got == (False, f"the ledger was truncated while watched at {at}; the ledger was truncated while watched at "
                          f"{at}; the ledger was truncated while watched at {at} (and 2 more changes seen while watched)")
    files["ledger-watch.jsonl"] = ["bad", {"event": "replaced", "at": at}]
    got = _checks(write(files, tmp_path / "b"))[("study", "ledgerWellFormed")]
    assert got == (False, f"ledger-watch.jsonl line 1: not JSON; the ledger was replaced while watched at {at}")
    out = write(derive(sound()), tmp_path / "c")
    (out / "ledger-watch.jsonl").write_text("")
    assert _checks(out)[("study", "ledgerWellFormed")][0] is True
    os.mkfifo(out / "ledger-watch.jsonl.fifo")
    (out / "ledger-watch.jsonl").unlink()
    os.rename(out / "ledger-watch.jsonl.fifo", out / "ledger-watch.jsonl")
    assert _checks(out)[("study", "ledgerWellFormed")] == (False, "ledger-watch.jsonl: not a regular file (a FIFO)")


def test_more_changes_seen_while_watched(tmp_path: Path) -> None:
    files = derive(sound())
    files["ledger-watch.jsonl"] = ["bad"] * 7
    got = _checks(write(files, tmp_path / "s"))[("study", "ledgerWellFormed")]
    assert got[1].endswith("line 3: not JSON (and 4 more changes seen while watched)")


@pytest.mark.parametrize("lines, stopped", [(10_000, False), (10_001, True)])
def test_the_issue_limit(tmp_path: Path, lines: int, stopped: bool) -> None:
    out = write(derive(sound()), tmp_path / "s")
    (out / "study" / "ledger.jsonl").write_bytes(b"x\n" * lines)
    got = _checks(out)[("study", "ledgerWellFormed")][1]
    assert got.startswith(f"reading stopped after {lines} issues") is stopped
    acc = judge(out).accounts
    assert acc["ledgerIssueCount"] == lines and len(acc["ledgerIssues"]) == 1000


def test_files_that_cannot_be_read_say_why(tmp_path: Path) -> None:
    out = write(derive(sound()), tmp_path / "s")
    for name in ("research.json", "launches.jsonl"):
        (out / name).unlink()
        os.mkfifo(out / name)
    got = _checks(out)
    assert got[("study", "contractKept")] == (False, "rule 4 cannot be checked: research.json: not a regular file (a FIFO)")
    assert got[("study", "exitedCleanly")] == (False, "launches.jsonl: not a regular file (a FIFO)")
    assert got[("kill 1", "killDelivered")] == (False, "launches.jsonl: not a regular file (a FIFO)")


def test_an_unreadable_ledger_fails_every_check_that_needs_it(tmp_path: Path) -> None:
    out = write(derive(sound()), tmp_path / "s")
    (out / "study" / "ledger.jsonl").unlink()
    os.mkfifo(out / "study" / "ledger.jsonl")
    why = "study/ledger.jsonl: not a regular file (a FIFO)"
    got = _checks(out)
    assert got[("study", "ledgerWellFormed")] == (False, why)
    for key in [("study", "contractKept"), ("study", "haltedAtExport"), ("study", "killTriggered"), ("kill 1", "killEvidence"),
                ("kill 1 · d1", "chargedOnce"), ("kill 1 · d1", "resultSettledAndFinished"),
                ("kill 1 · d1", "sameContainerNoRerun"), ("study", "chargedEqualsStarts")]:
        assert got[key][0] is False and got[key][1].startswith(f"the ledger cannot be judged: {why}"), key
    assert got[("study", "exitedCleanly")][0] is True and got[("kill 1", "killDelivered")][0] is True


def test_a_bad_prefix_alone_stops_the_container_checks(tmp_path: Path) -> None:
    files = derive(sound())
    files["research.json"]["containerPrefix"] = "-bad"
    got = _checks(write(files, tmp_path / "s"))
    assert got[("kill 1 · d1", "sameContainerNoRerun")] == (
        False, "the container names cannot be checked: research.json: containerPrefix is not a container name prefix")


def test_every_kill_is_compared_with_the_ledger(tmp_path: Path) -> None:
    files = derive(sound())
    del files["kills/1/ledger-at-kill.json"]
    files["kills/2/ledger-at-kill.json"][5]["kind"] = "forged"
    got = _checks(write(files, tmp_path / "s"))
    assert got[("kill 1", "killEvidence")] == (False, "missing: ledger-at-kill.json")
    assert got[("kill 2", "killEvidence")] == (False, "ledger-at-kill.json differs from the ledger at record 6 (seq 6)")


def test_an_unreadable_arms_file_fails_killtriggered(tmp_path: Path) -> None:
    out = write(_manual_only(), tmp_path / "s")
    os.mkfifo(out / "arms.jsonl")
    assert _checks(out)[("study", "killTriggered")] == (False, "arms.jsonl: not a regular file (a FIFO)")


def test_issues_kept_across_chunks(tmp_path: Path) -> None:
    out = write(derive(sound()), tmp_path / "s")
    (out / "study" / "ledger.jsonl").write_bytes((b"x" * 2000 + b"\n") * 1200)  # about three chunks
    acc = judge(out).accounts
    assert acc["ledgerIssueCount"] == 1200 and len(acc["ledgerIssues"]) == 1000
    assert [i["line"] for i in acc["ledgerIssues"][:3]] == [1, 2, 3] and acc["ledgerIssues"][-1]["line"] == 1000


def test_armed_and_finished_without_a_diagnosis_run(tmp_path: Path) -> None:
    files = _manual_only()
    for r in files["study/ledger.jsonl"]:
        if r["kind"] == "runPlanned" and r["content"]["purpose"] == "diagnosis":
            r["content"]["purpose"] = "probe"
    files["arms.jsonl"] = [{"event": "arm"}]
    out = write(files, tmp_path / "s")
    assert _checks(out)[("study", "killTriggered")] == (False, "armed at after:runStarted/diagnosis, but the study finished without a kill there (none fired, none was missed)")
    files["launches.jsonl"].append({"event": "start", "pid": 9, "at": rfc3339_ms(t(99)), "resume": True})
    out = write(files, tmp_path / "t")
    assert _checks(out)[("study", "killTriggered")] == (
        None, "armed at after:runStarted/diagnosis; its moment has not come yet")


# --- the size caps of the folder's files, and of all its kills together ----------------------------


def _sparse(path: Path, size: int) -> None:
    with open(path, "wb") as fh:
        fh.truncate(size)


def test_each_file_is_refused_past_its_own_cap(tmp_path: Path) -> None:
    from studymon.engine.contract.folder import EvidenceFolder, KillFolder

    out = write(derive(sound()), tmp_path / "s")
    _sparse(out / "kills" / "1" / "kill.json", KillFolder.CAPS[KillFolder.KILL] + 1)
    _sparse(out / "launches.jsonl", EvidenceFolder.CAPS[EvidenceFolder.LAUNCHES] + 1)
    got = {(c.scope, c.name): c for c in judge(out).checks}
    assert got[("kill 1", "killEvidence")].ok is False
    assert "at most 8.0 MiB" in got[("kill 1", "killEvidence")].detail, got[("kill 1", "killEvidence")].detail
    assert got[("study", "exitedCleanly")].ok is False
    assert "at most 4.0 MiB" in got[("study", "exitedCleanly")].detail, got[("study", "exitedCleanly")].detail


def test_the_kill_folders_together_keep_within_their_budget(tmp_path: Path) -> None:
    """A folder of many kills, each within its caps, is read only up to what all kills together may hold."""
    from studymon.engine.contract.folder import KillFolder

    out = write(derive(sound()), tmp_path / "s")
    each = KillFolder.CAPS[KillFolder.BEFORE]  # a sparse snapshot: its bytes are counted, not stored
    # Kills 1 and 2 hold a few KiB: the kill that brings the others to the budget passes it.
    over = 2 + KillFolder.BUDGET // each
    for n in range(3, over + 2):
        folder = out / "kills" / str(n)
        folder.mkdir()
        _sparse(folder / KillFolder.BEFORE, each)
    # A file the judge does not read counts for nothing.
    _sparse(out / "kills" / "1" / "notes.bin", 10 * KillFolder.BUDGET)
    got = {(c.scope, c.name): c for c in judge(out).checks}
    unread = f"kills/ holds more than {KillFolder.BUDGET >> 20} MiB up to kills/{over}/"
    assert unread not in got[(f"kill {over - 1}", "killEvidence")].detail
    for n in (over, over + 1):
        assert got[(f"kill {n}", "killEvidence")].ok is False and got[(f"kill {n}", "killEvidence")].detail.startswith(
            unread if n == over else f"kills/ holds more than {KillFolder.BUDGET >> 20} MiB up to kills/{n}/")
    assert got[("kill 1", "killEvidence")].ok is True and got[("kill 2", "killEvidence")].ok is True


@pytest.mark.parametrize("name", ["container-events-live.jsonl", "container-events.jsonl"])
def test_the_kills_event_recordings_together_keep_within_their_budget(tmp_path: Path, name: str) -> None:
    """The recordings, the dearest bytes to judge, have a budget of their own within the kills' budget."""
    from studymon.engine.contract.folder import KillFolder

    out = write(derive(sound()), tmp_path / "s")
    each = KillFolder.RECORDINGS_BUDGET // 4
    over = 2 + KillFolder.RECORDINGS_BUDGET // each  # kills 1 and 2's own recordings tip the last one over
    for n in range(3, over + 1):
        folder = out / "kills" / str(n)
        folder.mkdir()
        _sparse(folder / name, each)
    assert (over - 2) * each < KillFolder.BUDGET  # within the kills' whole budget: the recordings' is what stops
    got = {(c.scope, c.name): c for c in judge(out).checks}
    unread = f"kills/ holds more than {KillFolder.RECORDINGS_BUDGET >> 20} MiB of event recordings up to kills/{over}/"
    assert got[(f"kill {over}", "killEvidence")].ok is False
    assert got[(f"kill {over}", "killEvidence")].detail.startswith(unread), got[(f"kill {over}", "killEvidence")].detail
    assert unread.split(" up to")[0] not in got[(f"kill {over - 1}", "killEvidence")].detail


def test_kill_folders_past_the_limit_are_one_unread_kill(tmp_path: Path) -> None:
    """However many kill folders there are, the first LIMIT are judged and one stands for all the rest."""
    import shutil

    from studymon.engine.contract.folder import KillFolder

    out = write(derive(sound()), tmp_path / "s")
    last = 3 * KillFolder.LIMIT
    for n in range(3, last + 1):
        shutil.copytree(out / "kills" / "2", out / "kills" / str(n))
    judgement = judge(out)
    scopes = {c.scope for c in judgement.checks if c.scope.startswith("kill ")}
    first_unread = KillFolder.LIMIT + 1
    assert f"kill {KillFolder.LIMIT}" in scopes and f"kill {first_unread}" in scopes
    assert not any(f"kill {n}" in scopes or f"kill {n} ·" in " ".join(scopes) for n in range(first_unread + 1, last + 1))
    assert len(judgement.kills) == first_unread
    got = {(c.scope, c.name): c for c in judgement.checks}
    detail = got[(f"kill {first_unread}", "killEvidence")].detail
    assert got[(f"kill {first_unread}", "killEvidence")].ok is False
    assert detail.startswith(
        f"kills/ holds more than {KillFolder.LIMIT} kill folders, more than a study's kills and crashes: "
        f"kills/{first_unread}/ and those after it not read"
    ), detail
    assert got[(f"kill {KillFolder.LIMIT}", "killEvidence")].ok is not False
    assert judgement.ok is False


def test_kill_folders_at_the_limit_are_all_read(tmp_path: Path) -> None:
    import shutil

    from studymon.engine.contract.folder import KillFolder

    out = write(derive(sound()), tmp_path / "s")
    for n in range(3, KillFolder.LIMIT + 1):
        shutil.copytree(out / "kills" / "2", out / "kills" / str(n))
    checks = judge(out).checks
    assert not any("kill folders" in c.detail for c in checks)
    assert {c.scope for c in checks if c.name == "killEvidence"} == {f"kill {n}" for n in range(1, KillFolder.LIMIT + 1)}



@pytest.mark.parametrize(
    "name, scope, check",
    [
        ("launches.jsonl", "study", "exitedCleanly"),
        ("arms.jsonl", "study", "killTriggered"),
        ("ledger-watch.jsonl", "study", "ledgerWellFormed"),
        ("timeline.jsonl", "kill 1", "killEvidence"),
        # A recording's lines that are not events fail each target's sameContainerNoRerun, however many (docs/
        # contract.md, "Which check a file fails"): read in part, it is not unreadable for killEvidence.
        ("kills/1/container-events-live.jsonl", "kill 1 · d1", "sameContainerNoRerun"),
        ("kills/1/container-events.jsonl", "kill 1 · d1", "sameContainerNoRerun"),
    ],
)
def test_reading_stops_past_the_bad_line_limit(tmp_path: Path, name: str, scope: str, check: str) -> None:
    """A file of lines that are not its records is read up to BAD_LINES of them, then refused: its checks fail."""
    from studymon.engine.judge.read import BAD_LINES

    what = "changes of the ledger seen while watched" if name == "ledger-watch.jsonl" else "lines that are not its records"
    stopped = f"{name.rsplit('/', 1)[-1]}: more than {BAD_LINES} {what}: reading stopped"
    at = {}
    for n, label in ((BAD_LINES, "at"), (BAD_LINES + 1, "past")):
        files = derive(sound())
        if name == "timeline.jsonl":
            files[name] = [0] * n + files[name]  # before the lines it needs: the limit is what stops it
        else:
            files[name] = list(files.get(name, [])) + [0] * n
        got = {(c.scope, c.name): c for c in judge(write(files, tmp_path / label)).checks}
        at[label] = got
        detail = " ".join(c.detail for c in got.values())
        assert (stopped in detail) is (label == "past"), (label, detail[:500])
    # At the limit the file is still read and judged (a bad line may fail it already); past it the
    # check that needs the file fails, saying why.
    assert at["past"][(scope, check)].ok is False
    if name.startswith("kills/"):
        assert at["past"][("kill 1", "killEvidence")].ok is True, at["past"][("kill 1", "killEvidence")].detail
    if name == "timeline.jsonl":
        # A line that is not a record seen leaves the kill's seen times untold (docs/contract.md, "Which check a
        # file fails"); past the limit the reason is that reading stopped.
        assert at["at"][(scope, check)].detail == "timeline.jsonl line 1: a timeline line without a seq"
        assert stopped in at["past"][(scope, check)].detail


def test_a_timeline_line_far_past_the_ledger_holds_no_memory(tmp_path: Path) -> None:
    """The seen times are held for records a ledger within its cap can have, not for any seq a line names."""
    import tracemalloc

    from studymon.engine.judge.read import MAX_SEEN

    files = derive(sound())
    line = dict(files["timeline.jsonl"][-1])
    line["seq"] = 40_000_000
    files["timeline.jsonl"] = files["timeline.jsonl"] + [line]
    out = write(files, tmp_path / "s")
    tracemalloc.start()
    try:
        judgement = judge(out)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    # A record seen that no ledger within its cap can hold: the ledger lost it after it was seen (§6.9).
    assert [(c.name, c.ok) for c in judgement.checks if c.ok is not True] == [("ledgerWellFormed", False)]
    assert MAX_SEEN * 8 < 8 << 20
    assert peak < 32 << 20, peak


def test_a_judgement_leaves_the_collector_as_it_found_it(tmp_path: Path) -> None:
    """The judge makes the cyclic collector run less often while it runs (YOUNG_COLLECTION), and only then."""
    import gc
    import threading

    from studymon.engine.judge import report

    out = write(derive(sound()), tmp_path / "s")
    before = gc.get_threshold()
    seen: list[tuple[int, int, int]] = []
    read_study = report.read_study

    def spy(folder: Path) -> Any:
        seen.append(gc.get_threshold())
        return read_study(folder)

    report.read_study = spy  # type: ignore[assignment]
    try:
        threads = [threading.Thread(target=judge, args=(out,)) for _ in range(4)]
        for th in threads:
            th.start()
        for th in threads:
            th.join()
        with pytest.raises(NotEvidence):
            judge(tmp_path / "nothing")
    finally:
        report.read_study = read_study  # type: ignore[assignment]
    assert len(seen) == 4 and all(s[0] == max(report.YOUNG_COLLECTION, before[0]) for s in seen), seen
    assert gc.get_threshold() == before


# --- what a ledger within its cap may ask of the judge: bounded, whatever it holds ------------------


def _ledger_only(out: Path, records: list[tuple[str, dict[str, Any]]], kills: list[int]) -> Path:
    """A folder of a ledger (``records`` after studyOpen), research.json, one controller, and kill.json files
    (each killing that controller at a seq of ``kills``)."""
    from studymon.engine.io.clock import rfc3339_ns

    at = rfc3339_ms(t(0))
    lines = [{"seq": 1, "at": at, "kind": "studyOpen", "content": {"study": "s", "budget": 0, "config": {}}}]
    lines += [{"seq": i, "at": at, "kind": kind, "content": c} for i, (kind, c) in enumerate(records, 2)]
    (out / "study").mkdir(parents=True)
    (out / "study" / "ledger.jsonl").write_text("".join(json.dumps(r) + "\n" for r in lines))
    (out / "research.json").write_text(json.dumps({"command": ["x"], "study": "s", "backend": "process"}))
    (out / "launches.jsonl").write_text(json.dumps({"event": "start", "pid": 5, "at": at, "resume": False}) + "\n")
    for n, seq in enumerate(kills, 1):
        (out / "kills" / str(n)).mkdir(parents=True)
        (out / "kills" / str(n) / "kill.json").write_text(json.dumps(
            {"trigger": "manual", "at": at, "pid": 5, "beforeKillSeq": seq, "targets": [], "signalled": True,
             "since": rfc3339_ns(int(t(0) * 1e9)), "sinceEpoch": t(0)}))
    return out


def _in_flight(n: int, experiments: Any = None, work: str = "c{i}") -> list[tuple[str, dict[str, Any]]]:
    records = []
    for i in range(n):
        exps = experiments if experiments is not None else [f"e{i}"]
        records += [("runPlanned", {"run": f"r{i}", "purpose": "p", "object": work.format(i=i), "round": 1,
                                    "experiments": exps}),
                    ("charge", {"run": f"r{i}", "amount": 0, "balance": 0}),
                    ("runStarted", {"run": f"r{i}", "container": f"inforsi-s-r{i}"})]
    return records


def test_runs_in_flight_are_judged_one_by_one_up_to_a_bound(tmp_path: Path) -> None:
    """Past TARGETS_PER_KILL a kill (and TARGETS_IN_ALL over all kills), runs in flight are one ✗, not three checks each."""
    from studymon.engine.judge.kill import TARGETS_IN_ALL, TARGETS_PER_KILL

    n = TARGETS_PER_KILL + 36
    kills = TARGETS_IN_ALL // TARGETS_PER_KILL + 2
    out = _ledger_only(tmp_path / "s", _in_flight(n), [1 + 3 * n] * kills)
    j = judge(out)
    per_kill = [r for r in j.kills]
    assert [len(r["targets"]) for r in per_kill] == [TARGETS_PER_KILL] * (TARGETS_IN_ALL // TARGETS_PER_KILL) + [0, 0]
    got = {(c.scope, c.name): c for c in j.checks}
    for k in range(1, kills + 1):
        detail = got[(f"kill {k}", "killEvidence")].detail
        judged = TARGETS_PER_KILL if k <= TARGETS_IN_ALL // TARGETS_PER_KILL else 0
        assert got[(f"kill {k}", "killEvidence")].ok is False
        assert f"more runs in flight at seq {1 + 3 * n} than the judge follows one by one (the first {judged} are judged" in detail, detail
    assert len(j.checks) == 6 + 2 * kills + 3 * TARGETS_IN_ALL
    # At the bound, every run in flight is judged, and none is said to be left.
    out = _ledger_only(tmp_path / "t", _in_flight(TARGETS_PER_KILL), [1 + 3 * TARGETS_PER_KILL])
    j = judge(out)
    assert len(j.kills[0]["targets"]) == TARGETS_PER_KILL
    assert not any("one by one" in c.detail for c in j.checks)


def test_twins_are_found_through_their_experiments_not_pair_by_pair(tmp_path: Path) -> None:
    """Thousands of targets and of twins of their work: found in time that follows the ledger, the count said."""
    import time

    from studymon.engine.judge.kill import TARGETS_IN_ALL
    from studymon.engine.judge.target import PlansAfter

    m = 4000
    records = _in_flight(TARGETS_IN_ALL, experiments=["e"], work="c")
    records += [("runPlanned", {"run": f"t{i}", "purpose": "p", "object": "c", "round": 1, "experiments": ["e", f"x{i}"]})
                for i in range(m)]
    out = _ledger_only(tmp_path / "s", records, [1 + 3 * TARGETS_IN_ALL])
    began = time.process_time()
    j = judge(out)
    spent = time.process_time() - began
    assert spent < 20, spent  # about a second; pair by pair, 256 x 4000 sets: a minute and more
    got = {(c.scope, c.name): c for c in j.checks}
    once = got[("kill 1 · r0", "chargedOnce")]
    assert once.ok is False
    assert once.detail.startswith("run t0 (planned at seq")
    assert f"(and at least {PlansAfter.FOUND - 3 + 1} more such runs)" in once.detail, once.detail


def test_a_run_settled_thousands_of_times_is_judged_at_once(tmp_path: Path) -> None:
    """Each settlement after the first breaks rule 11 whatever it holds: its plan's ids are not worked out again."""
    import time

    e, s = 20_000, 3000
    records = [("runPlanned", {"run": "r", "purpose": "diagnosis", "object": "c", "round": 1,
                               "experiments": [f"e{i}" for i in range(e)]}),
               ("charge", {"run": "r", "amount": 0, "balance": 0}),
               ("runStarted", {"run": "r", "container": "inforsi-s-r"}),
               ("runResult", {"run": "r", "exitCode": 0, "outputs": {}})]
    records += [("diagnosisSettlement", {"round": 1, "run": "r", "dropped": [], "judged": {"experiments": []}})] * s
    out = _ledger_only(tmp_path / "s", records, [])
    began = time.process_time()
    checks = {(c.scope, c.name): c for c in judge(out).checks}
    assert time.process_time() - began < 20  # under a second; once per settlement: minutes
    assert checks[("study", "contractKept")].ok is False


# --- what the judge reads and puts together, where a slip would change a verdict ---------------------

from tests.corpus import Entry, find  # noqa: E402


def test_a_ledger_not_written_yet_is_unknown_until_the_study_has_finished(tmp_path: Path) -> None:
    """The controller ended before it wrote its ledger: while the study can be resumed the resume may still write it
    (every check that needs the ledger ?), once it has finished it never will (✗)."""
    files = {rel: v for rel, v in derive(sound()).items() if rel in ("research.json", "launches.jsonl", "machine.jsonl", "outcome.json")}
    files["launches.jsonl"] = [files["launches.jsonl"][0],
                               {"event": "end", "pid": FIRST_PID, "at": rfc3339_ms(t(1)), "code": 1, "signal": None}]
    missing = "study/ledger.jsonl: missing"
    cannot = f"the ledger cannot be judged: {missing}"
    assert _checks(write(files, tmp_path / "resumable")) == {
        ("study", "ledgerWellFormed"): (None, missing),
        ("study", "contractKept"): (None, cannot),
        ("study", "haltedAtExport"): (None, cannot),
        ("study", "chargedEqualsStarts"): (None, cannot),
        ("study", "exitedCleanly"): (None, "the controller ended with exit 1; `studymon run --resume` continues it"),
        ("study", "resultsAccounted"): (None, cannot),
    }
    files["launches.jsonl"][-1]["code"] = 0
    no_budget = "no budget: studyOpen is missing or has no numeric budget"
    assert _checks(write(files, tmp_path / "finished")) == {
        ("study", "ledgerWellFormed"): (False, missing),
        ("study", "contractKept"): (False, cannot),
        ("study", "haltedAtExport"): (False, cannot),
        ("study", "chargedEqualsStarts"): (False, f"{cannot}; {no_budget}"),
        ("study", "exitedCleanly"): (True, f"exit 0 (pid {FIRST_PID})"),
        ("study", "resultsAccounted"): (False, cannot),
    }


def _written_after_kill_1(*entries: Entry, resumed_after: float = 0.12) -> Files:
    """The sound study with ``entries`` written just after kill 1 (from seq 8, each seen 0.1 s after T+seq), and the
    resumed controller started ``resumed_after`` seconds after T+seq of the last of them."""
    s = sound()
    at = find(s, "runResult", run="d1")
    s.entries[at:at] = entries
    files = derive(s)
    starts = [line for line in files["launches.jsonl"] if line["event"] == "start"]
    starts[1]["at"] = rfc3339_ms(t(7 + len(entries)) + resumed_after)  # the controller resumed after kill 1
    return files


def test_a_record_of_no_known_kind_after_the_kill_is_named_not_quoted(tmp_path: Path) -> None:
    """A record of a kind the contract does not know is otherwise ignored, but one seen before the resumed controller
    started was written by something that outlived the kill: killEvidence says so without quoting its kind, and a
    run in it that is no run id names no target."""
    outlived = "seq 8 (a record) was seen while no controller started after the kill ran"
    for name, content in (("text", {"text": "x"}), ("list-run", {"run": ["d1"]}), ("other-run", {"run": "d1\x1b[2J"})):
        got = _checks(write(_written_after_kill_1(Entry("note\x1b[2J", content)), tmp_path / name))
        wrong = {k: v for k, v in got.items() if v[0] is not True}
        assert wrong == {("kill 1", "killEvidence"): (False, outlived)}, name
    # Each such record is counted.
    notes = [Entry("note", {"text": str(i)}) for i in range(3)]
    assert _checks(write(_written_after_kill_1(*notes), tmp_path / "three"))[("kill 1", "killEvidence")] == (
        False, "seq 8 (a record) was seen while no controller started after the kill ran (and 2 more such records)")


def test_a_record_seen_within_the_stamps_rounding_of_the_resumed_start_is_its(tmp_path: Path) -> None:
    """The keeper's start and the console's seenAt are milliseconds of one clock: a record seen in the millisecond
    the resumed controller started, or up to two before it, is that controller's; three before, it is not."""
    note = Entry("note", {"text": "x"})
    for after in (0.1, 0.101, 0.102):
        got = _checks(write(_written_after_kill_1(note, resumed_after=after), tmp_path / str(after)))
        assert all(ok is True for ok, _ in got.values()), (after, got)
    got = _checks(write(_written_after_kill_1(note, resumed_after=0.103), tmp_path / "late"))
    assert got[("kill 1", "killEvidence")] == (
        False, "seq 8 (a record) was seen while no controller started after the kill ran")


def test_lines_that_are_not_launches_are_named_and_counted(tmp_path: Path) -> None:
    """Four lines of launches.jsonl that are not launches (a torn one among them): the first three named, the
    fourth counted."""
    files = derive(sound())
    files["launches.jsonl"][1:1] = ['{"event": "end", "pid"', ["a list"], {"event": "stop", "pid": 1}, 7]
    named = ("launches.jsonl line 2: not JSON; launches.jsonl line 3: a list, not a launch; launches.jsonl line 4: "
             "a line whose event is neither start nor end (and 1 more line that is not a launch)")
    assert _checks(write(files, tmp_path / "s"))[("study", "exitedCleanly")] == (False, named)


def test_an_empty_ledger_of_a_study_that_may_still_write_it_is_unknown(tmp_path: Path) -> None:
    """The controller ended (exit 1) leaving an empty ledger: what needs a record is ?, what holds over none holds,
    and nothing raises (the pass text of chargedEqualsStarts once formatted the missing budget)."""
    files = {rel: v for rel, v in derive(sound()).items() if rel in ("research.json", "launches.jsonl", "machine.jsonl", "outcome.json")}
    files["launches.jsonl"] = [files["launches.jsonl"][0],
                               {"event": "end", "pid": FIRST_PID, "at": rfc3339_ms(t(1)), "code": 1, "signal": None}]
    files["study/ledger.jsonl"] = b""
    got = _checks(write(files, tmp_path / "s"))
    assert got[("study", "chargedEqualsStarts")] == (None, "no budget yet: the ledger has no record")
    assert {k: v[0] for k, v in got.items()} == {
        ("study", "ledgerWellFormed"): None, ("study", "contractKept"): True, ("study", "haltedAtExport"): None,
        ("study", "chargedEqualsStarts"): None, ("study", "exitedCleanly"): None, ("study", "resultsAccounted"): True}
    proc = _report(tmp_path / "s")
    assert proc.returncode == 3 and "Traceback" not in proc.stderr, proc.stderr


@pytest.mark.parametrize("kind", ["decision", "note"])
def test_a_record_naming_a_target_but_of_no_run_kind_written_while_no_controller_ran_is_a_stray(
        tmp_path: Path, kind: str) -> None:
    """Records of a target's run kinds are its checks'; any other record that names it is killEvidence's."""
    files = _written_after_kill_1(Entry(kind, {"name": "x", "round": 1, "output": {}, "run": "d1"}), resumed_after=0.5)
    got = _checks(write(files, tmp_path / "s"))
    ok, detail = got[("kill 1", "killEvidence")]
    shown = kind if kind == "decision" else "a record"
    assert ok is False and detail.startswith(f"seq 8 ({shown}) was seen while no controller started after the kill ran"), detail


def test_a_target_s_own_record_written_while_no_controller_ran_fails_its_check(tmp_path: Path) -> None:
    """A plan, a charge or a start of the target written after the kill and before the resumed controller began
    is chargedOnce's to fail; its result is resultSettledAndFinished's; each names the record and says why."""
    for kind, content, check in (
        ("runPlanned", {"run": "d1", "purpose": "diagnosis", "object": "c0", "round": 1, "experiments": ["e1a"]},
         "chargedOnce"),
        ("charge", {"run": "d1", "amount": 0, "balance": 0}, "chargedOnce"),
        ("runStarted", {"run": "d1", "container": container("d1")}, "chargedOnce"),
        ("runResult", {"run": "d1", "exitCode": 0, "outputs": {}}, "resultSettledAndFinished"),
    ):
        got = _checks(write(_written_after_kill_1(Entry(kind, content)), tmp_path / kind))
        ok, detail = got[("kill 1 · d1", check)]
        said = f"seq 8 ({kind}) was seen while no controller started after the kill ran: " \
               "written by something that outlived the kill"
        assert ok is False and said in detail.split("; "), (kind, detail)


# --- the reading's caps, bounds and boundaries, where run 3's survivors showed them unpinned ---------
# (docs/mutation.md, "Run 3's survivors beyond the table": the read.py test gaps, each with its input.)

from studymon.engine.contract.folder import KillFolder  # noqa: E402
from studymon.engine.judge.read import FIRED_KEPT, MAX_SEEN  # noqa: E402
from tests.corpus import kill_events  # noqa: E402


def _not_holding(out: Path) -> dict[tuple[str, str], Any]:
    return {key: got for key, got in _checks(out).items() if got[0] is not True}


def _pad(path: Path, size: int) -> None:
    """The file's JSON followed by spaces up to ``size`` bytes: the same value, that many bytes."""
    text = path.read_bytes()
    assert len(text) <= size
    path.write_bytes(text + b" " * (size - len(text)))


def _shift_seqs(files: Files, first: int, by: int) -> None:
    """Every seq from ``first`` on made ``by`` later, in every file that names one: a ledger that skips seqs."""

    def moved(seq: Any) -> Any:
        return seq + by if isinstance(seq, int) and seq >= first else seq

    for rel, value in files.items():
        name = rel.rsplit("/", 1)[-1]
        if name in ("ledger.jsonl", "timeline.jsonl", KillFolder.AT_KILL):
            for line in value:
                line["seq"] = moved(line["seq"])
        elif name == KillFolder.KILL:
            value["beforeKillSeq"], value["triggerSeq"] = moved(value["beforeKillSeq"]), moved(value["triggerSeq"])
            for target in value["targets"]:
                target["planSeq"], target["startSeq"] = moved(target["planSeq"]), moved(target["startSeq"])
        elif name == KillFolder.WINDOW:
            for entry in value["targets"].values():
                entry["resultSeq"] = moved(entry["resultSeq"])


def test_fired_lines_past_the_kept_are_read_past(tmp_path: Path) -> None:
    """arms.jsonl's fired lines are judged up to FIRED_KEPT (16); a 17th is not judged, nor counted."""
    files = _manual_only()
    # Each taken in turn, as a console writes them: armed, then fired (a fired line with no point armed fails alone).
    files["arms.jsonl"] = [{"event": "arm"}, {"event": "fired", "kill": "x", "run": "d1"}] * (FIRED_KEPT + 1)
    bad = "arms.jsonl has a fired line whose kill is a string, not a number"
    assert _not_holding(write(files, tmp_path / "s")) == {
        ("study", "killTriggered"): (False, f"{bad}; {bad}; {bad}; and 13 more")
    }


def test_missed_lines_past_three_are_not_kept(tmp_path: Path) -> None:
    """killTriggered names the first three missed lines and does not count the rest (docs/mutation.md)."""
    files = _manual_only()
    files["arms.jsonl"] = [
        line for i in range(1, 5) for line in ({"event": "arm"}, {"event": "missed", "run": "d1", "detail": f"late {i}"})
    ]
    assert _not_holding(write(files, tmp_path / "s")) == {
        ("study", "killTriggered"): (
            None,
            "missed d1, not tested: late 1; missed d1, not tested: late 2; missed d1, not tested: late 3",
        )
    }


def test_the_events_of_an_open_window_are_tallied_from_kill_json_s_since(tmp_path: Path) -> None:
    """No window file yet (the study runs on): the events are judged from kill.json's since; a window file that
    is there but unusable leaves them unjudged."""
    files = derive(sound())
    del files["kills/1/container-events-window.json"], files["kills/1/container-events.jsonl"]
    files["launches.jsonl"].append({"event": "start", "pid": 9, "at": rfc3339_ms(t(99)), "resume": True})
    out = write(files, tmp_path / "open")
    assert _checks(out)[("kill 1 · d1", "sameContainerNoRerun")] == (
        None,
        "window still open; `studymon run --resume` continues it",
    )
    report = judge(out).kills[0]
    assert report["windowOpen"] is True and report["gaps"] == 0
    assert report["targets"][0]["events"] == {
        "forbidden": [],
        "dies": [{"Id": container_id(container("d1")), "exitCode": 0, "timeNano": round((t(8) - 0.5) * 1e9)}],
    }
    files = derive(sound())
    files["kills/1/container-events-window.json"] = []
    out = write(files, tmp_path / "unusable")
    report = judge(out).kills[0]
    assert report["gaps"] is None and report["targets"][0]["events"] is None
    assert report["files"]["container-events-window.json"] == (
        "container-events-window.json: a list where a JSON object belongs"
    )


def test_a_container_made_for_a_run_planned_but_never_started_is_off_the_books(tmp_path: Path) -> None:
    """x9, planned after kill 2 and never started in the ledger, has its container made in the window: off the
    books (✗ once the study has finished, ? while it may still write x9's runStarted), not work of a run that
    was not waiting to start."""
    s = sound()
    s.entries.insert(
        find(s, "runStarted", run="d3") + 1,
        Entry("runPlanned", {"run": "x9", "purpose": "probe", "object": "cz", "round": 3, "experiments": ["ez"]}),
    )
    files = derive(s)
    made = [event(verb, container("x9"), in_window(files, 2, at)) for verb, at in (("create", 0.5), ("start", 0.51))]
    for e in made:
        add_event(files, 2, e)
    said = [
        f"{e['Action']} of inforsi-s-x9 at {rfc3339_ms(e['timeNano'] / 1e9)} in the window, "
        "and no runStarted names it"
        for e in made
    ]
    targets = ("kill 2 · a2", "kill 2 · d3")
    assert _not_holding(write(files, tmp_path / "finished")) == {
        (scope, "sameContainerNoRerun"): (False, "; ".join(said)) for scope in targets
    }
    files["launches.jsonl"][-1]["code"] = 1
    got = _checks(write(files, tmp_path / "resumable"))
    for scope in targets:
        assert got[(scope, "sameContainerNoRerun")] == (None, f"{said[0]} yet")


def test_a_gap_line_in_the_read_back_is_a_bad_line_not_a_gap(tmp_path: Path) -> None:
    """A gap line is the console's, in the live recording; in the read-back (the runtime's own events) it is a
    line that is not an event, even when it is a well-formed gap in the window."""
    files = derive(sound())
    gap = {"gap": {"from": rfc3339_ms(in_window(files, 1, 0.1)), "to": rfc3339_ms(in_window(files, 1, 0.2))}}
    live, back = kill_events(files, 1)
    back.append(gap)
    assert _not_holding(write(files, tmp_path / "read-back")) == {
        ("kill 1 · d1", "sameContainerNoRerun"): (
            False,
            f"container-events.jsonl line {len(back)}: a gap line in the runtime's own events",
        )
    }
    back.pop()
    live.append(gap)
    assert _not_holding(write(files, tmp_path / "live")) == {
        ("kill 1 · d1", "sameContainerNoRerun"): (None, "the live recording has 1 gap in the window")
    }


def test_each_recording_s_bad_lines_count_against_its_own_limit(tmp_path: Path) -> None:
    """501 lines of the live recording that are not events: within its limit, and the read-back and
    runtime-restarts.jsonl after it are read whole, each against a limit of its own."""
    files = derive(sound())
    live = kill_events(files, 1)[0]
    first = len(live) + 1
    live += ["x"] * 501
    not_json = [f"container-events-live.jsonl line {first + i}: not JSON" for i in range(3)]
    out = write(files, tmp_path / "read-back")
    assert _not_holding(out) == {
        ("kill 1 · d1", "sameContainerNoRerun"): (
            False,
            "; ".join(not_json) + " (and 498 more lines that are not events)",
        )
    }
    assert set(judge(out).kills[0]["files"].values()) == {"ok"}
    spans = [(in_window(files, 1, 0.1), in_window(files, 1, 0.2)), (in_window(files, 1, 0.3), in_window(files, 1, 0.4))]
    files["kills/1/runtime-restarts.jsonl"] = [
        {"runtime": "docker", "from": rfc3339_ms(a), "to": rfc3339_ms(b)} for a, b in spans
    ]
    restarted = [
        f"the Docker engine restarted between {rfc3339_ms(a)} and {rfc3339_ms(b)}: what it did to the containers "
        "then is not in the live recording"
        for a, b in spans
    ]
    assert _not_holding(write(files, tmp_path / "restarts")) == {
        ("kill 1 · d1", "sameContainerNoRerun"): (False, f"{restarted[0]}; {restarted[1]}; {not_json[0]}; and 2 more")
    }


@pytest.mark.parametrize("name", [KillFolder.BEFORE, KillFolder.WINDOW])
def test_a_snapshot_or_the_window_past_its_cap_is_refused(tmp_path: Path, name: str) -> None:
    """A container snapshot or the window file of 8 MiB is read; one byte more (the same JSON) is refused."""
    cap = KillFolder.CAPS[name]
    assert cap == 8 << 20
    at = write(derive(sound()), tmp_path / "at")
    _pad(at / "kills" / "1" / name, cap)
    assert _not_holding(at) == {}
    past = write(derive(sound()), tmp_path / "past")
    _pad(past / "kills" / "1" / name, cap + 1)
    assert _checks(past)[("kill 1", "killEvidence")] == (
        False,
        f"{name}: larger than a study could write (8.0 MiB; at most 8.0 MiB)",
    )


def test_research_json_past_its_cap_is_refused(tmp_path: Path) -> None:
    """research.json of 1 MiB is read; one byte more (the same JSON) is refused: the study is not known."""
    cap = EvidenceFolder.CAPS[EvidenceFolder.RESEARCH]
    at = write(derive(sound()), tmp_path / "at")
    _pad(at / "research.json", cap)
    assert _not_holding(at) == {} and judge(at).study == "s"
    past = write(derive(sound()), tmp_path / "past")
    _pad(past / "research.json", cap + 1)
    assert _checks(past)[("study", "contractKept")] == (
        False,
        "rule 4 cannot be checked: research.json: larger than a study could write (1.0 MiB; at most 1.0 MiB)",
    )
    assert judge(past).study == "past"


def test_the_ledger_and_ledger_at_kill_past_their_caps_are_refused(tmp_path: Path) -> None:
    """study/ledger.jsonl past 32 MiB and ledger-at-kill.json past 64 MiB are refused by their size, unread."""
    out = write(derive(sound()), tmp_path / "at-kill")
    _sparse(out / "kills" / "1" / KillFolder.AT_KILL, KillFolder.CAPS[KillFolder.AT_KILL] + 1)
    assert _checks(out)[("kill 1", "killEvidence")] == (
        False,
        "ledger-at-kill.json: larger than a study could write (64.0 MiB; at most 64.0 MiB)",
    )
    out = write(derive(sound()), tmp_path / "ledger")
    _sparse(out / EvidenceFolder.LEDGER, EvidenceFolder.CAPS[EvidenceFolder.LEDGER] + 1)
    assert _checks(out)[("study", "ledgerWellFormed")] == (
        False,
        "study/ledger.jsonl: larger than a study could write (32.0 MiB; at most 32.0 MiB)",
    )


def test_kill_folders_of_exactly_the_budget_are_all_read(tmp_path: Path) -> None:
    """Kill folders holding exactly KillFolder.BUDGET together are all read; one byte more, the last is not."""
    got = {}
    for extra in (0, 1):
        out = write(derive(sound()), tmp_path / str(extra))
        left = KillFolder.BUDGET + extra - sum(KillFolder(out, n).size()[0] for n in (1, 2))
        third = out / "kills" / "3"
        third.mkdir()
        for name in (KillFolder.AT_KILL, *KillFolder.SNAPSHOTS):
            _sparse(third / name, KillFolder.CAPS[name])
            left -= KillFolder.CAPS[name]
        assert 0 < left <= KillFolder.CAPS[KillFolder.WINDOW]
        _sparse(third / KillFolder.WINDOW, left)
        got[extra] = _checks(out)
    read = got[0]
    assert read[("kill 3", "killDelivered")] == (False, "kill.json: missing")
    assert read[("kill 3", "killEvidence")] == (
        False,
        (
            "missing: kill.json, container-events.jsonl, container-events-live.jsonl; ledger-at-kill.json: not a JSON "
            "list; container-before.json: not JSON (line 1, column 1); and 3 more"
        ),
    )
    over = "kills/ holds more than 96 MiB up to kills/3/, more than a study's kills could: not read"
    unread = got[1]
    assert unread[("kill 3", "killDelivered")] == (False, over)
    assert unread[("kill 3", "killEvidence")] == (False, f"{over}; {over}; {over}; and 5 more")
    for scope in ("kill 1", "kill 2"):
        assert read[(scope, "killEvidence")][0] is True and unread[(scope, "killEvidence")][0] is True


def test_event_recordings_of_exactly_their_budget_are_all_read(tmp_path: Path) -> None:
    """Recordings of exactly KillFolder.RECORDINGS_BUDGET together are all read; one byte more, the last is not."""
    got = {}
    for extra in (0, 1):
        out = write(derive(sound()), tmp_path / str(extra))
        third = out / "kills" / "3"
        third.mkdir()
        used = sum(KillFolder(out, n).size()[1] for n in (1, 2))
        _sparse(third / KillFolder.LIVE, KillFolder.RECORDINGS_BUDGET + extra - used)
        got[extra] = _checks(out)
    assert got[0][("kill 3", "killDelivered")] == (False, "kill.json: missing")
    assert got[0][("kill 3", "killEvidence")] == (
        False,
        (
            "missing: kill.json, ledger-at-kill.json, container-before.json, container-after-kill.json, "
            "container-before-resume.json, container-events.jsonl, container-events-window.json"
        ),
    )
    assert got[1][("kill 3", "killDelivered")] == (
        False,
        "kills/ holds more than 32 MiB of event recordings up to kills/3/, more than a study's kills could: not read",
    )


@pytest.mark.parametrize("earlier, delivered", [(0, True), (1, False), (8, False)])
def test_a_kill_of_a_controller_that_had_ended_is_not_delivered(tmp_path: Path, earlier: int, delivered: bool) -> None:
    """§6.3 and §6.8: an end of the killed pid before the kill, with no start after it, ends that controller; the
    kill met no controller, whatever end lines of that pid come after it (a controller ends once)."""
    files = derive(sound())
    launches = files["launches.jsonl"]
    i = next(i for i, line in enumerate(launches) if line["event"] == "end" and line["pid"] == FIRST_PID)
    launches[i:i] = [
        {"event": "end", "pid": FIRST_PID, "at": rfc3339_ms(t(1 + 0.1 * n)), "code": 0, "signal": None}
        for n in range(earlier)
    ]
    got = _not_holding(write(files, tmp_path / "s"))
    if delivered:
        assert got == {}
    else:
        # The records the killed controller wrote after that end were written while no controller ran (§6.9).
        unlived = got.pop(("study", "exitedCleanly"))
        assert unlived[0] is False and "in no controller's life (launches.jsonl): written while no controller ran" in unlived[1]
        assert got == {
            ("kill 1", "killDelivered"): (False, f"pid {FIRST_PID} had ended (launches.jsonl line 2) before the kill")
        }


@pytest.mark.parametrize(
    "lines, said, ending",
    [
        # Another pid's end after the controller's own: not the controller's, and an end no start launched (v4:
        # a contradiction of its own, ✗).
        (
            [("start", 7, None), ("end", 7, 1), ("end", 9, 0)],
            "launches.jsonl line 3: pid 9 ends, but no start launched it",
            {"code": 1},
        ),
        # An end without a pid while the controller runs: not its end, and no start without a pid launched it.
        (
            [("start", 7, None), ("end", None, 127)],
            "launches.jsonl line 2: pid None ends, but no start launched it",
            None,
        ),
        # An end without a pid once no controller runs: the keeper could not start the next one.
        ([("start", 7, None), ("end", 7, 0), ("end", None, 127)], "the controller ended with exit 127", {"code": 127}),
    ],
)
def test_which_end_is_the_final_controller_s(
    tmp_path: Path, lines: list[tuple[str, int | None, int | None]], said: str, ending: dict[str, int] | None
) -> None:
    """The final controller's end is its own pid's, or one without a pid once no controller runs."""
    files = {rel: v for rel, v in derive(sound()).items() if rel in ("research.json", "machine.jsonl")}
    files["launches.jsonl"] = [
        {"event": kind, "pid": pid, "at": rfc3339_ms(t(n)), "resume": False}
        if kind == "start"
        else {"event": kind, "pid": pid, "at": rfc3339_ms(t(n)), "code": code, "signal": None}
        for n, (kind, pid, code) in enumerate(lines, 1)
    ]
    out = write(files, tmp_path / "s")
    hint = "; `studymon run --resume` continues it" if ending is not None else ""
    if "no start launched it" in said:
        assert _checks(out)[("study", "exitedCleanly")] == (False, said)
    else:
        assert _checks(out)[("study", "exitedCleanly")] == (None, said + hint)
    assert judge(out).finished is False
    assert last_ending(out) == ((dict(ending, signal=None), True) if ending is not None else (None, False))


def test_the_issue_a_torn_last_line_makes_is_kept_to_the_thousandth(tmp_path: Path) -> None:
    """accounts.json keeps ISSUES_KEPT (1000) issues: 999 lines that are not records and a torn last line are all
    kept, the torn line's the thousandth."""
    out = write(derive(sound()), tmp_path / "s")
    (out / "study" / "ledger.jsonl").write_bytes(b"x\n" * 999 + b"x")
    acc = judge(out).accounts
    assert acc["ledgerIssueCount"] == 1000 and len(acc["ledgerIssues"]) == 1000
    assert acc["ledgerIssues"][-1] == {"kind": "torn", "line": 1000, "detail": "last line has no newline (1 bytes)"}


def test_a_ledger_with_records_but_no_budget_fails_though_the_study_may_go_on(tmp_path: Path) -> None:
    """Only a ledger with no record yet waits for its budget: one whose studyOpen has none never gets one."""
    files = {k: v for k, v in derive(sound()).items() if k in ("research.json", "launches.jsonl", "study/ledger.jsonl", "machine.jsonl", "outcome.json", "timeline.jsonl")}
    files["launches.jsonl"] = [
        files["launches.jsonl"][0],
        {"event": "end", "pid": FIRST_PID, "at": rfc3339_ms(t(3)), "code": 1, "signal": None},
    ]
    files["study/ledger.jsonl"] = files["study/ledger.jsonl"][:2]
    files["timeline.jsonl"] = files["timeline.jsonl"][:2]
    del files["study/ledger.jsonl"][0]["content"]["budget"]
    assert _checks(write(files, tmp_path / "s")) == {
        ("study", "ledgerWellFormed"): (True, "2 lines, seq 1..2"),
        ("study", "contractKept"): (False, "rule 6, line 1: studyOpen.budget is null, not a number"),
        ("study", "haltedAtExport"): (None, "no halt in the ledger"),
        ("study", "chargedEqualsStarts"): (False, "no budget: studyOpen is missing or has no numeric budget"),
        ("study", "exitedCleanly"): (None, "the controller ended with exit 1; `studymon run --resume` continues it"),
        ("study", "resultsAccounted"): (
            True,
            "each of 0 started runs has its one result, each diagnosis result its settlement",
        ),
    }


def test_a_kill_without_a_timeline_fails_its_evidence(tmp_path: Path) -> None:
    """No timeline.jsonl: ledgerWellFormed and every killEvidence say so, and nothing more: a timeline not read whole
    cannot tell when a record was seen, nor that it never was (docs/contract.md, "Which check a file fails")."""
    files = derive(sound())
    del files["timeline.jsonl"]
    assert _not_holding(write(files, tmp_path / "s")) == {
        ("study", "ledgerWellFormed"): (
            False, "timeline.jsonl: missing, so no record of the ledger can be held to what was seen"),
        ("kill 1", "killEvidence"): (False, "timeline.jsonl: missing"),
        ("kill 2", "killEvidence"): (False, "timeline.jsonl: missing"),
    }


def test_records_after_a_kill_at_a_high_seq_are_seen(tmp_path: Path) -> None:
    """A ledger that skips from seq 1 to 500002: its kills come after seq 419430, half of MAX_SEEN, and the records
    after them are still held as seen (only the skip is wrong)."""
    files = derive(sound())
    _shift_seqs(files, 2, 500_000)
    assert files["kills/1/kill.json"]["beforeKillSeq"] == 500_007 > MAX_SEEN // 2
    assert _not_holding(write(files, tmp_path / "s")) == {
        ("study", "ledgerWellFormed"): (False, "line 2: gap (seq 500002 follows 1)")
    }


def test_a_record_exactly_max_seen_after_the_first_kill_is_seen(tmp_path: Path) -> None:
    """a2's result, MAX_SEEN seqs after the kill (a ledger that skips seqs), is still held as seen; d3's after it
    is past what the judge holds: never seen."""
    files = derive(build(kills=(("d3", "manual"),)))
    kill = files["kills/1/kill.json"]["beforeKillSeq"]
    _shift_seqs(files, kill + 1, MAX_SEEN - 1)
    result = next(r for r in files["study/ledger.jsonl"] if r["kind"] == "runResult" and r["content"]["run"] == "a2")
    assert result["seq"] == kill + MAX_SEEN
    never = "was never seen by a console: written by something that outlived the kill"
    assert _not_holding(write(files, tmp_path / "s")) == {
        ("study", "ledgerWellFormed"): (False, f"line {kill + 1}: gap (seq {kill + MAX_SEEN} follows {kill})"),
        ("kill 1 · d3", "resultSettledAndFinished"): (
            False,
            f"seq {kill + MAX_SEEN + 1} (runResult) {never}; seq {kill + MAX_SEEN + 2} (diagnosisSettlement) {never}",
        ),
    }


def test_a_controller_started_at_the_kill_s_very_moment_is_the_resumed_one(tmp_path: Path) -> None:
    """The keeper's end and the next start stamped at kill.json's ``at`` exactly: that start is the resume, and
    the records seen after it are its own."""
    files = derive(sound())
    at = files["kills/1/kill.json"]["at"]
    launches = files["launches.jsonl"]
    next(line for line in launches if line["event"] == "end" and line["pid"] == FIRST_PID)["at"] = at
    next(line for line in launches if line["event"] == "start" and line["pid"] == FIRST_PID + 1)["at"] = at
    assert _not_holding(write(files, tmp_path / "s")) == {}


def test_a_kill_folder_past_the_budget_is_not_read_at_all_not_even_its_ledger_at_kill(tmp_path: Path) -> None:
    """A folder past the kills' budget stands for its kill with one reason for every file: its ledger-at-kill.json
    is not opened to be compared with the ledger (a FIFO there would say so: it is left alone)."""
    from studymon.engine.judge.read import read_kills, read_ledger, read_study

    out = write(derive(sound()), tmp_path / "s")
    third, fourth = out / "kills" / "3", out / "kills" / "4"
    third.mkdir()
    fourth.mkdir()
    left = KillFolder.BUDGET + 1 - sum(KillFolder(out, n).size()[0] for n in (1, 2))
    for name in (KillFolder.AT_KILL, *KillFolder.SNAPSHOTS):
        _sparse(third / name, KillFolder.CAPS[name])
        left -= KillFolder.CAPS[name]
    _sparse(third / KillFolder.WINDOW, left)
    os.mkfifo(fourth / KillFolder.AT_KILL)
    study = read_study(out)
    kills = read_kills(EvidenceFolder(out), study)
    read_ledger(out, study, kills)
    for n in (3, 4):
        over = f"kills/ holds more than 96 MiB up to kills/{n}/, more than a study's kills could: not read"
        assert kills[n - 1].problems == dict.fromkeys(KillFolder.FILES, over), n
    assert not kills[0].problems and not kills[1].problems


# --- the classes of targets a kill point leaves, where run 4's survivors showed them unpinned ---------
# (docs/mutation.md: each class's reasons in their words; the events of a target whose container is made in its
# window; the targets kill.json lists, judged when the ledger cannot say them; the arms kept.)

from studymon.engine.judge.read import ARMED_KEPT  # noqa: E402
from studymon.engine.judge.text import short_id  # noqa: E402
from studymon.engine.judge.verdict import SEEN_KEPT, WINDOW_OPEN  # noqa: E402
from tests.corpus import T0, Scenario, edit_events, ev_time  # noqa: E402

D1 = "kill 1 · d1"
D1_ID = short_id(container_id(container("d1")))


def _point(point: str, then: Any = None) -> Scenario:
    s = sound()
    at_point(point, then)(s)
    return s


def _no_start(s: Scenario) -> None:
    """d1 is never started: its runStarted is not written (its result is)."""
    del s.entries[find(s, "runStarted", run="d1")]


def _window_open(files: Files) -> None:
    """The study can be resumed, kill 1's window still open: its window file and read-back not written yet."""
    files["launches.jsonl"][-1]["code"] = 1
    del files["kills/1/container-events-window.json"], files["kills/1/container-events.jsonl"]


def _d1_started_in(files: Files, name: str) -> None:
    """d1's runStarted names ``name``, in the ledger only (the events stay d1's own container's)."""
    for r in files["study/ledger.jsonl"]:
        if r["kind"] == "runStarted" and r["content"]["run"] == "d1":
            r["content"]["container"] = name


def _live(e: dict[str, Any]) -> dict[str, Any]:
    return dict(e, seenAt=rfc3339_ms(ev_time(e) + 0.002))


def _other(e: dict[str, Any], cid: str) -> dict[str, Any]:
    """``e`` of another container (Id ``cid``) under the same name."""
    e["id"] = e["Actor"]["ID"] = cid
    return e


# What each class's sound story says as sameContainerNoRerun holds.
SAID = {
    "charge": "inforsi-s-d1: started once after the kill, one container made in its window, its one die as runResult; "
    "no other container of the study made in the window",
    "started": "inforsi-s-d1: started before the kill without runStarted, adopted by its one runStarted after it; "
    f"one Id ({D1_ID}) and StartedAt in 3 snapshots; in its window only 1 die and what may come with it, "
    "exit as runResult; no other container of the study made in the window",
    "runResult": "inforsi-s-d1: had its result before the kill; not started again, nothing of it made in the window",
}


@pytest.mark.parametrize("point", list(SAID))
def test_each_point_s_sound_story_is_said_in_its_words(tmp_path: Path, point: str) -> None:
    """What each class of target holds to, as its checks say it when it does."""
    got = _checks(write(derive(_point(point)), tmp_path / point))
    when = "before the kill, settled after it" if point == "runResult" else "after the kill and inside the window"
    assert {name: got[(D1, name)] for name in ("sameContainerNoRerun", "chargedOnce", "resultSettledAndFinished")} == {
        "sameContainerNoRerun": (True, SAID[point]),
        "chargedOnce": (True, "1 charge, 1 runStarted; no run planned after the kill repeats d1"),
        "resultSettledAndFinished": (
            True,
            f"one result at seq 8, {when}; settled, then proposal 1 opened; halted at export",
        ),
    }


@pytest.mark.parametrize("point", ["charge", "started"])
def test_a_target_the_resume_does_not_start_as_it_should_is_said_so(tmp_path: Path, point: str) -> None:
    """Charged (no container yet) or unrecorded (its container started, no runStarted): no runStarted after the
    kill is ✗ once the study has finished and ? while it can be resumed with the window open; one naming another
    container is ✗."""
    no_die, no_die_yet = "no die of inforsi-s-d1 in its window", "no die of inforsi-s-d1 yet"
    not_adopted = "its started container is not adopted"
    finished, still_open = {
        "charge": (
            f"the study finished without starting d1 after the kill; {no_die}",
            f"no runStarted of d1 after the kill yet; {WINDOW_OPEN}; {no_die_yet}",
        ),
        "started": (
            f"{no_die}; no runStarted of d1 after the kill: {not_adopted}",
            f"{WINDOW_OPEN}; {no_die_yet}; no runStarted of d1 after the kill yet: {not_adopted}",
        ),
    }[point]
    files = derive(_point(point, _no_start))
    checks = _checks(write(files, tmp_path / "finished"))
    assert checks[(D1, "sameContainerNoRerun")] == (False, finished)
    # Charged once and never started: ✗ once the study has finished, ? while a resume may still start it.
    assert checks[(D1, "chargedOnce")] == (False, "1 charge, 0 runStarted")
    _window_open(files)
    checks = _checks(write(files, tmp_path / "open"))
    assert checks[(D1, "sameContainerNoRerun")] == (None, still_open)
    assert checks[(D1, "chargedOnce")] == (None, "1 charge, no runStarted yet: the resume starts d1")
    files = derive(_point(point))
    _d1_started_in(files, container("zz"))
    assert _checks(write(files, tmp_path / "elsewhere"))[(D1, "sameContainerNoRerun")] == (
        False,
        "the runStarted of d1 after the kill (seq 7) names inforsi-s-zz, not inforsi-s-d1",
    )


def test_a_charged_target_has_no_container_at_the_kill_and_dies_in_the_one_it_started(tmp_path: Path) -> None:
    """A charged target to which kill.json gives a container, or whose die in the window is of another container
    than the one that started for it, fails sameContainerNoRerun, saying which."""
    files = derive(_point("charge"))
    files["kills/1/kill.json"]["targets"][0]["container"] = container("d1")
    assert _checks(write(files, tmp_path / "given"))[(D1, "sameContainerNoRerun")] == (
        False,
        "kill.json gives d1, charged but not started, a container",
    )
    files = derive(_point("charge"))

    def another(e: dict[str, Any]) -> None:
        _other(e, "e" * 64)

    edit_events(files, 1, "die", container("d1"), another)
    assert _checks(write(files, tmp_path / "other"))[(D1, "sameContainerNoRerun")] == (
        False,
        f"the die is of container eeeeeeeeeeee, not of {D1_ID}",
    )


def test_an_unrecorded_target_is_adopted_by_its_first_run_started_after_the_kill(tmp_path: Path) -> None:
    """Only the first runStarted after the kill adopts the container; a second (naming another container) starts the
    run again: after the kill exactly one runStarted (docs/contract.md, "By class"), and a second charge-less start
    is chargedOnce's too."""

    def twice(s: Scenario) -> None:
        i = find(s, "runStarted", run="d1")
        s.entries.insert(i + 1, Entry("runStarted", {"run": "d1", "container": container("zz")}))

    got = _checks(write(derive(_point("started", twice)), tmp_path / "s"))
    assert got[(D1, "sameContainerNoRerun")] == (False, "2 runStarted of d1 after the kill")
    assert got[(D1, "chargedOnce")] == (False, "1 charge, 2 runStarted")


def test_an_unsettled_target_started_after_the_kill_is_run_again(tmp_path: Path) -> None:
    """With its result before the kill, a runStarted of the target after it fails; one at the kill's own seq is
    not after it."""

    def again(s: Scenario) -> None:
        started = Entry("runStarted", {"run": "d1", "container": container("d1")})
        s.entries.insert(find(s, "runResult", run="d1") + 1, started)

    files = derive(_point("runResult", again))
    assert _checks(write(files, tmp_path / "after"))[(D1, "sameContainerNoRerun")] == (
        False,
        "d1 had its result before the kill, and a runStarted after it (seq 9)",
    )
    files["kills/1/kill.json"]["beforeKillSeq"] = 9
    files["kills/1/ledger-at-kill.json"] = copy.deepcopy(files["study/ledger.jsonl"][:9])
    assert _checks(write(files, tmp_path / "at"))[(D1, "sameContainerNoRerun")] == (
        True,
        "inforsi-s-d1: had its result before the kill; not started again, nothing of it made in the window",
    )


@pytest.mark.parametrize("more, said", [((), ""), (("pause", "unpause"), " (and 1 more such event)"),
                                        (("pause", "unpause", "stop"), " (and 2 more such events)")])
def test_an_unsettled_target_s_container_made_again_is_named_by_its_events(
    tmp_path: Path, more: tuple[str, ...], said: str
) -> None:
    """An unsettled target's container made and started again in its window (and more done to it): each event
    named once as its own, the first three shown and the rest counted in their words."""
    name = container("d1")
    files = derive(_point("runResult"))
    made = [event(action, name, in_window(files, 1, at)) for action, at in (("create", 0.2), ("start", 0.21))]
    made += [event(action, name, in_window(files, 1, 0.3 + 0.01 * i)) for i, action in enumerate(more)]
    for e in made:
        add_event(files, 1, e)
    shown = [f"{e['Action']} of {name} at {rfc3339_ms(ev_time(e))} in its window" for e in made[:3]]
    assert _checks(write(files, tmp_path / "s"))[(D1, "sameContainerNoRerun")] == (False, "; ".join(shown) + said)


def test_another_container_of_a_charged_target_s_name_removed_in_its_window_is_not_its_story(tmp_path: Path) -> None:
    """A container of the target's name but another Id, destroyed between the target's start and its die: not the
    target's destroy (which would come before its die)."""
    files = derive(_point("charge"))
    add_event(files, 1, _other(event("destroy", container("d1"), T0 + 7.0), "f" * 64))
    assert _checks(write(files, tmp_path / "s"))[(D1, "sameContainerNoRerun")] == (True, SAID["charge"])


def test_the_earliest_destroy_of_a_charged_target_s_container_before_it_started_counts(tmp_path: Path) -> None:
    """The live recording alone, out of time order, has the container that then starts for the target destroyed
    twice before its start line: at 6.1 s (before its die at 7.5 s) and at 7.8 s.  The earliest is the one its story
    is checked against: a destroy before its die."""
    files = derive(_point("charge"))
    name = container("d1")
    kill_events(files, 1)[0][:0] = [_live(event("destroy", name, T0 + at)) for at in (6.1, 7.8)]
    assert _checks(write(files, tmp_path / "s"))[(D1, "sameContainerNoRerun")] == (
        False,
        "a destroy of inforsi-s-d1 comes before its die",
    )


def test_destroys_of_other_containers_are_kept_up_to_seen_kept(tmp_path: Path) -> None:
    """SEEN_KEPT destroys of other containers of a charged target's name come first: a destroy of its own container
    before it started (in the live recording alone) is past the bound and not kept, so not held against it; one
    after its start and before its die is its story's, whatever the bound, and fails it."""
    name = container("d1")
    for case_, at, before_start in (("past", 6.2, True), ("story", 7.0, False)):
        files = derive(_point("charge"))
        others = [_other(event("destroy", name, T0 + 6.1 + i * 1e-4), f"{i:064x}") for i in range(SEEN_KEPT)]
        live, back = kill_events(files, 1)
        live[:0], back[:0] = [_live(e) for e in others], copy.deepcopy(others)
        own = event("destroy", name, T0 + at)
        if before_start:
            live.insert(SEEN_KEPT, _live(own))
        else:
            add_event(files, 1, own)
        got = _checks(write(files, tmp_path / case_))[(D1, "sameContainerNoRerun")]
        if before_start:
            assert got == (True, SAID["charge"])
        else:
            assert got == (False, "a destroy of inforsi-s-d1 comes before its die")


def test_a_kill_without_a_before_kill_seq_judges_no_target(tmp_path: Path) -> None:
    """kill.json without beforeKillSeq (and a listed run the ledger does not know): what the kill left unfinished is
    told from its moment, so no target is judged; killEvidence fails, saying why."""
    files = derive(_point("charge"))
    kill = files["kills/1/kill.json"]
    kill["beforeKillSeq"] = None
    kill["targets"].append(dict(kill["targets"][0], run="zz"))
    got = _checks(write(files, tmp_path / "s"))
    assert not [scope for scope, _ in got if scope.startswith("kill 1 · ")]
    ok, detail = got[("kill 1", "killEvidence")]
    assert ok is False and "beforeKillSeq" in detail, detail


def test_a_listed_unsettled_target_of_a_ledger_read_in_part_is_settled_after_the_kill(tmp_path: Path) -> None:
    """A ledger whose reading stopped (past ISSUE_LIMIT issues): kill.json's targets are judged as listed.  d1, listed
    with its result but not settled, at a kill whose beforeKillSeq is its round's settlement: not settled after the
    kill."""
    files = derive(_point("runResult"))
    files["study/ledger.jsonl"] = files["study/ledger.jsonl"] + ["x"] * 10_001
    files["kills/1/kill.json"]["beforeKillSeq"] = 9
    files["kills/1/ledger-at-kill.json"] = copy.deepcopy(files["study/ledger.jsonl"][:9])
    assert _checks(write(files, tmp_path / "s"))[(D1, "resultSettledAndFinished")] == (
        False,
        (
            "the ledger cannot be judged: reading stopped after 10001 issues; the settlement of round 1 (seq 9) is "
            "not after the kill (seq 9); the study did not end as its template expects (haltedAtExport)"
        ),
    )


def test_a_run_planned_at_the_kill_with_its_container_started_is_unrecorded(tmp_path: Path) -> None:
    """Killed just after d1's runPlanned, its container already started (before its charge): left unrecorded at
    the kill's own seq, a target whose sound story holds."""
    files = derive(_point("started"))
    kill = files["kills/1/kill.json"]
    kill["beforeKillSeq"] = 5
    files["kills/1/ledger-at-kill.json"] = copy.deepcopy(files["study/ledger.jsonl"][:5])
    files["timeline.jsonl"][5]["seenAt"] = rfc3339_ms(t(6) + 0.4)  # the charge: seen after the resume began
    got = _checks(write(files, tmp_path / "s"))
    assert {key: ok for key, (ok, _) in got.items() if ok is not True} == {}
    assert got[("kill 1", "killEvidence")] == (
        True,
        (
            "complete; targets (d1 its container started but no runStarted) are what the kill left unfinished at "
            "seq 5; ledger-at-kill.json is the ledger to that seq"
        ),
    )
    assert (D1, "sameContainerNoRerun") in got


def test_a_run_with_its_result_at_the_kill_was_not_left_unfinished(tmp_path: Path) -> None:
    """d1 charged, never started, its runResult at the kill's seq (rule 3 broken): the kill did not leave it
    charged, so kill.json rightly lists nothing."""
    got = _checks(write(derive(_point("runResult", _no_start)), tmp_path / "s"))
    assert {key: v for key, v in got.items() if v[0] is not True} == {
        ("study", "contractKept"): (False, "rule 3, line 7: runResult for run d1 before its runStarted"),
        ("study", "chargedEqualsStarts"): (False, "run d1: 1 charge, 0 starts"),
    }
    assert got[("kill 1", "killEvidence")] == (
        True,
        "complete; targets (no run) are the runs in flight at seq 7; ledger-at-kill.json is the ledger to that seq",
    )


def test_a_run_charged_at_the_kill_without_a_container_prefix_is_charged(tmp_path: Path) -> None:
    """No container names to look for (research.json's prefix is not one): d1, charged at the kill, is a charged
    target, not an unrecorded one, and the container checks say why they cannot be made."""
    files = derive(_point("charge"))
    files["research.json"]["containerPrefix"] = "Bad Prefix!"
    bad = "research.json: containerPrefix is not a container name prefix"
    assert _not_holding(write(files, tmp_path / "s")) == {
        ("study", "contractKept"): (False, f"rule 4 cannot be checked: {bad}"),
        # kill.json's prefix is held twice, and its other copy is not there to hold it to.
        ("kill 1", "killEvidence"): (
            False, "kill.json prefix cannot be held to the study's stem: research.json does not give it"),
        (D1, "sameContainerNoRerun"): (False, f"the container names cannot be checked: {bad}"),
    }


def test_armed_points_past_the_kept_are_not_kept(tmp_path: Path) -> None:
    """arms.jsonl's armed points are queued up to ARMED_KEPT (64): a 65th is not kept, so 64 missed lines after
    them leave none armed at the end."""
    files = _manual_only()
    files["arms.jsonl"] = [{"event": "arm"}] * (ARMED_KEPT + 1) + [
        {"event": "missed", "run": "d1", "detail": f"late {i}"} for i in range(1, ARMED_KEPT + 1)
    ]
    assert _not_holding(write(files, tmp_path / "s")) == {
        ("study", "killTriggered"): (
            None,
            "missed d1, not tested: late 1; missed d1, not tested: late 2; missed d1, not tested: late 3",
        )
    }


def test_a_listed_unsettled_target_whose_result_is_after_the_kill_is_not_as_kill_json_says(tmp_path: Path) -> None:
    """A ledger read in part: d1, listed as having its result at the kill, whose runResult comes after the kill's
    seq, fails resultSettledAndFinished saying so."""
    files = derive(_point("runResult"))
    files["study/ledger.jsonl"] = files["study/ledger.jsonl"] + ["x"] * 10_001
    files["kills/1/kill.json"]["beforeKillSeq"] = 7
    files["kills/1/ledger-at-kill.json"] = copy.deepcopy(files["study/ledger.jsonl"][:7])
    ok, said = _checks(write(files, tmp_path / "s"))[(D1, "resultSettledAndFinished")]
    assert ok is False and "the result (seq 8) is not before the kill (seq 7), as kill.json says" in said, said


def test_an_unsettled_target_s_window_ends_with_its_settlement(tmp_path: Path) -> None:
    """d1 had its result at the kill: its story ends with its round's settlement, and the window file is read for
    that, in its words: closed before the settlement, or without it."""
    files = derive(_point("runResult"))
    window = files["kills/1/container-events-window.json"]["targets"]["d1"]
    settled = find_seq(files, "diagnosisSettlement")
    window["resultSeq"] = settled - 1
    ok, said = _checks(write(files, tmp_path / "early"))[(D1, "resultSettledAndFinished")]
    assert ok is False and f"the settlement (seq {settled}) comes after the window closed (at seq {settled - 1})" in (
        said), said
    window["resultSeq"] = window["resultSeenEpoch"] = None  # both null: the study finished without it
    ok, said = _checks(write(files, tmp_path / "never"))[(D1, "resultSettledAndFinished")]
    assert ok is False and "the window closed without d1's settlement" in said, said


def find_seq(files: Files, kind: str) -> int:
    """The seq of the ledger's first record of ``kind``."""
    return next(r["seq"] for r in files["study/ledger.jsonl"] if r["kind"] == kind)


# --- an unrecorded target's own container at the kill: what read_events hands the target's watch ---------------
# (docs/mutation.md, run 6: an unrecorded target is "fresh" only with its container-before.json entry's Id, and
# only that container's start is adopted.)


def _started_again(files: Files, cid: str | None = None) -> dict[str, Any]:
    """A start of d1's container (``cid``: another container's Id under its name) just after kill 1."""
    e = event("start", container("d1"), in_window(files, 1, 0.05))
    if cid is not None:
        _other(e, cid)
    add_event(files, 1, e)
    return e


def test_an_unrecorded_target_s_own_container_started_just_after_the_kill_is_adopted(tmp_path: Path) -> None:
    """The container the snapshot at the kill shows for d1 (started, no runStarted) is started again in the window:
    its own, so the resume adopts it (as restarting a stopped container it made is allowed)."""
    files = derive(_point("started"))
    _started_again(files)
    assert _checks(write(files, tmp_path / "s"))[(D1, "sameContainerNoRerun")] == (True, SAID["started"])


def test_an_unrecorded_target_adopts_only_the_container_the_kill_saw(tmp_path: Path) -> None:
    """A start in the window of another container under d1's name is not the one the snapshot at the kill shows:
    it is a start of a container, forbidden."""
    files = derive(_point("started"))
    e = _started_again(files, "e" * 64)
    ok, said = _checks(write(files, tmp_path / "s"))[(D1, "sameContainerNoRerun")]
    assert ok is False and said.startswith(f"start of inforsi-s-d1 at {rfc3339_ms(ev_time(e))} in its window"), said


def test_an_unrecorded_target_whose_snapshot_has_no_id_adopts_nothing(tmp_path: Path) -> None:
    """With no Id in container-before.json for d1 the snapshots fail, and its start in the window is not adopted
    either: each reason said."""
    files = derive(_point("started"))
    del files["kills/1/container-before.json"]["inforsi-s-d1"]["Id"]
    e = _started_again(files)
    ok, said = _checks(write(files, tmp_path / "s"))[(D1, "sameContainerNoRerun")]
    assert ok is False, said
    assert said.startswith("container-before.json: inforsi-s-d1 has no Id; the Id of inforsi-s-d1 changes"), said
    assert f"start of inforsi-s-d1 at {rfc3339_ms(ev_time(e))} in its window" in said, said


def test_a_charged_target_s_created_container_at_the_kill_is_not_its_own(tmp_path: Path) -> None:
    """A charged target (no runStarted, nothing started under its name) with a container created, never started,
    under its name at the kill: still charged, and the container the resume makes and starts is its one."""
    files = derive(_point("charge"))
    files["kills/1/container-before.json"]["inforsi-s-d1"] = {
        "Id": "c" * 64,
        "Name": "/inforsi-s-d1",
        "State": {"Running": False, "Status": "created", "StartedAt": "0001-01-01T00:00:00Z", "ExitCode": 0},
    }
    assert _checks(write(files, tmp_path / "s"))[(D1, "sameContainerNoRerun")] == (True, SAID["charge"])


def _bogus_class(files: Files, before: bool) -> None:
    """kill.json's d1 of class ``bogus``: in its place, or (``before``) a copy ahead of the real one."""
    targets = files["kills/1/kill.json"]["targets"]
    if before:
        targets.insert(0, dict(targets[0], **{"class": "bogus"}))
    else:
        targets[0]["class"] = "bogus"


@pytest.mark.parametrize("before", [False, True], ids=["in-place", "copy-ahead"])
def test_a_kill_json_target_of_no_known_class_is_named_and_the_rest_still_read(tmp_path: Path, before: bool) -> None:
    """A target kill.json lists with a class not one of the four fails killEvidence in its words (no crash); a
    target after it is still read, so d1 listed again is not missing."""
    files = derive(sound())
    _bogus_class(files, before)
    bad = "kill.json target d1's class is bogus, not one of inFlight, unrecorded, charged, unsettled"
    missing = "kill.json omits run d1, in flight at seq 7"
    assert _checks(write(files, tmp_path / "s"))[("kill 1", "killEvidence")] == (
        False,
        bad if before else f"{bad}; {missing}",
    )


# --- run 6's survivors in the kill's checks, the study's and the assembling (docs/mutation.md) ---------------

from studymon.engine.evidence.records import time_epoch  # noqa: E402
from tests.corpus import COST  # noqa: E402


def test_a_kill_without_its_snapshot_before_is_said_so_whatever_its_targets(tmp_path: Path) -> None:
    """Killed after d1's charge (planned and charged, not started) with no container-before.json: the file is
    named missing, and the targets are still classed (a charged target is looked for in a snapshot that is not
    there) without a crash."""
    files = derive(_point("charge"))
    del files["kills/1/container-before.json"]
    assert _checks(write(files, tmp_path / "s"))[("kill 1", "killEvidence")] == (
        False,
        "missing: container-before.json",
    )


def test_an_end_the_console_did_not_make_has_no_kill_delivered(tmp_path: Path) -> None:
    """A crash the console saw (kill.json's trigger ``crash``): no SIGKILL was sent, so there is no killDelivered
    check for it."""
    files = derive(sound())
    files["kills/1/kill.json"].update(trigger="crash", triggerSeq=None, signal=None, signalled=False)
    got = _checks(write(files, tmp_path / "s"))
    assert ("kill 1", "killEvidence") in got and ("kill 1", "killDelivered") not in got, got


@pytest.mark.parametrize("trigger", ["crash", "stop"])
@pytest.mark.parametrize("signal, signalled, said", [
    (None, False, None),
    (0, False, "signal is an integer"),
    ("SIGKILL", False, "signal is a string"),
    (None, True, "signalled is true"),
    ("SIGKILL", True, "signal is a string, signalled is true"),
])
def test_an_end_the_console_did_not_make_says_nothing_was_sent(
    tmp_path: Path, trigger: str, signal: Any, signalled: bool, said: str | None
) -> None:
    """The trigger and the delivery are one fact told twice: an end the console did not make sent nothing, and its
    kill.json says so with a null signal and signalled false; any other delivery fails killEvidence."""
    files = derive(sound())
    files["kills/1/kill.json"].update(trigger=trigger, triggerSeq=None, signal=signal, signalled=signalled)
    ok, detail = _checks(write(files, tmp_path / "s"))[("kill 1", "killEvidence")]
    if said is None:
        assert "signal" not in detail, detail
    else:
        assert ok is False and f"({trigger}) says a signal was sent: {said}" in detail, detail


@pytest.mark.parametrize("seq", [0, -3])
def test_an_automatic_kill_s_trigger_seq_is_a_record_s(tmp_path: Path, seq: int) -> None:
    """Records are numbered from 1: a triggerSeq of 0 or below names no record, whatever else holds."""
    files = derive(sound())
    files["kills/1/kill.json"].update(triggerSeq=seq)
    ok, detail = _checks(write(files, tmp_path / "s"))[("kill 1", "killEvidence")]
    assert ok is False and f"kill.json triggerSeq {seq} is no record's seq" in detail, detail


def test_runs_charged_and_not_started_in_an_unfinished_study_are_waited_for_and_named_as_the_contract_allows(
    tmp_path: Path,
) -> None:
    """A study that can be resumed (its last controller exited 1) with three runs charged and not started yet:
    chargedEqualsStarts is ? naming them, an id the contract does not allow as ``?``, all three shown (no "and 0
    more")."""
    s = sound()
    s.final_code = 1
    halt = next(i for i, e in enumerate(s.entries) if e.kind == "halt")
    s.entries[halt:halt] = [Entry("charge", {"run": run, "amount": COST}) for run in ("x1", "x2", "Bad Id")]
    s.budget += 3 * COST
    s.entries[0].content["budget"] = s.budget
    assert _checks(write(derive(s), tmp_path / "s"))[("study", "chargedEqualsStarts")] == (
        None,
        "charged, not started yet: x1, x2, ?",
    )


def test_a_fired_line_with_no_kill_point_leaves_the_next_kill_s_fired_line_read(tmp_path: Path) -> None:
    """Two automatic kills; kill 1's fired line names a point that does not parse, kill 2's is sound: kill 1's
    line is named, and kill 2 still has its fired line."""
    files = derive(build(kills=(("d1", "auto"), ("d3", "auto"))))
    fired = [line for line in files["arms.jsonl"] if line["event"] == "fired"]
    fired[0]["point"] = "nowhere"
    seq2 = files["kills/2/kill.json"]["beforeKillSeq"]
    fired[1].update(point="after:runStarted/diagnosis", fromSeq=seq2 - 1, run="d3")
    files["kills/2/kill.json"]["point"] = "after:runStarted/diagnosis"
    assert _checks(write(files, tmp_path / "s"))[("study", "killTriggered")] == (
        False,
        "arms.jsonl line 3: fired at nowhere, but the point armed first is after:runStarted/diagnosis; "
        "arms.jsonl's fired line for kill 1 names no kill point (nowhere)",
    )


@pytest.mark.parametrize("before, delivered", [(1.0, False), (1.5, True)])
def test_a_controller_started_within_a_second_of_the_kill_while_the_killed_one_ran_is_a_resume_over_it(
    tmp_path: Path, before: float, delivered: bool
) -> None:
    """Another controller started ``before`` s ahead of kill 1's time while the killed pid still ran: up to a
    second ahead (the clocks' slack) it is taken as the resume, started over a controller not yet ended, and
    killDelivered fails; earlier, it is no resume of this kill.  exitedCleanly fails on the overlap either way."""
    files = derive(sound())
    at = rfc3339_ms(time_epoch(files["kills/1/kill.json"]["at"]) - before)
    launches = files["launches.jsonl"]
    end = next(i for i, line in enumerate(launches) if line["event"] == "end" and line["pid"] == FIRST_PID)
    launches[end:end] = [{"event": "start", "pid": 5000, "at": at, "resume": False},
                         {"event": "end", "pid": 5000, "at": at, "code": 0, "signal": None}]
    got = _checks(write(files, tmp_path / "s"))
    said = "a controller was started after the kill while pid 4242 had not ended"
    assert got[("kill 1", "killDelivered")][0] is delivered and (said in got[("kill 1", "killDelivered")][1]) is not (
        delivered), got[("kill 1", "killDelivered")]
    assert got[("study", "exitedCleanly")][0] is False


def test_a_kill_at_a_container_point_is_judged_from_the_folder(tmp_path: Path) -> None:
    """An automatic kill at ``container:die/diagnosis`` on d1's container, judged through ``judge()`` (the study's
    accounts and its facts handed to killTriggered): it holds."""
    files = derive(sound())
    point = "container:die/diagnosis"
    fired = next(line for line in files["arms.jsonl"] if line["event"] == "fired" and line["kill"] == 1)
    fired.update(point=point, fromSeq=0, run="d1")
    next(line for line in files["arms.jsonl"] if line["event"] == "arm")["point"] = point  # armed, then fired
    k = files["kills/1/kill.json"]
    k.update(point=point, triggerSeq=None, triggerEvent=event("die", container("d1"), k["sinceEpoch"], exitCode="0"))
    assert _checks(write(files, tmp_path / "s"))[("study", "killTriggered")] == (
        True,
        "kill 1 fired at container:die/diagnosis (d1's die); its folder is complete",
    )


def test_a_lost_start_leaves_the_records_after_a_kill_unjudged_by_it(tmp_path: Path) -> None:
    """A launches.jsonl line that is not a launch (here the resumed controller's start) fails exitedCleanly and
    every killDelivered; the records after a kill are then not held to a start that may be the line lost
    (docs/contract.md, "Which check a file fails"), so no target's check fails for them."""
    files = derive(sound())
    launches = files["launches.jsonl"]
    i = next(i for i, line in enumerate(launches) if line["event"] == "start" and line.get("resume"))
    launches[i]["resume"] = "yes"
    got = _not_holding(write(files, tmp_path / "s"))
    assert got[("study", "exitedCleanly")][0] is False
    assert got[("kill 1", "killDelivered")][0] is False and got[("kill 2", "killDelivered")][0] is False
    assert not any("seen while no controller started after the kill ran" in detail for _, detail in got.values()), got


def test_an_end_the_console_did_not_make_is_in_launches(tmp_path: Path) -> None:
    """A crash folder (an end the console did not make, judged as a kill) stands for an end of its pid that
    launches.jsonl holds (§6.9): with that end line gone, killEvidence fails."""
    files = derive(sound())
    kill = files["kills/1/kill.json"]
    kill["trigger"] = "crash"
    launches = files["launches.jsonl"]
    end = next(i for i, line in enumerate(launches) if line["event"] == "end" and line["pid"] == kill["pid"])
    launches[end]["at"] = kill["at"]  # the crash is dated at the end it saw
    got = _checks(write(files, tmp_path / "kept"))
    assert "has no end of that pid" not in got[("kill 1", "killEvidence")][1]
    del launches[end]
    ok, detail = _checks(write(files, tmp_path / "gone"))[("kill 1", "killEvidence")]
    assert ok is False and f"kill.json says pid {kill['pid']} ended (crash), but launches.jsonl has no end of that pid" in detail


def test_an_unsettled_target_s_event_the_two_recordings_tell_apart_fails_it(tmp_path: Path) -> None:
    """The recordings agree on every event of the window they both hold, whatever the target's class: an unsettled
    target's destroy, written with another name in the live recording, fails its sameContainerNoRerun."""
    name = container("d1")
    files = derive(_point("runResult"))
    # Labelled as the study's run, as every runtime writes them: the copy renamed is still the target's event.
    gone = event("destroy", name, in_window(files, 1, 0.5), **{"studymon.study": "s", "studymon.run": "d1"})
    add_event(files, 1, gone)
    out = write(files, tmp_path / "same")
    assert _checks(out)[(D1, "sameContainerNoRerun")][0] is True, "its removal in the window is allowed"
    files = derive(_point("runResult"))
    add_event(files, 1, gone)
    live = kill_events(files, 1)[0][-1]
    live["Actor"] = {**live["Actor"], "Attributes": {**live["Actor"]["Attributes"], "name": name.upper()}}
    assert _checks(write(files, tmp_path / "apart"))[(D1, "sameContainerNoRerun")] == (
        False, f"the recordings disagree: 1 event of {name} differ between the two files")


@pytest.mark.parametrize("action", ["destroy", "oom"])
@pytest.mark.parametrize("how", ["labelled", "same-name"])
def test_an_in_flight_target_s_destroy_or_oom_of_another_container_is_outside_its_story(
    tmp_path: Path, action: str, how: str
) -> None:
    """A destroy or an oom is allowed of the snapshots' Id only (docs/contract.md, the action table): one of another
    container in the window, labelled as the study's run or under the target's name, is a second container of the
    run, after the target's die as before it."""
    files = derive(sound())
    name = container("d1")
    other = "e" * 64
    when = in_window(files, 1, 0.9)
    if how == "labelled":
        e = _other(event(action, "elsewhere-d1", when, **{"studymon.study": "s", "studymon.run": "d1"}), other)
    else:
        e = _other(event(action, name, when), other)
    add_event(files, 1, e)
    assert _checks(write(files, tmp_path / "s"))[(D1, "sameContainerNoRerun")] == (
        False,
        f"{action} of container {short_id(other)} (not {name}'s Id) at {rfc3339_ms(when)} in its window",
    )


@pytest.mark.parametrize("seq", [3, 7])
def test_a_record_after_the_kill_that_repeats_an_earlier_seq_was_not_there_at_the_kill(tmp_path: Path, seq: int) -> None:
    """The ledger as it stood at a kill is its lines up to beforeKillSeq's (what ledger-at-kill.json holds): a line
    written after it that repeats an earlier seq breaks ledgerWellFormed, and does not put its run in flight at the
    kill."""
    files = derive(sound())
    ledger = files["study/ledger.jsonl"]
    before = files["kills/1/kill.json"]["beforeKillSeq"]
    i = next(i for i, r in enumerate(ledger) if r["seq"] > before and r["kind"] == "runStarted")
    run = ledger[i]["content"]["run"]
    ledger[i]["seq"] = seq
    got = _checks(write(files, tmp_path / "s"))
    assert got[("study", "ledgerWellFormed")][0] is False
    ok, detail = got[("kill 1", "killEvidence")]
    assert f"omits run {run}" not in detail and ("kill 1 · " + run, "chargedOnce") not in got, detail
