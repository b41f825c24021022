"""Every file of the folder read as the console writes it (§6.9's clarifications), or its checks fail.

No object in any line or file repeats a key (the parser keeps one copy, and
the two may say different things); the console writes no symbolic link (a link
inside the folder makes one copy of a fact the other) and no empty line.
The folders are ``tests/corpus.py``'s sound folder, changed in one file.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from studymon.engine.contract.automata import Where, proof
from studymon.engine.judge import judge
from studymon.engine.judge.verdict import PROOFS_KEPT, Check, Verdict
from tests.corpus import CORPUS, HOSTILE, Case, Hostile, derive, sound, write

Key = tuple[str, str]


def _not_holding(out: Path) -> dict[Key, tuple[bool | None, str]]:
    return {(c.scope, c.name): (c.ok, c.detail) for c in judge(out).checks if c.ok is not True}


def _repeat_first_key(text: str) -> str:
    """The object's text with its first key written twice, first with another value (the second copy wins in
    most parsers)."""
    obj = json.loads(text)
    key = next(iter(obj))
    body = text.strip()
    assert body.startswith("{")
    return "{" + json.dumps(key) + ": " + json.dumps(["another", "value"]) + ", " + body[1:] + "\n"


# (file, line to change (None: the whole file), the check that must fail)
REPEATED = [
    ("launches.jsonl", 0, ("study", "exitedCleanly")),
    ("timeline.jsonl", 3, ("study", "ledgerWellFormed")),
    ("arms.jsonl", 0, ("study", "killTriggered")),
    ("kills/1/container-events-live.jsonl", 0, ("kill 1 · d1", "sameContainerNoRerun")),
    ("kills/1/kill.json", None, ("kill 1", "killEvidence")),
    ("kills/1/container-events-window.json", None, ("kill 1", "killEvidence")),
    ("kills/1/container-before.json", None, ("kill 1", "killEvidence")),
    ("research.json", None, ("study", "contractKept")),
]


@pytest.mark.parametrize("rel, line, check", REPEATED, ids=[r[0] for r in REPEATED])
def test_an_object_that_repeats_a_key_is_no_evidence(tmp_path: Path, rel: str, line: int | None, check: Key) -> None:
    out = write(derive(sound()), tmp_path / "s")
    path = out / rel
    if not path.exists() and rel == "arms.jsonl":
        path.write_text(json.dumps({"event": "arm"}) + "\n")
    assert _not_holding(out) == {} or rel == "arms.jsonl"
    text = path.read_text()
    if line is None:
        path.write_text(_repeat_first_key(text))
    else:
        lines = text.splitlines(keepends=True)
        lines[line] = _repeat_first_key(lines[line])
        path.write_text("".join(lines))
    got = _not_holding(out)
    assert check in got and got[check][0] is False, got
    # Said in the file's own words (arms.jsonl counts its lines that are not arming events).
    assert any("repeats a key" in detail or "not an arming event" in detail for _, detail in got.values()), got


def test_a_symbolic_link_inside_the_folder_is_no_evidence(tmp_path: Path) -> None:
    """ledger-at-kill.json linked to a copy of itself elsewhere in the folder: the same bytes, but a link."""
    out = write(derive(sound()), tmp_path / "s")
    at_kill = out / "kills/1/ledger-at-kill.json"
    copy = out / "kills/1/elsewhere.json"
    copy.write_bytes(at_kill.read_bytes())
    at_kill.unlink()
    os.symlink("elsewhere.json", at_kill)
    got = _not_holding(out)
    assert got[("kill 1", "killEvidence")][0] is False
    assert "a symbolic link (the console writes regular files only)" in got[("kill 1", "killEvidence")][1]


def test_a_linked_kill_folder_is_no_kill_folder(tmp_path: Path) -> None:
    """The console makes kill folders, never links to them: a link is no kill folder (it claims nothing, and is
    not judged as a kill), and a link in the place of one is a hole in the numbering."""
    out = write(derive(sound()), tmp_path / "s")
    os.symlink(out / "kills" / "2", out / "kills" / "3")
    assert not [key for key in _not_holding(out) if key[0].startswith("kill 3")]
    assert not [c for c in judge(out).checks if c.scope.startswith("kill 3")]
    shutil.rmtree(out / "kills" / "1")
    os.symlink(out / "kills" / "2", out / "kills" / "1")
    ok, detail = _not_holding(out)[("kill 2", "killEvidence")]
    assert ok is False and "kills/1/ is missing" in detail, detail


def test_an_empty_line_is_not_a_line_the_console_writes(tmp_path: Path) -> None:
    out = write(derive(sound()), tmp_path / "s")
    with (out / "launches.jsonl").open("a") as f:
        f.write("\n")
    got = _not_holding(out)
    empty = f"launches.jsonl line {_lines(out)}: empty"
    # A line that is not a launch leaves every kill's delivery untold too (docs/contract.md, "Which check a file fails").
    assert got == {
        ("study", "exitedCleanly"): (False, empty),
        ("kill 1", "killDelivered"): (False, f"launches.jsonl cannot be relied on: {empty}"),
        ("kill 2", "killDelivered"): (False, f"launches.jsonl cannot be relied on: {empty}"),
    }


def test_a_timeline_line_that_is_not_a_record_seen_fails_the_ledger_s_comparison(tmp_path: Path) -> None:
    out = write(derive(sound()), tmp_path / "s")
    with (out / "timeline.jsonl").open("a") as f:
        f.write('{"seq": "x"}\n')
    ok, detail = _not_holding(out)[("study", "ledgerWellFormed")]
    assert ok is False and "not a record seen, so the ledger cannot be compared with it" in detail


def _lines(out: Path) -> int:
    return len((out / "launches.jsonl").read_text().splitlines())


def test_a_fired_line_takes_an_armed_point(tmp_path: Path) -> None:
    """§7: a point fires (or is missed) once armed, each once: a fired line copied, or one whose arm line is gone,
    fails killTriggered."""
    out = write(derive(sound()), tmp_path / "s")
    arms = out / "arms.jsonl"
    assert arms.exists(), "the corpus's sound folder has an armed kill"
    lines = arms.read_text().splitlines(keepends=True)
    fired = next(line for line in lines if '"fired"' in line)
    arms.write_text("".join(lines) + fired)
    ok, detail = _not_holding(out)[("study", "killTriggered")]
    assert ok is False and "1 fired or missed line with no point armed" in detail


def test_a_record_seen_before_any_controller_started_was_written_by_none(tmp_path: Path) -> None:
    files = derive(sound())
    first = files["launches.jsonl"][0]
    seen = files["timeline.jsonl"][0]["seenAt"]
    first["at"] = files["timeline.jsonl"][2]["seenAt"]  # the first controller started after three records were seen
    assert seen < first["at"]
    # The timeline's copy of when a record was seen disagrees with launches.jsonl: timeline.jsonl's fault.
    ok, detail = _not_holding(write(files, tmp_path / "s"))[("study", "ledgerWellFormed")]
    assert ok is False and "timeline.jsonl line 1: seq 1 was seen before any controller started" in detail


def test_a_crash_whose_kill_folder_is_gone_keeps_its_question(tmp_path: Path) -> None:
    """§6.8: every controller end while runs were in flight is claimed by a kill folder.  A crash folder removed
    takes its targets' checks with it, but the end, with d1 in flight by what the console saw, is still there."""
    import shutil

    files = derive(sound())
    out = write(files, tmp_path / "s")
    assert _not_holding(out) == {}
    shutil.rmtree(out / "kills" / "2")
    shutil.rmtree(out / "kills" / "1")
    (out / "arms.jsonl").unlink()
    got = _not_holding(out)
    ok, detail = got[("study", "exitedCleanly")]
    assert ok is False and "ended with d1 in flight, and no kill folder claims that end" in detail


