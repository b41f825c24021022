"""``studymon report CAMPAIGN`` judges every trial from its own folder and holds the journal and campaign.json to them.

One real campaign is made once for the module (``studymon explore --headless --max-trials 2`` over the
JavaScript double of the kill points, on two local Dask workers): trial 1 killed at ``after:studyOpen``,
trial 2 at ``after:stageOpen``, both holding.  Each case copies it and changes it in one way, for real (a
folder swapped, linked, copied from the trace, removed; a line of the journal or a field of campaign.json
edited; a file replaced by a FIFO, a link out, a huge file, bytes that are not UTF-8, an object with a key
twice, 100 000 lines), then runs ``studymon report CAMPAIGN`` as an operator would, in a process of its own:
the exit status (1 for a ✗, 3 for a ?), the check that says so, no traceback, an answer in bounded time,
nothing of the campaign changed (campaign.json is written again only with the verdicts judged now, when
nothing else is wrong), and nothing read from a file printed raw.  The checks' details are read from the
engine's own report of the same folder (:func:`studymon.engine.explore.campaign.rejudge`).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from studymon.engine.explore import campaign as campaign_module
from studymon.engine.explore.campaign import TRIALS_LIMIT, CampaignReport, Trial, matrix, rejudge
from tests.studies import jsonl, own_runtime_state, studymon

pytestmark = pytest.mark.slow

DOUBLE = Path(__file__).resolve().parent / "doubles" / "points_study.js"
STUDY = "ex"
MARKER = "HOSTILE-BYTES-c4m9"  # in files out of the campaign, or of the wrong kind: never printed
# Escape sequences (a colour, a terminal title, a bell), rich markup and a hyperlink, a bidirectional override.
HOSTILE = f"\x1b[31mRED\x1b[0m\x1b]0;title\x07[bold]MARKUP[/bold][link=https://x.invalid]L[/link]\u202eRTL{MARKER}"
ROW = re.compile(r"^│[^│]*│ (campaign|trial \d+)\s*│ (\w+)\s*│ (✓|✗|\?) │", re.MULTILINE)
REPORT_TIMEOUT = 120.0  # seconds: a report is expected in a few; a hang is what this bounds


@pytest.fixture(scope="module")
def base(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A real campaign of two trials that both hold."""
    tmp = tmp_path_factory.mktemp("campaign")
    template = tmp / "double.json"
    template.write_text(
        json.dumps(
            {
                "command": ["node", str(DOUBLE)],
                "backend": "process",
                "pause": 0.15,
                "runSeconds": 0.5,
                "fault": "honest",
                "faults": {},
                "containerPrefix": "smc",
            }
        )
    )
    with own_runtime_state(tmp_path_factory):
        proc = studymon(
            "explore",
            "--headless",
            "--template",
            str(template),
            "--workers",
            "2",
            "--max-trials",
            "2",
            f"{STUDY}=camp",
            cwd=tmp,
            timeout=600,
        )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    camp = tmp / "camp"
    assert [line["state"] for line in jsonl(camp / "trials.jsonl")] == ["planned", "planned", "done", "done"]
    return camp


# --- the folder, and the report ------------------------------------------------------------------------


def copy_of(base: Path, tmp: Path) -> Path:
    camp = tmp / "camp"
    shutil.copytree(base, camp, symlinks=True)
    return camp


def lines(camp: Path) -> list[dict[str, Any]]:
    return jsonl(camp / "trials.jsonl")


def write_lines(camp: Path, values: list[dict[str, Any]]) -> None:
    (camp / "trials.jsonl").write_text("".join(json.dumps(v) + "\n" for v in values), encoding="utf-8")


def summary(camp: Path) -> dict[str, Any]:
    return json.loads((camp / "campaign.json").read_text(encoding="utf-8"))