@pytest.mark.parametrize("how", ["bom", "utf-16"])
def test_a_ledger_line_that_is_not_plain_utf_8_is_not_a_record(tmp_path: Path, how: str) -> None:
    """§6.9: ledger lines are UTF-8; a byte order mark or UTF-16 is not a record (Python's json alone takes both)."""
    out = write(derive(sound()), tmp_path / "s")
    ledger = out / "study" / "ledger.jsonl"
    lines = ledger.read_bytes().splitlines(keepends=True)
    text = lines[2].decode()
    lines[2] = b"\xef\xbb\xbf" + lines[2] if how == "bom" else text.rstrip("\n").encode("utf-16") + b"\n"
    ledger.write_bytes(b"".join(lines))
    ok, detail = _not_holding(out)[("study", "ledgerWellFormed")]
    assert ok is False and detail.startswith("line 3: malformed (not JSON"), detail


def test_a_torn_last_line_of_the_timeline_is_a_record_not_seen(tmp_path: Path) -> None:
    """A console that died writing its last timeline line leaves it torn: that record was not seen, and the folder
    is otherwise sound (a line that is not a record seen anywhere else fails ledgerWellFormed)."""
    out = write(derive(sound()), tmp_path / "s")
    timeline = out / "timeline.jsonl"
    timeline.write_bytes(timeline.read_bytes()[:-10])
    assert ("study", "ledgerWellFormed") not in _not_holding(out)


def test_integers_past_64_bits_are_read_exactly_and_compared_by_value(tmp_path: Path) -> None:
    """Two experiment ids past 2^64 that differ by one stay two (orjson alone reads both as one float), and
    ledger-at-kill.json, read by another parser, still equals the ledger."""
    from studymon.engine.contract.ledger import LedgerParser
    from studymon.engine.io import safefile

    big = 2**64
    line = {"seq": 1, "at": "2026-12-01T00:00:00.000Z", "kind": "x", "content": {"ids": [big, big + 1]}}
    records, issues = LedgerParser(strict=True).feed((json.dumps(line) + "\n").encode())
    assert issues == [] and records[0].content["ids"] == [big, big + 1]
    (tmp_path / "f.json").write_text(json.dumps({"a": big + 1, "b": -(big + 2)}))
    assert safefile.read_json(tmp_path, "f.json") == {"a": big + 1, "b": -(big + 2)}
    # In a sound folder: the settled run's experiment ids past 2^64, in the ledger and in ledger-at-kill.json alike.
    files = derive(sound())
    for rel in [r for r in files if r == "study/ledger.jsonl" or r.endswith("ledger-at-kill.json")]:
        for record in files[rel]:
            if record["kind"] == "charge":
                record["content"]["ref"] = big + record["seq"]
    got = _not_holding(write(files, tmp_path / "s"))
    assert got == {}, got


def test_an_unreadable_research_json_leaves_the_expected_end_unknown(tmp_path: Path) -> None:
    out = write(derive(sound()), tmp_path / "s")
    (out / "research.json").write_text("{")
    ok, detail = _not_holding(out)[("study", "haltedAtExport")]
    assert ok is False and detail == "research.json cannot be read: the end the study expects is unknown"


WRONG_SHAPE = "a snapshot of the wrong shape (its processes and containers are lists of objects)"


@pytest.mark.parametrize(
    "line, why",
    [
        ('{"at": "2026-12-01T00:00:00.000Z", "label": "sample", "cpu": 1, "cpu": 2}', "an object repeats a key"),
        ('{"at": "2026-12-01T00:00:00.000Z", "label": "sample", "cpu": NaN}', "not JSON"),
        ('{"at": "2026-12-01T00:00:00.000Z", "label": "start"}', WRONG_SHAPE),
        ('{"at": "2026-12-01T00:00:00.000Z", "label": "start", "processes": [null], "containers": []}', WRONG_SHAPE),
        ('{"at": "2026-12-01T00:00:00.000Z", "label": "end", "processes": [], "containers": [7]}', WRONG_SHAPE),
        ('{"at": "yesterday", "label": "sample"}', "a line whose at is not a time"),
        ('{"at": "2026-12-01T00:00:00.000Z", "label": "lunch"}', "a line of no label the console writes"),
    ],
)
def test_machine_jsonl_is_read_as_the_console_writes_it(tmp_path: Path, line: str, why: str) -> None:
    """§6.8 puts machine.jsonl's snapshots among the controllers' facts: a line that is no sample or snapshot the
    console writes fails exitedCleanly; a sound one passes."""
    out = write(derive(sound()), tmp_path / "s")
    sample = '{"at": "2026-12-01T00:00:00.000Z", "label": "sample", "load": [0.1, 0.1, 0.1], "cpu": 1.5}\n'
    snapshot = '{"at": "2026-12-01T00:00:01.000Z", "label": "start", "processes": [], "containers": []}\n'
    (out / "machine.jsonl").write_text(sample + snapshot)
    assert ("study", "exitedCleanly") not in _not_holding(out)
    (out / "machine.jsonl").write_text(sample + line + "\n")
    ok, detail = _not_holding(out)[("study", "exitedCleanly")]
    assert ok is False and detail == f"machine.jsonl line 2: {why}", detail