def write_summary(camp: Path, body: dict[str, Any]) -> None:
    (camp / "campaign.json").write_text(json.dumps(body, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")


def rebuild_matrix(body: dict[str, Any]) -> None:
    """campaign.json's matrix from its trials, as the explorer builds it."""
    body["matrix"] = matrix({t["n"]: Trial.from_json(t) for t in body["trials"]})


def edit_trial(camp: Path, n: int, **fields: Any) -> None:
    """Trial ``n``'s last line in the journal and its entry in campaign.json, changed alike (they still agree);
    its points and class on every line of it."""
    values = lines(camp)
    last = max(i for i, v in enumerate(values) if v["n"] == n)
    values[last].update(fields)
    for v in values:
        if v["n"] == n:
            v.update({k: fields[k] for k in ("points", "cls", "class") if k in fields})
    write_lines(camp, values)
    body = summary(camp)
    next(t for t in body["trials"] if t["n"] == n).update(fields)
    rebuild_matrix(body)
    write_summary(camp, body)


def state_of(folder: Path) -> dict[str, tuple[Any, ...]]:
    """Every entry of the folder, not following links: its kind, size, time and (for a small file) a digest."""
    out: dict[str, tuple[Any, ...]] = {}
    for dirpath, dirnames, filenames in os.walk(folder):
        for name in dirnames + filenames:
            path = os.path.join(dirpath, name)
            st = os.lstat(path)
            digest = ""
            if os.path.isfile(path) and not os.path.islink(path) and st.st_size < 1 << 20:
                digest = hashlib.sha256(Path(path).read_bytes()).hexdigest()
            out[os.path.relpath(path, folder)] = (st.st_mode, st.st_size, st.st_mtime_ns, digest)
    return out


class Reported:
    """One ``studymon report CAMPAIGN`` run (its output, exit status, the marks of its rows), and the engine's
    report of the same folder with every detail."""

    def __init__(self, camp: Path, written: bool = False) -> None:
        before = state_of(camp)
        began = time.monotonic()
        self.proc = studymon("report", str(camp), cwd=camp.parent, timeout=REPORT_TIMEOUT)
        self.seconds = time.monotonic() - began
        self.out = self.proc.stdout
        self.code = self.proc.returncode
        self.marks = {(scope, check): mark for scope, check, mark in ROW.findall(self.out)}
        assert "Traceback" not in self.proc.stderr and self.proc.stderr == "", self.proc.stderr[-3000:]
        assert self.code in (0, 1, 3), (self.code, self.out[-3000:])
        if not written:
            assert state_of(camp) == before, "the report wrote into the campaign"
        reported = state_of(camp)
        self.engine: CampaignReport = rejudge(camp)
        assert self.engine.written is None and state_of(camp) == reported, "campaign.json written a second time"
        self.checks = {(c.scope, c.name): c for c in self.engine.checks}
        assert {k: "✓" if c.ok else ("✗" if c.ok is False else "?") for k, c in self.checks.items()} == self.marks

    def mark(self, check: str, scope: str = "campaign") -> str:
        return self.marks[(scope, check)]

    def detail(self, check: str, scope: str = "campaign") -> str:
        return self.checks[(scope, check)].detail

    def failing(self) -> dict[tuple[str, str], str]:
        return {k: m for k, m in self.marks.items() if m != "✓"}


# --- a sound campaign -----------------------------------------------------------------------------------


def test_a_sound_campaign_holds_every_check_and_nothing_is_written(base: Path, tmp_path: Path) -> None:
    camp = copy_of(base, tmp_path)
    r = Reported(camp)
    assert r.code == 0, r.out
    assert set(r.marks) == {
        ("campaign", "journalWellFormed"),
        ("campaign", "trialFolders"),
        ("campaign", "journalAgrees"),
        ("campaign", "summaryAgrees"),
        ("campaign", "trialsJudged"),
        ("campaign", "trialsRan"),
        ("trial 1", "trialHolds"),
        ("trial 2", "trialHolds"),
    }, r.marks
    assert r.failing() == {}
    assert r.detail("trialHolds", "trial 1").startswith("after:studyOpen [after:studyOpen · nothing unfinished]")
    assert "studymon explore — ex" in r.out and "✓ all 8 checks hold" in r.out
    assert r.detail("journalWellFormed") == (
        "2 trials in 4 lines, numbered one by one, each planned then ended at most once"
    )


# --- trial folders that are not their trial's own -------------------------------------------------------


def _swap(camp: Path) -> None:
    trials = camp / "trials"
    (trials / "1").rename(trials / "x")
    (trials / "2").rename(trials / "1")
    (trials / "x").rename(trials / "2")


def _link_to_other(camp: Path) -> None:
    shutil.rmtree(camp / "trials" / "1")
    (camp / "trials" / "1").symlink_to("2")


def _link_to_trace(camp: Path) -> None:
    shutil.rmtree(camp / "trials" / "1")
    (camp / "trials" / "1").symlink_to(camp / "trace")


def _link_out(camp: Path) -> None:
    outside = camp.parent / "outside"
    shutil.copytree(camp / "trials" / "1", outside)
    (outside / "research.json").write_text(json.dumps({"study": "ex-1", "note": MARKER}))
    shutil.rmtree(camp / "trials" / "1")
    (camp / "trials" / "1").symlink_to(outside)


def _trials_out(camp: Path) -> None:
    (camp / "trials").rename(camp.parent / "trials-outside")
    (camp / "trials").symlink_to(camp.parent / "trials-outside")


def _copy_of_trace(camp: Path) -> None:
    shutil.rmtree(camp / "trials" / "2")
    shutil.copytree(camp / "trace", camp / "trials" / "2", symlinks=True)


def _another_study(camp: Path) -> None:
    path = camp / "trials" / "2" / "research.json"
    research = json.loads(path.read_text())
    research["study"] = "other-2"
    path.write_text(json.dumps(research))


def _another_template(camp: Path) -> None:
    path = camp / "trials" / "2" / "research.json"
    research = json.loads(path.read_text())
    research["pause"] = 0.5
    path.write_text(json.dumps(research))


def _other_points(camp: Path) -> None:
    path = camp / "trials" / "2" / "arms.jsonl"
    arms = jsonl(path)
    for line in arms:
        line["point"] = "after:decision"
    path.write_text("".join(json.dumps(line) + "\n" for line in arms))


def _stranger(camp: Path) -> None:
    shutil.copytree(camp / "trials" / "2", camp / "trials" / "7", symlinks=True)


@pytest.mark.parametrize(
    ("change", "check", "said"),
    [
        (_swap, "trialFolders", "trials/1: research.json is trial 2's study, not ex-1"),
        (_link_to_other, "trialFolders", "trials/1 is a symbolic link to trials/2, not the trial's own folder"),
        (_link_to_trace, "trialFolders", "trials/1 is a symbolic link to the trace, not the trial's own folder"),
        (_link_out, "trialFolders", "trials/1 is a symbolic link out of the campaign, not the trial's own folder"),
        (_trials_out, "trialFolders", "trials/ is a symbolic link: no folder in it is the campaign's"),
        (_copy_of_trace, "trialFolders", "trials/2: research.json is the trace's study, not ex-2"),
        (_another_study, "trialFolders", "trials/2: research.json is study other-2, not ex-2"),
        (_another_template, "trialFolders", "trials/2: research.json is not the campaign's template"),
        (_other_points, "trialFolders", "trials/2: arms.jsonl arms after:decision, not the trial's after:stageOpen"),
        (_stranger, "journalAgrees", "trials/7 is no trial of the journal"),
    ],
    ids=lambda x: x.__name__.strip("_") if callable(x) else None,
)
def test_a_trial_folder_that_is_not_its_trial_s_own_is_a_campaign_check_s_cross(
    base: Path, tmp_path: Path, change: Callable[[Path], None], check: str, said: str
) -> None:
    camp = copy_of(base, tmp_path)
    change(camp)
    r = Reported(camp)
    assert r.code == 1, r.out
    assert r.mark(check) == "✗", r.out
    assert said in r.detail(check), r.detail(check)
    assert MARKER not in r.out
    # A folder that is not its trial's own is not judged as that trial.
    if check == "trialFolders" and change is not _trials_out:
        for k in (1, 2):
            flagged = f"trials/{k}:" in r.detail(check) or f"trials/{k} is" in r.detail(check)
            assert ((f"trial {k}", "trialHolds") in r.marks) != flagged, (k, r.marks)


def test_a_trial_folder_missing_is_a_cross_of_the_journal_s(base: Path, tmp_path: Path) -> None:
    camp = copy_of(base, tmp_path)
    shutil.rmtree(camp / "trials" / "2")
    r = Reported(camp)
    assert r.code == 1 and r.failing() == {("campaign", "journalAgrees"): "✗"}, r.out
    assert r.detail("journalAgrees") == "the journal says trial 2 is done, but trials/2 is missing"


def _missed_in_folder(camp: Path) -> None:
    """Trial 2's folder says its point was missed (its fired line a missed one): the journal still says done."""
    path = camp / "trials" / "2" / "arms.jsonl"
    arms = jsonl(path)
    fired = arms[-1]
    assert fired["event"] == "fired"
    arms[-1] = {
        "event": "missed",
        "at": fired["at"],
        "point": fired["point"],
        "run": None,
        "detail": "the study had gone on",
        "fromSeq": fired["fromSeq"],
    }
    path.write_text("".join(json.dumps(line) + "\n" for line in arms))


def test_the_journal_says_done_where_the_folder_says_missed(base: Path, tmp_path: Path) -> None:
    camp = copy_of(base, tmp_path)
    _missed_in_folder(camp)
    r = Reported(camp)
    assert r.code == 1 and r.mark("journalAgrees") == "✗", r.out
    assert r.detail("journalAgrees") == (
        "the journal says trial 2 is done, but its folder missed after:stageOpen: the study had gone on"
    )
    assert ("trial 2", "trialHolds") not in r.marks, "a missed point is not judged as the trial the journal says"


def test_the_journal_says_missed_where_the_folder_says_fired(base: Path, tmp_path: Path) -> None:
    camp = copy_of(base, tmp_path)
    edit_trial(camp, 2, state="missed", ok=None, failed=[], unknown=[], checks={}, detail="after:stageOpen: gone")
    r = Reported(camp)
    assert r.code == 1 and r.failing() == {("campaign", "journalAgrees"): "✗"}, r.out
    assert r.detail("journalAgrees") == "the journal says trial 2's point was missed, but its folder missed none"


def test_the_journal_says_lost_where_a_folder_is(base: Path, tmp_path: Path) -> None:
    camp = copy_of(base, tmp_path)
    edit_trial(camp, 2, state="lost", ok=None, failed=[], unknown=[], checks={}, detail="its worker was lost")
    r = Reported(camp)
    assert r.code == 1 and r.mark("journalAgrees") == "✗", r.out
    assert "the journal says trial 2 was lost, but trials/2 is there" in r.detail("journalAgrees")
    # A lost point not run again: the campaign is not settled either.
    assert r.mark("trialsRan") == "?" and "trial 2 (after:stageOpen) was lost: its worker was lost" in r.detail(
        "trialsRan"
    )


def test_a_lost_trial_not_run_again_leaves_the_campaign_unknown(base: Path, tmp_path: Path) -> None:
    camp = copy_of(base, tmp_path)
    values = lines(camp)
    extra = {
        **values[0],
        "n": 3,
        "id": "ex-3",
        "out": "trials/3",
        "points": ["after:decision"],
        "cls": "after:decision · nothing unfinished",
        "class": "after:decision · nothing unfinished",
    }
    lost = {**extra, "state": "lost", "detail": "its worker tcp://127.0.0.1:1 was lost while it ran"}
    write_lines(camp, [*values, extra, lost])
    body = summary(camp)
    body["trials"].append(lost)
    rebuild_matrix(body)
    write_summary(camp, body)
    r = Reported(camp)
    assert r.code == 3 and r.failing() == {("campaign", "trialsRan"): "?"}, r.out
    assert r.detail("trialsRan").startswith("trial 3 (after:decision) was lost: its worker tcp://127.0.0.1:1 was lost")


def test_the_journal_s_verdict_is_its_folder_s_report_json(base: Path, tmp_path: Path) -> None:
    camp = copy_of(base, tmp_path)
    edit_trial(camp, 1, ok=False, failed=["kill 1 · chargedOnce"])
    r = Reported(camp)
    assert r.code == 1 and r.mark("journalAgrees") == "✗", r.out
    assert r.detail("journalAgrees") == "the journal's verdict of trial 1 is not its report.json's"
    assert r.detail("trialHolds", "trial 1").endswith("; it was ✗ when it ran (the journal)")


@pytest.mark.parametrize(
    "change, said",
    [
        (lambda body: body.pop("ok"), "not a report (its ok and its checks)"),
        (lambda body: body.update(ok=False), "its ok is not its checks' verdict"),
        (lambda body: body.update(checks={}), "not a report (its ok and its checks)"),
    ],
    ids=["no-ok", "ok-not-its-checks", "checks-not-a-list"],
)
def test_a_trial_s_report_json_is_held_to_its_own_verdict(
    base: Path, tmp_path: Path, change: Callable[[dict[str, Any]], object], said: str
) -> None:
    """report.json writes its verdict twice (§6.9): ``ok``, and the checks it sums up; the journal is held to it."""
    camp = copy_of(base, tmp_path)
    report = camp / "trials" / "1" / "report.json"
    body = json.loads(report.read_text())
    change(body)
    report.write_text(json.dumps(body))
    r = Reported(camp)
    assert r.code == 1 and r.mark("journalAgrees") == "✗", r.out
    assert r.detail("journalAgrees") == f"trial 1: report.json: {said}"


# --- the journal and campaign.json as hostile evidence ----------------------------------------------------


def _fifo(name: str) -> Callable[[Path], None]:
    def change(camp: Path) -> None:
        (camp / name).unlink()
        os.mkfifo(camp / name)

    change.__name__ = f"fifo-{name}"
    return change


def _link_out_file(name: str) -> Callable[[Path], None]:
    def change(camp: Path) -> None:
        outside = camp.parent / f"outside-{name}"
        outside.write_bytes((camp / name).read_bytes().replace(b'"ex-1"', f'"{MARKER}"'.encode()))
        (camp / name).unlink()
        (camp / name).symlink_to(outside)

    change.__name__ = f"link-out-{name}"
    return change


def _huge(name: str, size: int) -> Callable[[Path], None]:
    def change(camp: Path) -> None:
        with open(camp / name, "ab") as fh:
            fh.write(MARKER.encode())
            fh.truncate(size + 1)

    change.__name__ = f"huge-{name}"
    return change


def _not_utf8(name: str) -> Callable[[Path], None]:
    def change(camp: Path) -> None:
        path = camp / name
        data = path.read_bytes()
        path.write_bytes(data.replace(b"nothing unfinished", b"nothing \xff\xfe unfinished", 1))

    change.__name__ = f"not-utf8-{name}"
    return change


def _repeated_key(name: str) -> Callable[[Path], None]:
    def change(camp: Path) -> None:
        path = camp / name
        data = path.read_bytes()
        # Trial 2's verdict said twice: the first copy fails, orjson alone would keep the last.
        path.write_bytes(data.replace(b'"ok": true', b'"ok": false, "ok": true', 1))

    change.__name__ = f"repeated-key-{name}"
    return change


J, S = "trials.jsonl", "campaign.json"


@pytest.mark.parametrize(
    ("change", "check", "said"),
    [
        (_fifo(J), "journalWellFormed", "trials.jsonl: not a regular file (a FIFO)"),
        (_fifo(S), "summaryAgrees", "campaign.json: not a regular file (a FIFO)"),
        (_link_out_file(J), "journalWellFormed", "trials.jsonl: a symbolic link, not the file the explorer writes"),
        (_link_out_file(S), "summaryAgrees", "campaign.json: a symbolic link, not the file the explorer writes"),
        (_huge(J, campaign_module.JOURNAL_CAP), "journalWellFormed", "trials.jsonl: larger than a study could write"),
        (_huge(S, campaign_module.SUMMARY_CAP), "summaryAgrees", "campaign.json: larger than a study could write"),
        (_not_utf8(J), "journalWellFormed", "line 1: not JSON in UTF-8"),
        (_not_utf8(S), "summaryAgrees", "campaign.json: not JSON in UTF-8"),
        (_repeated_key(J), "journalWellFormed", "line 3: an object repeats a key"),
        (_repeated_key(S), "summaryAgrees", "campaign.json: an object repeats a key"),
    ],
    ids=lambda x: x.__name__ if callable(x) else None,
)
def test_the_journal_and_campaign_json_are_read_as_hostile_evidence(
    base: Path, tmp_path: Path, change: Callable[[Path], None], check: str, said: str
) -> None:
    camp = copy_of(base, tmp_path)
    change(camp)
    r = Reported(camp)
    assert r.code == 1 and r.mark(check) == "✗", r.out
    assert r.detail(check).startswith(said), r.detail(check)
    assert MARKER not in r.out
    assert r.seconds < 60, r.seconds


def test_a_journal_of_100000_lines_is_read_to_its_bound_in_bounded_time(base: Path, tmp_path: Path) -> None:
    camp = copy_of(base, tmp_path)
    values = lines(camp)
    planned, done = (next(v for v in values if v["n"] == 2 and v["state"] == s) for s in ("planned", "done"))
    more = [
        {**line, "n": n, "id": f"ex-{n}", "out": f"trials/{n}"} for n in range(3, 50_001) for line in (planned, done)
    ]
    write_lines(camp, [*values, *more])
    assert len(lines(camp)) == 100_000
    r = Reported(camp)
    assert r.code == 1 and r.mark("journalWellFormed") == "✗", r.out
    assert r.detail("journalWellFormed").startswith(
        f"trials.jsonl: more than {TRIALS_LIMIT} trials (line {2 * TRIALS_LIMIT + 1}): reading stopped"
    )
    # The trials read whose folders are missing: one ✗ listing the first few and their count, not a row each.
    assert re.search(r"\(and 9995 more disagreements\)$", r.detail("journalAgrees")), r.detail("journalAgrees")
    assert len(r.out) < 20_000 and r.seconds < 60, (len(r.out), r.seconds)


# --- nothing printed raw ----------------------------------------------------------------------------------

# Every string field of a journal line, and of campaign.json (its plan, its trials, its matrix): where the
# hostile text goes, by a path (a key, [i] an element, {} a key of an object holding it).
JOURNAL_STRINGS = [
    "id",
    "points[0]",
    "cls",
    "class",
    "state",
    "failed[0]",
    "unknown[0]",
    "checks{}",
    "worker",
    "host",
    "detail",
    "out",
]
SUMMARY_PLAN_STRINGS = [
    "study",
    "token",
    "template.command[0]",
    "template{}",
    "trace",
    "points[0].point",
    "points[0].class",
    "classes[0].name",
    "classes[0].candidates[0]",
    "options{}",
    "matrix.rows{}",
    "matrix.checks[0]",
    "matrix.firstFailing{}",
    "points[0].left{}",
    "timing{}",
]
SUMMARY_STRINGS = SUMMARY_PLAN_STRINGS + [f"trials[1].{path}" for path in JOURNAL_STRINGS]
# What campaign.json holds that the report builds again from the folders: a difference there is written over.
DERIVED = ("matrix", "trials[1].failed", "trials[1].unknown", "trials[1].checks")


def _put(value: Any, path: str, text: str) -> None:
    """``text`` at ``path`` in ``value``: a field, an element (``[i]``), or a new key (``{}``)."""
    steps = re.findall(r"\.?([A-Za-z]+)|\[(\d+)\]|(\{\})", path)
    for i, (key, index, new_key) in enumerate(steps):
        last = i == len(steps) - 1
        if new_key:
            value[text] = True  # a key of checks (true, false or null), of the template, of options, ...
        elif key and last:
            value[key] = text
        elif key:
            value = value[key]
        elif last and int(index) == len(value):
            value.append(text)
        elif last:
            value[int(index)] = text
        else:
            value = value[int(index)]


def _assert_quoted(out: str) -> None:
    """No escape sequence, bell or bidirectional override reached the output, and no markup was read as such."""
    assert "\x1b" not in out and "\x07" not in out and "\u202e" not in out, repr(out[-2000:])
    assert "MARKUP" not in out or "[bold]MARKUP[/bold]" in out, out[-2000:]
    assert "x.invalid" not in out or "[link=https://x.invalid]" in out, out[-2000:]


@pytest.mark.parametrize("where", [f"journal:{p}" for p in JOURNAL_STRINGS] + [f"summary:{p}" for p in SUMMARY_STRINGS])
def test_escape_sequences_and_markup_in_any_string_field_are_never_printed_raw(
    base: Path, tmp_path: Path, where: str
) -> None:
    camp = copy_of(base, tmp_path)
    which, path = where.split(":")
    if which == "journal":
        # Trial 2, lost: the journal's detail of a trial not run again is quoted in trialsRan.
        values = lines(camp)
        ended = next(v for v in values if v["n"] == 2 and v["state"] == "done")
        ended.update(state="lost", detail="its worker was lost")
        _put(ended, path, HOSTILE)
        write_lines(camp, values)
    else:
        body = summary(camp)
        _put(body, path, HOSTILE)
        write_summary(camp, body)
    # campaign.json's matrix is built from its trials: one that is not is written again from the folders.
    derived = which == "summary" and path.startswith(DERIVED)
    r = Reported(camp, written=derived)
    _assert_quoted(r.out)
    if derived:
        assert r.code == 0 and MARKER not in (camp / "campaign.json").read_text(), r.out
        assert re.search(r"campaign\.json written again with (the matrix|trial 2's verdict) as judged now", r.out)
        assert summary(camp)["matrix"] == matrix({t["n"]: Trial.from_json(t) for t in summary(camp)["trials"]})
    else:
        assert r.code in (1, 3), r.out
    if where == "journal:detail":  # a lost trial's detail is said, quoted
        assert "was lost: ?[31mRED?[0m?]0;title?[bold]MARKUP[/bold]" in r.detail("trialsRan"), r.detail("trialsRan")


def test_hostile_text_in_a_trial_folder_s_arms_is_quoted(base: Path, tmp_path: Path) -> None:
    camp = copy_of(base, tmp_path)
    _missed_in_folder(camp)
    path = camp / "trials" / "2" / "arms.jsonl"
    arms = jsonl(path)
    arms[-1]["detail"] = HOSTILE
    path.write_text("".join(json.dumps(line) + "\n" for line in arms))
    r = Reported(camp)
    _assert_quoted(r.out)
    assert r.code == 1 and "its folder missed after:stageOpen: ?[31mRED" in r.detail("journalAgrees")


# --- campaign.json: held to the journal, written again only with the verdicts judged now --------------------


def test_campaign_json_that_is_not_the_journal_s_is_a_cross_and_is_left_as_it_is(base: Path, tmp_path: Path) -> None:
    camp = copy_of(base, tmp_path)
    body = summary(camp)
    body["trials"][1]["worker"] = "tcp://10.0.0.9:1"
    write_summary(camp, body)
    r = Reported(camp)
    assert r.code == 1 and r.failing() == {("campaign", "summaryAgrees"): "✗"}, r.out
    assert r.detail("summaryAgrees") == "campaign.json's trial 2 is not the journal's last line for it"


def test_a_class_that_is_not_its_point_s_in_the_plan_is_a_cross(base: Path, tmp_path: Path) -> None:
    camp = copy_of(base, tmp_path)
    edit_trial(camp, 2, cls="after:charge · charged diagnosis", **{"class": "after:charge · charged diagnosis"})
    r = Reported(camp)
    assert r.code == 1 and r.failing() == {("campaign", "summaryAgrees"): "✗"}, r.out
    assert r.detail("summaryAgrees") == "trial 2's class is not its point's in campaign.json's plan"


def test_a_folder_judged_again_rewrites_only_the_verdicts_of_campaign_json(base: Path, tmp_path: Path) -> None:
    """A trial's folder changed after it ran (a record appended to its ledger): the report judges it ✗ from the
    folder, not from the journal's ✓; campaign.json, the journal's in every other fact, is written again with
    that verdict and the matrix built from it (and nothing else of it changes); the journal is left as it is;
    a second report finds campaign.json the folders' and writes nothing."""
    camp = copy_of(base, tmp_path)
    with (camp / "trials" / "2" / "study" / "ledger.jsonl").open("a") as f:
        f.write('{"seq": 1, "at": "2026-01-01T00:00:00.000Z", "kind": "halt", "content": {}}\n')
    journal = (camp / "trials.jsonl").read_bytes()
    before = summary(camp)
    r = Reported(camp, written=True)
    assert r.code == 1 and r.failing() == {("trial 2", "trialHolds"): "✗"}, r.out
    assert "study · ledgerWellFormed" in r.detail("trialHolds", "trial 2")
    assert r.detail("trialHolds", "trial 2").endswith("; it was ✓ when it ran (the journal)")
    assert "campaign.json written again with trial 2's verdict as judged now from the trial folders" in r.out
    after = summary(camp)
    assert (camp / "trials.jsonl").read_bytes() == journal
    changed = after["trials"][1]
    assert changed["ok"] is False and "study · ledgerWellFormed" in changed["failed"], changed
    assert {k: v for k, v in changed.items() if k not in ("ok", "failed", "unknown", "checks")} == {
        k: v for k, v in before["trials"][1].items() if k not in ("ok", "failed", "unknown", "checks")
    }
    assert after["trials"][0] == before["trials"][0]
    assert {k: v for k, v in after.items() if k not in ("trials", "matrix")} == {
        k: v for k, v in before.items() if k not in ("trials", "matrix")
    }
    assert after["matrix"]["rows"]["after:stageOpen · nothing unfinished"]["ledgerWellFormed"] == "✗"
    assert not [p.name for p in camp.iterdir() if p.name.endswith(".tmp")]
    again = Reported(camp)  # writes nothing: campaign.json is the folders' now
    assert again.code == 1 and again.detail("summaryAgrees").startswith("campaign.json is the journal's, its verdicts")


def test_campaign_json_is_not_written_again_when_another_fact_disagrees(base: Path, tmp_path: Path) -> None:
    camp = copy_of(base, tmp_path)
    with (camp / "trials" / "2" / "study" / "ledger.jsonl").open("a") as f:
        f.write('{"seq": 1, "at": "2026-01-01T00:00:00.000Z", "kind": "halt", "content": {}}\n')
    _stranger(camp)
    r = Reported(camp)  # nothing written
    assert r.code == 1 and r.mark("summaryAgrees") == "✗" and r.mark("journalAgrees") == "✗", r.out
    assert r.detail("summaryAgrees") == (
        "campaign.json: trial 2's verdict is not the folders' as judged now (not every other fact of the campaign "
        "holds: not written again)"
    )


# --- the bounds ----------------------------------------------------------------------------------------------


def test_trial_folders_past_what_one_report_reads_are_left_unknown(base: Path, tmp_path: Path) -> None:
    """Trial 1's ledger as large as its cap: with it the trial folders would hold more than a report reads, so
    neither it nor the trial after it is examined (each can be judged alone), and the campaign is unknown."""
    camp = copy_of(base, tmp_path)
    ledger = camp / "trials" / "1" / "study" / "ledger.jsonl"
    with ledger.open("ab") as fh:
        fh.write(b"0\n" * ((campaign_module.TRIALS_BUDGET - ledger.stat().st_size) // 2))
    r = Reported(camp)
    assert r.code == 3 and r.failing() == {("campaign", "trialsJudged"): "?"}, r.out
    assert r.detail("trialsJudged").startswith(
        "trials/1 and 1 trial folder after it not examined: with it the folders would hold more than 32.0 MiB"
    )
    assert not any(scope.startswith("trial ") for scope, _ in r.marks)
    assert r.seconds < 60