def test_machine_jsonl_that_is_no_regular_file_fails(tmp_path: Path) -> None:
    out = write(derive(sound()), tmp_path / "s")
    (out / "machine.jsonl").unlink()
    (out / "machine.jsonl").mkdir()
    ok, detail = _not_holding(out)[("study", "exitedCleanly")]
    assert ok is False and "machine.jsonl" in detail and "not a regular file" in detail


def test_a_snapshot_entry_that_is_no_inspect_object_fails_every_target_s_container_check(tmp_path: Path) -> None:
    """Whatever container an entry is of, a snapshot file whose entry is not the runtime's inspect object is not the
    console's: every target's sameContainerNoRerun reads the snapshots, an unsettled one's too (docs/contract.md,
    "Which check a file fails": a snapshot)."""
    files = derive(sound())
    before = files["kills/1/container-before.json"]
    before["inforsi-s-x9"] = 0  # of no target
    failed = _not_holding(write(files, tmp_path / "s"))
    assert ("kill 1", "killEvidence") not in failed
    ok, detail = failed[("kill 1 · d1", "sameContainerNoRerun")]
    assert ok is False and "container-before.json: the entry for inforsi-s-x9 is not an inspect object" in detail


# --- which check a file fails (docs/contract.md, "Which check a file fails") ---------------------------------


def _lines_of(out: Path, rel: str) -> list[str]:
    return (out / rel).read_text().splitlines()


def _put_lines(out: Path, rel: str, lines: list[str]) -> None:
    (out / rel).write_text("".join(line + "\n" for line in lines))


def _edit_line(rel: str, n: int, **fields: object) -> object:
    def edit(out: Path) -> None:
        lines = _lines_of(out, rel)
        obj = json.loads(lines[n])
        for key, value in fields.items():
            if value is _GONE:
                del obj[key]
            else:
                obj[key] = value
        lines[n] = json.dumps(obj)
        _put_lines(out, rel, lines)

    return edit


_GONE = object()


def _delete(rel: str) -> object:
    return lambda out: (out / rel).unlink()


def _append_raw(rel: str, text: str) -> object:
    def edit(out: Path) -> None:
        with (out / rel).open("a") as f:
            f.write(text)

    return edit


def _duplicate(rel: str, n: int) -> object:
    def edit(out: Path) -> None:
        lines = _lines_of(out, rel)
        _put_lines(out, rel, lines[: n + 1] + [lines[n]] + lines[n + 1 :])

    return edit


def _swap(rel: str, i: int, j: int) -> object:
    def edit(out: Path) -> None:
        lines = _lines_of(out, rel)
        lines[i], lines[j] = lines[j], lines[i]
        _put_lines(out, rel, lines)

    return edit


def _final_end_early(seconds: float) -> object:
    """The final controller's end dated ``seconds`` after its start: its last records come after its end."""
    from studymon.engine.evidence.records import time_epoch
    from studymon.engine.io.clock import rfc3339_ms

    def edit(out: Path) -> None:
        lines = [json.loads(x) for x in _lines_of(out, "launches.jsonl")]
        lines[-1]["at"] = rfc3339_ms(time_epoch(lines[-2]["at"]) + seconds)  # type: ignore[operator]
        _put_lines(out, "launches.jsonl", [json.dumps(x) for x in lines])

    return edit


ST, K1 = "study", "kill 1"
# (what, the change, the checks that fail with a piece of their reason; {} where nothing fails)
FILE_RULES = [
    ("timeline missing", _delete("timeline.jsonl"),
     {(ST, "ledgerWellFormed"): "timeline.jsonl: missing", (K1, "killEvidence"): "timeline.jsonl: missing"}),
    ("timeline seq seen twice", _duplicate("timeline.jsonl", 3), {(ST, "ledgerWellFormed"): "seq 4 seen twice"}),
    ("timeline seq past 64 bits", _edit_line("timeline.jsonl", 3, seq=2**64),
     {(ST, "ledgerWellFormed"): "past the ledger's last"}),
    ("timeline out of order", _swap("timeline.jsonl", 2, 20),
     {(ST, "ledgerWellFormed"): "timeline.jsonl is appended in time order",
      (K1, "killEvidence"): "timeline.jsonl is appended in time order"}),
    ("timeline torn last line", _append_raw("timeline.jsonl", '{"seq": 9'), {}),
    ("outcome missing", _delete("outcome.json"), {(ST, "exitedCleanly"): "outcome.json: missing"}),
    ("machine missing", _delete("machine.jsonl"), {(ST, "exitedCleanly"): "machine.jsonl: missing"}),
    ("machine torn last line", _append_raw("machine.jsonl", "\0\0\0"), {}),
    ("machine snapshots out of order", _swap("machine.jsonl", 0, 1),
     {(ST, "exitedCleanly"): "a snapshot earlier than the snapshot of line 1"}),
    ("launches torn last line", _append_raw("launches.jsonl", '{"event": "st'), {}),
    ("launches resume not a boolean", _edit_line("launches.jsonl", 0, resume="false"),
     {(ST, "exitedCleanly"): "resume is not true or false", (K1, "killDelivered"): "resume is not true or false"}),
    ("launches resume against argv", _edit_line("launches.jsonl", 0, argv=["study", "--resume"]),
     {(ST, "exitedCleanly"): "resume and argv disagree", (K1, "killDelivered"): "resume and argv disagree"}),
    ("launches argv as written", _edit_line("launches.jsonl", 0, argv=["study"]), {}),
    ("records written after the final end", _final_end_early(0.5),
     {(ST, "exitedCleanly"): "in no controller's life (launches.jsonl): written while no controller ran"}),
    ("arms torn last line", _append_raw("arms.jsonl", '{"event": "ar'), {}),
    ("arms fired twice", _duplicate("arms.jsonl", 1), {(ST, "killTriggered"): "kill 1 fired twice"}),
    ("arms fired before its record was seen", _edit_line("arms.jsonl", 1, at="2026-11-30T00:53:21.000Z"),
     {(ST, "killTriggered"): "kill 1 fired before seq 7 was seen"}),
    ("recording torn last line", _append_raw("kills/1/container-events-live.jsonl", '{"Type": "cont'), {}),
]


@pytest.mark.parametrize("what, change, fails", FILE_RULES, ids=[r[0] for r in FILE_RULES])
def test_a_file_fails_the_check_the_contract_names(tmp_path: Path, what: str, change: object, fails: dict) -> None:
    out = write(derive(sound()), tmp_path / "s")
    assert _not_holding(out) == {}
    change(out)  # type: ignore[operator]
    got = _not_holding(out)
    # Exactly nothing where nothing is wrong; where something is, at least the checks named (a line that is not a
    # launch, a timeline gone, also leaves later facts untold: those checks say so too).
    assert set(got) >= set(fails) and (fails or not got), (what, got)
    for key, piece in fails.items():
        assert got[key][0] is False and piece in got[key][1], (what, key, got[key])


# Checks whose every ✗ is stated as a proof (§6.8.3): the events with their files and lines, then the rule.
PROVEN = {
    "exitedCleanly",
    "ledgerWellFormed",
    "contractKept",
    "haltedAtExport",
    "chargedEqualsStarts",
    "resultsAccounted",
    "killTriggered",
    "killDelivered",
    "killEvidence",
    "sameContainerNoRerun",
    "chargedOnce",
    "resultSettledAndFinished",
}


def _assert_proven(c: Check, what: str) -> None:
    """A ✗ with its proofs: each "Let <lines>. Then <rule>: a contradiction.", each line with its file, whole in
    report.json beside the short detail."""
    assert c.proofs, (what, c.scope, c.name, c.detail)
    for p in c.proofs:
        doc = p.as_json()
        assert doc["text"].startswith("Let ") and doc["text"].endswith(": a contradiction."), (what, doc)
        assert doc["let"], (what, doc)
        for x in doc["let"]:
            assert isinstance(x["file"], str) and x["file"] and isinstance(x["line"], int) and x["line"] >= 0, doc
            assert isinstance(x["says"], str) and x["says"], (what, doc)
        assert isinstance(doc["then"], str) and doc["then"], (what, doc)
    assert c.as_json()["proofs"] == [p.as_json() for p in c.proofs]


@pytest.mark.parametrize("what, change, fails", FILE_RULES, ids=[r[0] for r in FILE_RULES])
def test_each_failure_is_proven_with_its_lines(tmp_path: Path, what: str, change: object, fails: dict) -> None:
    out = write(derive(sound()), tmp_path / "s")
    change(out)  # type: ignore[operator]
    checks = {(c.scope, c.name): c for c in judge(out).checks}
    for key in fails:
        c = checks[key]
        if key[1] not in PROVEN:
            continue
        _assert_proven(c, what)


def test_a_proof_names_the_lines_that_contradict(tmp_path: Path) -> None:
    out = write(derive(sound()), tmp_path / "s")
    _duplicate("timeline.jsonl", 3)(out)  # type: ignore[operator]
    c = next(c for c in judge(out).checks if c.name == "ledgerWellFormed")
    assert [p.text for p in c.proofs] == [
        "Let timeline.jsonl line 5: seq 4 seen; timeline.jsonl line 4: seq 4 seen before. Then a console writes a "
        "line for a record once, as it first sees it: a contradiction."
    ]
    out = write(derive(sound()), tmp_path / "b")
    lines = (out / "study" / "ledger.jsonl").read_text().splitlines()
    first = json.loads(lines[0])
    first["content"]["budget"] = "lots"
    lines[0] = json.dumps(first)
    (out / "study" / "ledger.jsonl").write_text("".join(x + "\n" for x in lines))
    c = next(c for c in judge(out).checks if c.name == "contractKept")
    assert c.ok is False and c.proofs[0].text.startswith("Let study/ledger.jsonl line 1: seq 1. Then rule ")


def test_a_target_s_proof_names_its_record_and_its_event(tmp_path: Path) -> None:
    """The die says exit 137 and the run's runResult 0: the proof holds the ledger's line against the recording's."""
    case = next(c for c in CORPUS if c.name == "die-exit-137")
    c = next(c for c in judge(write(case.build(), tmp_path / "s")).checks if c.ok is False)
    assert (c.scope, c.name) == ("kill 1 · d1", "sameContainerNoRerun")
    (p,) = c.proofs
    assert [(x["file"], x["line"]) for x in p.as_json()["let"]] == [
        ("study/ledger.jsonl", 8),
        ("kills/1/container-events-live.jsonl", 3),
    ]
    assert p.text.startswith("Let study/ledger.jsonl line 8: runResult of d1 (seq 8): exit 0; ")
    assert p.then == "a runResult says the exit code its run's container exited with"


def test_a_missing_file_is_its_proof_with_no_line(tmp_path: Path) -> None:
    """A file that is not there has no line: the proof names it whole (line 0) and says it is missing."""
    out = write(derive(sound()), tmp_path / "s")
    (out / "kills" / "1" / "container-before.json").unlink()
    c = next(c for c in judge(out).checks if c.scope == "kill 1" and c.name == "killEvidence")
    assert c.ok is False
    assert c.proofs[0].let == ((Where("kills/1/container-before.json", 0), "missing"),)
    assert c.proofs[0].text.startswith("Let kills/1/container-before.json: missing. Then ")


def test_proofs_are_kept_to_a_bound() -> None:
    """A rule broken a million times keeps PROOFS_KEPT proofs, however they come (one by one, or as a list)."""
    v = Verdict("chargedEqualsStarts", "study")
    for i in range(1, 100):
        v.fail(f"reason {i}", proof(Where("study/ledger.jsonl", i), f"seq {i}", "a rule"))
    v.proven(proof(Where("study/ledger.jsonl", i), f"seq {i}", "a rule") for i in range(100, 200))
    c = v.check("")
    assert c.ok is False and len(c.proofs) == PROOFS_KEPT
    assert [p.let[0][0].line for p in c.proofs] == list(range(1, PROOFS_KEPT + 1))


@pytest.mark.parametrize("case", CORPUS, ids=[c.name for c in CORPUS])
def test_every_failure_of_a_wrong_folder_is_proven(tmp_path: Path, case: Case) -> None:
    """Every ✗ of every wrong folder of the corpus (tests/corpus.py) is stated as proofs with their lines."""
    out = write(case.build(), tmp_path / "s")
    failed = [c for c in judge(out).checks if c.ok is False]
    assert failed or not any(ok is False for ok in case.expected.values()), case.name
    for c in failed:
        assert c.name in PROVEN, (case.name, c.name)
        _assert_proven(c, case.name)


@pytest.mark.parametrize("hostile", HOSTILE, ids=[h.name for h in HOSTILE])
def test_every_failure_of_a_hostile_folder_is_proven(tmp_path: Path, hostile: Hostile) -> None:
    out = write(derive(sound()), tmp_path / "s")
    hostile.prepare(out)
    failed = [c for c in judge(out).checks if c.ok is False]
    assert failed, hostile.name
    for c in failed:
        assert c.name in PROVEN, (hostile.name, c.name)
        _assert_proven(c, hostile.name)


# --- facts held twice, each copy held to the story (§6.9) ------------------------------------------------------


def test_a_die_is_held_to_the_earlier_copy_of_when_its_result_was_seen(tmp_path: Path) -> None:
    """The window's resultSeenEpoch and the timeline's seenAt say when the console saw a target's result: the die
    must come before the earlier of the two (within a second), whichever copy was moved."""
    from studymon.engine.evidence.records import time_epoch
    from studymon.engine.io.clock import rfc3339_ms

    files = derive(sound())
    seq = files["kills/1/container-events-window.json"]["targets"]["d1"]["resultSeq"]
    line = next(x for x in files["timeline.jsonl"] if x["seq"] == seq)
    line["seenAt"] = rfc3339_ms(time_epoch(line["seenAt"]) - 5)  # seen five seconds before its container died
    failed = _not_holding(write(files, tmp_path / "s"))
    ok, detail = failed[("kill 1 · d1", "sameContainerNoRerun")]
    assert ok is False and "comes after its result was seen: the study did not wait for its run" in detail, detail
    assert failed[("kill 1", "killEvidence")][0] is False  # and the two copies disagree


def test_a_killed_controller_without_its_end_yet_is_unknown_while_the_study_can_resume(tmp_path: Path) -> None:
    """No end of the killed pid in launches.jsonl: ✗ once the study finished, ? while it can still be resumed (the
    keeper may be slow; §6.6, what has not happened yet)."""
    files = derive(sound())
    pid = files["kills/1/kill.json"]["pid"]
    launches = files["launches.jsonl"]
    cut = next(i for i, x in enumerate(launches) if x["event"] == "end" and x["pid"] == pid)
    files["launches.jsonl"] = launches[:cut]  # the killed controller is the last; it has no end yet
    ok, detail = _not_holding(write(files, tmp_path / "open"))[("kill 1", "killDelivered")]
    assert ok is None and f"no end line for pid {pid} at or after the kill" in detail, detail
    files = derive(sound())
    files["launches.jsonl"] = [x for x in files["launches.jsonl"] if not (x["event"] == "end" and x["pid"] == pid)]
    ok, detail = _not_holding(write(files, tmp_path / "done"))[("kill 1", "killDelivered")]
    assert ok is False and f"no end line for pid {pid} at or after the kill" in detail, detail


def test_an_automatic_kill_s_trigger_was_seen_when_the_timeline_saw_its_record(tmp_path: Path) -> None:
    """kill.json's triggerSeenEpoch and timeline.jsonl's seenAt of triggerSeq are one moment, stamped by one console:
    moved apart (both of kill.json's copies together, so that the file agrees with itself), killEvidence fails."""
    from studymon.engine.evidence.records import time_epoch
    from studymon.engine.io.clock import rfc3339_ms

    files = derive(sound())
    auto = [n for n in (1, 2) if files[f"kills/{n}/kill.json"].get("trigger") == "auto"
            and isinstance(files[f"kills/{n}/kill.json"].get("triggerSeq"), int)]
    assert auto, "the sound folder has an automatic kill at a record"
    kill = files[f"kills/{auto[0]}/kill.json"]
    seen = next(x["seenAt"] for x in files["timeline.jsonl"] if x["seq"] == kill["triggerSeq"])
    kill["triggerSeenEpoch"] = time_epoch(seen) + 0.0004  # as the console stamps it: the text is truncated
    kill["triggerSeenAt"] = seen
    assert (f"kill {auto[0]}", "killEvidence") not in _not_holding(write(files, tmp_path / "sound"))
    # The record before the trigger seen a moment earlier (it is in the sound folder's batch): its time is not the
    # trigger's, and nothing is said of it.
    before = next(x for x in files["timeline.jsonl"] if x["seq"] == kill["triggerSeq"] - 1)
    kept = before["seenAt"]
    before["seenAt"] = rfc3339_ms(time_epoch(kept) - 0.2)
    assert (f"kill {auto[0]}", "killEvidence") not in _not_holding(write(files, tmp_path / "apart"))
    before["seenAt"] = kept
    kill["triggerSeenEpoch"] -= 0.5
    kill["triggerSeenAt"] = rfc3339_ms(kill["triggerSeenEpoch"])
    ok, detail = _not_holding(write(files, tmp_path / "moved"))[(f"kill {auto[0]}", "killEvidence")]
    assert ok is False and "triggerSeenEpoch is not when timeline.jsonl saw triggerSeq" in detail, detail


def test_a_ledger_not_written_yet_is_unknown_and_one_that_is_no_file_fails(tmp_path: Path) -> None:
    """While the study can still be resumed, a ledger that is not there yet leaves every check that reads it ?, the
    targets' included; a ledger that is a link or a folder is no ledger to come, and fails them."""
    files = derive(sound())
    launches = files["launches.jsonl"]
    files["launches.jsonl"] = launches[: max(i for i, x in enumerate(launches) if x["event"] == "start") + 1]
    out = write(files, tmp_path / "missing")
    (out / "study" / "ledger.jsonl").unlink()
    got = _not_holding(out)
    targets = {k: v for k, v in got.items() if " · " in k[0]}
    assert targets and all(ok is None for ok, _ in targets.values()), targets
    out = write(files, tmp_path / "folder")
    (out / "study" / "ledger.jsonl").unlink()
    (out / "study" / "ledger.jsonl").mkdir()
    got = _not_holding(out)
    assert got[("kill 1 · d1", "chargedOnce")][0] is False and got[("study", "contractKept")][0] is False, got


def test_an_end_claimed_by_a_kill_does_not_excuse_a_later_one_no_folder_claims(tmp_path: Path) -> None:
    """§6.8, end by end: kill 1's folder claims the first controller's end; the second kill's folder removed, the
    end it claimed, with a run in flight, is claimed by none, and exitedCleanly says so of that pid alone."""
    import shutil

    files = derive(sound())
    out = write(files, tmp_path / "s")
    pids = [json.loads((out / "kills" / str(n) / "kill.json").read_text())["pid"] for n in (1, 2)]
    shutil.rmtree(out / "kills" / "2")
    ok, detail = _not_holding(out)[("study", "exitedCleanly")]
    assert ok is False and f"pid {pids[1]} ended with " in detail and "no kill folder claims that end" in detail, detail
    assert f"pid {pids[0]} ended" not in detail, detail
