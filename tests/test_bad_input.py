"""The bad-input corpus: every case is refused in one line on stderr, exit status 2, and the disk is left as it was.

Each case builds a small scene in a fresh folder (evidence folders, templates,
files in the way), snapshots the whole tree (names, types, modes, sizes,
mtimes, contents), runs the real ``studymon`` command in it, and compares.
The evidence folders that ``report`` is given are the exception: those are
judged, not refused (✗ or unfinished, exit 1 or 3), and ``report`` writes
nothing either.  What ``report`` makes of each kind of broken evidence is
``tests/test_corpus.py``'s; here it is the command line around it.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterator

import pytest

from studymon.engine.contract.spec import MAX_TEMPLATE_BYTES
from studymon.engine.launch.prepare import MAX_STUDIES

ROOT = Path(__file__).resolve().parent.parent
GOOD = {"command": [sys.executable, str(ROOT / "tests" / "doubles" / "tiny_study.py")], "backend": "process"}


def studymon(*args: str, cwd: Path, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    # No Docker engine is asked: a case is refused before the backend is resolved, or names "process".
    env = dict(os.environ, PYTHONPATH=str(ROOT), COLUMNS="200", DOCKER_HOST=f"unix://{cwd}/no-engine.sock")
    return subprocess.run([sys.executable, "-m", "studymon.tui.cli", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=timeout)


def snapshot(root: Path) -> dict[str, tuple]:
    """Everything about the tree under ``root`` that a write could change; symlinks and FIFOs are not followed or read."""
    seen: dict[str, tuple] = {}
    for folder, dirs, files in os.walk(root):
        for name in dirs + files:
            path = Path(folder) / name
            st = os.lstat(path)
            content = ""
            if path.is_symlink():
                content = os.readlink(path)
            elif os.path.isfile(path) and st.st_size <= 4 * 1024 * 1024:
                content = hashlib.sha256(path.read_bytes()).hexdigest()
            seen[str(path.relative_to(root))] = (st.st_mode, st.st_size, st.st_mtime_ns, content)
    st = os.lstat(root)
    seen["."] = (st.st_mode, st.st_mtime_ns)
    return seen


# --- scenes -------------------------------------------------------------------------------------


def write_template(tmp: Path, name: str = "t.json", **overrides: object) -> str:
    data = dict(GOOD, **overrides)
    (tmp / name).write_text(json.dumps(data))
    return name


def evidence(tmp: Path, name: str, study: str | None = None, *, launches: bool = True,
             finished: bool = False, **research: object) -> Path:
    """A study's OUT as the console leaves it after a crash (unfinished) or at its end."""
    out = tmp / name
    (out / "study").mkdir(parents=True)
    data = dict(GOOD, study=study or name, containerPrefix="inforsi", **research)
    (out / "research.json").write_text(json.dumps(data))
    (out / "study" / "ledger.jsonl").write_text('{"seq": 1, "at": "2026-11-30T05:00:00.000Z", "kind": "studyOpen", '
                                                '"content": {"study": "x", "budget": 0, "config": {}}}\n')
    if launches:
        (out / "launches.jsonl").write_text('{"event": "start", "pid": 999999, "at": "2026-11-30T05:00:00.000Z", '
                                            '"resume": false, "startTime": 1.0}\n'
                                            '{"event": "end", "pid": 999999, "at": "2026-11-30T05:00:01.000Z", '
                                            '"code": 1, "signal": null}\n')
    (out / "timeline.jsonl").write_text('{"seq": 1, "kind": "studyOpen"}\n')
    if finished:
        (out / "outcome.json").write_text('{"code": 0, "signal": null}\n')
        (out / "report.json").write_text('{"ok": true, "checks": []}\n')
    return out


@contextlib.contextmanager
def read_only(folder: Path) -> Iterator[None]:
    """``folder`` on a read-only mount (root: a bind mount, so root is refused too), else without write bits."""
    if os.geteuid() == 0:
        subprocess.run(["mount", "--bind", str(folder), str(folder)], check=True)
        try:
            subprocess.run(["mount", "-o", "remount,ro,bind", str(folder)], check=True)
            yield
        finally:
            subprocess.run(["umount", str(folder)], check=True)
    else:
        modes = {p: p.stat().st_mode for p in [folder, *folder.rglob("*")]}
        for p in modes:
            p.chmod(modes[p] & ~0o222)
        try:
            yield
        finally:
            for p, mode in modes.items():
                p.chmod(mode)


@dataclass
class Case:
    """A scene, the command run in it, and the words its one-line refusal must hold."""

    name: str
    build: Callable[[Path], list[str]]
    words: tuple[str, ...]
    read_only: str | None = None  # a folder of the scene that is read-only while the command runs
    tags: list[str] = field(default_factory=list)


CASES: list[Case] = []


def case(name: str, *words: str, read_only: str | None = None) -> Callable[[Callable[[Path], list[str]]], None]:
    def add(build: Callable[[Path], list[str]]) -> None:
        CASES.append(Case(name, build, words, read_only))
    return add


def run_args(tmp: Path, *pairs: str, **template: object) -> list[str]:
    return ["run", "--headless", "--template", write_template(tmp, **template), *pairs]


# --- ids ------------------------------------------------------------------------------------------

for _name, _id in [("id-trailing-newline", "a\n"), ("id-leading-newline", "\na"), ("id-upper", "Alpha"),
                   ("id-leading-dot", ".a"), ("id-64-chars", "a" * 64), ("id-non-ascii", "é"),
                   ("id-slash", "a/b"), ("id-empty", ""), ("id-tab", "a\tb")]:
    case(_name, "bad study id")(lambda tmp, _id=_id: run_args(tmp, f"{_id}=out"))


@case("pair-without-equals", "expected ID=OUT")
def _(tmp: Path) -> list[str]:
    return run_args(tmp, "alpha")


@case("pair-with-empty-out", "OUT is empty")
def _(tmp: Path) -> list[str]:
    return run_args(tmp, "alpha=")


@case("id-given-twice", "'a'", "twice")
def _(tmp: Path) -> list[str]:
    return run_args(tmp, "a=x", "a=y")


@case("too-many-studies", f"at most {MAX_STUDIES}", "split")
def _(tmp: Path) -> list[str]:
    return run_args(tmp, *(f"s{i}=s{i}" for i in range(MAX_STUDIES + 1)))


# --- OUT shapes ---------------------------------------------------------------------------------


# --- explore ----------------------------------------------------------------------------------


@case("explore-campaign-exists", "exists", "pick a new CAMPAIGN")
def _(tmp: Path) -> list[str]:
    (tmp / "c").mkdir()
    (tmp / "c" / "notes").write_text("keep")
    return ["explore", "--headless", "--template", write_template(tmp), "x=c"]


@case("explore-campaign-parent-missing", "does not exist", "create it first")
def _(tmp: Path) -> list[str]:
    return ["explore", "--headless", "--template", write_template(tmp), "x=nowhere/c"]


@case("explore-bad-id", "study id")
def _(tmp: Path) -> list[str]:
    return ["explore", "--headless", "--template", write_template(tmp), "Alpha=c"]


@case("explore-resume-not-a-campaign", "not a campaign folder", "campaign.json")
def _(tmp: Path) -> list[str]:
    (tmp / "c").mkdir()
    return ["explore", "--headless", "--resume", "c"]


@case("explore-resume-with-template", "--template is for a new campaign")
def _(tmp: Path) -> list[str]:
    return ["explore", "--headless", "--resume", "--template", write_template(tmp), "c"]


@case("explore-program-missing", "the controller pr", "give an absolute path")
def _(tmp: Path) -> list[str]:
    return ["explore", "--headless", "--template", write_template(tmp, command=["./no-such-study"]), "x=c"]


@case("out-exists", "exists", "pick a new OUT")
def _(tmp: Path) -> list[str]:
    (tmp / "a").mkdir()
    (tmp / "a" / "notes").write_text("keep")
    return run_args(tmp, "a=a")


@case("out-is-a-file", "exists")
def _(tmp: Path) -> list[str]:
    (tmp / "a").write_text("a file")
    return run_args(tmp, "a=a")


@case("out-is-a-dangling-symlink", "exists")
def _(tmp: Path) -> list[str]:
    os.symlink(tmp / "nowhere", tmp / "a")
    return run_args(tmp, "a=a")


@case("out-parent-missing", "does not exist", "create it first")
def _(tmp: Path) -> list[str]:
    return run_args(tmp, "a=no/such/a")


@case("out-parent-is-a-file", "is not a folder")
def _(tmp: Path) -> list[str]:
    (tmp / "f").write_text("")
    return run_args(tmp, "a=f/a")


@case("out-with-a-newline", "control character")
def _(tmp: Path) -> list[str]:
    return run_args(tmp, "a=x\ny")


@case("out-name-too-long", "longer than a file name may be")
def _(tmp: Path) -> list[str]:
    return run_args(tmp, "a=" + "x" * 300)


@case("outs-overlap", "overlap")
def _(tmp: Path) -> list[str]:
    return run_args(tmp, "a=x", "b=x/y")


@case("out-inside-an-evidence-folder", "inside", "evidence folder of another study")
def _(tmp: Path) -> list[str]:
    evidence(tmp, "ev")
    return run_args(tmp, "b=ev/b")


@case("out-deep-inside-a-study-folder", "inside", "ev")
def _(tmp: Path) -> list[str]:
    evidence(tmp, "ev")
    (tmp / "ev" / "study" / "x").mkdir()
    return run_args(tmp, "b=ev/study/x/b")


@case("out-inside-a-just-made-out", "inside", "new")
def _(tmp: Path) -> list[str]:
    # Right after its start an OUT holds only its research.json, naming the study.
    (tmp / "new").mkdir()
    (tmp / "new" / "research.json").write_text(json.dumps(dict(GOOD, study="new", backend="process")))
    return run_args(tmp, "b=new/b")


@case("out-inside-an-evidence-folder-through-a-symlink", "inside", "ev")
def _(tmp: Path) -> list[str]:
    evidence(tmp, "ev")
    os.symlink(tmp / "ev" / "study", tmp / "link")
    return run_args(tmp, "b=link/b")


@case("out-in-a-read-only-folder", "not writable", read_only="ro")
def _(tmp: Path) -> list[str]:
    (tmp / "ro").mkdir()
    return run_args(tmp, "a=ro/a")


# --- templates ------------------------------------------------------------------------------------


@case("template-missing", "does not exist")
def _(tmp: Path) -> list[str]:
    return ["run", "--headless", "--template", "nope.json", "a=a"]


@case("template-is-a-folder", "is a folder")
def _(tmp: Path) -> list[str]:
    (tmp / "t").mkdir()
    return ["run", "--headless", "--template", "t", "a=a"]


@case("template-is-a-fifo", "not a regular file")
def _(tmp: Path) -> list[str]:
    os.mkfifo(tmp / "t.json")  # reading it would wait for a writer forever
    return ["run", "--headless", "--template", "t.json", "a=a"]


@case("template-is-a-device", "not a regular file")
def _(tmp: Path) -> list[str]:
    return ["run", "--headless", "--template", "/dev/zero", "a=a"]


@case("template-too-big", f"at most {MAX_TEMPLATE_BYTES:,}", "1 MiB")
def _(tmp: Path) -> list[str]:
    with open(tmp / "t.json", "wb") as fh:
        fh.truncate(50 * 1024 * 1024)  # sparse: refused by its size, never read
    return ["run", "--headless", "--template", "t.json", "a=a"]


@case("template-not-utf8", "not UTF-8")
def _(tmp: Path) -> list[str]:
    (tmp / "t.json").write_bytes(b'{"command": ["\xff"]}')
    return ["run", "--headless", "--template", "t.json", "a=a"]


@case("template-nested-too-deep", "nested too deeply")
def _(tmp: Path) -> list[str]:
    (tmp / "t.json").write_text("[" * 200_000 + "]" * 200_000)
    return ["run", "--headless", "--template", "t.json", "a=a"]


@case("template-not-an-object", "must be a JSON object")
def _(tmp: Path) -> list[str]:
    (tmp / "t.json").write_text("[1, 2]")
    return ["run", "--headless", "--template", "t.json", "a=a"]


@case("template-command-empty", '"command" must be a non-empty list of strings')
def _(tmp: Path) -> list[str]:
    return run_args(tmp, "a=a", command=[])


@case("template-command-with-nul", "NUL")
def _(tmp: Path) -> list[str]:
    return run_args(tmp, "a=a", command=[sys.executable, "x\0y"])


@case("program-missing", "/no/such/study", "does not exist")
def _(tmp: Path) -> list[str]:
    return run_args(tmp, "a=a", command=["/no/such/study"])


@case("program-not-on-path", "no-such-study-program", "not on PATH")
def _(tmp: Path) -> list[str]:
    return run_args(tmp, "a=a", command=["no-such-study-program"])


@case("program-not-executable", "not executable", "chmod +x")
def _(tmp: Path) -> list[str]:
    (tmp / "study.sh").write_text("#!/bin/sh\nexit 0\n")
    return run_args(tmp, "a=a", command=[str(tmp / "study.sh")])


@case("program-is-a-folder", "is a folder")
def _(tmp: Path) -> list[str]:
    (tmp / "bin").mkdir()
    return run_args(tmp, "a=a", command=[str(tmp / "bin")])


@case("program-relative-to-a-new-out", "relative path", "absolute path")
def _(tmp: Path) -> list[str]:
    (tmp / "study.sh").write_text("#!/bin/sh\nexit 0\n")
    (tmp / "study.sh").chmod(0o755)
    return run_args(tmp, "a=a", command=["./study.sh"])


@case("python-script-missing", "nope.py", "does not exist")
def _(tmp: Path) -> list[str]:
    return run_args(tmp, "a=a", command=["python3", str(tmp / "nope.py")])


@case("container-prefix-with-newline", '"containerPrefix"')
def _(tmp: Path) -> list[str]:
    return run_args(tmp, "a=a", containerPrefix="inforsi\n")


@case("backend-unknown", '"backend"', "podman")
def _(tmp: Path) -> list[str]:
    return run_args(tmp, "a=a", backend="podman")


@case("backend-docker-without-engine", "no Docker engine answers")
def _(tmp: Path) -> list[str]:
    return run_args(tmp, "a=a", backend="docker")


# --- argument combinations ------------------------------------------------------------------------


@case("resume-with-a-template", "--template is for a fresh start")
def _(tmp: Path) -> list[str]:
    evidence(tmp, "a")
    return ["run", "--resume", "--headless", "--template", write_template(tmp), "a=a"]


@case("armed-id-not-in-the-command", "zeta", "no study with that id")
def _(tmp: Path) -> list[str]:
    return ["run", "--headless", "--template", write_template(tmp), "--kill-after-first-diagnosis-start", "zeta", "a=a"]


@case("run-without-studies", "ID=OUT")
def _(tmp: Path) -> list[str]:
    return ["run", "--headless"]


@case("unknown-option", "unrecognized arguments")
def _(tmp: Path) -> list[str]:
    return ["run", "--headless", "--frobnicate", "a=a"]


@case("demo-into-an-existing-folder", "exists", "--out")
def _(tmp: Path) -> list[str]:
    (tmp / "d").mkdir()
    return ["demo", "--headless", "--backend", "process", "--out", "d"]


@case("demo-with-an-unknown-backend", "invalid choice")
def _(tmp: Path) -> list[str]:
    return ["demo", "--headless", "--backend", "podman", "--out", "d"]


# --- resume and attach ---------------------------------------------------------------------------


@case("resume-of-a-vanished-out", "does not exist", "moved or deleted")
def _(tmp: Path) -> list[str]:
    return ["run", "--resume", "--headless", "a=gone"]


@case("resume-of-a-read-only-out", "read-only", "--resume", read_only="a")
def _(tmp: Path) -> list[str]:
    evidence(tmp, "a")
    return ["run", "--resume", "--headless", "a=a"]


@case("resume-under-another-id", "holds study 'a'", "not 'b'")
def _(tmp: Path) -> list[str]:
    evidence(tmp, "a")
    return ["run", "--resume", "--headless", "b=a"]


@case("resume-of-a-finished-study", "has finished", "studymon report")
def _(tmp: Path) -> list[str]:
    evidence(tmp, "a", finished=True)
    return ["run", "--resume", "--headless", "a=a"]


@case("resume-with-the-controller-gone", "/no/such/study", "does not exist")
def _(tmp: Path) -> list[str]:
    evidence(tmp, "a", command=["/no/such/study"])
    return ["run", "--resume", "--headless", "a=a"]


@case("resume-with-research-json-not-json", "not valid JSON")
def _(tmp: Path) -> list[str]:
    evidence(tmp, "a")
    (tmp / "a" / "research.json").write_text("{")
    return ["run", "--resume", "--headless", "a=a"]


@case("resume-of-a-file", "no research.json")
def _(tmp: Path) -> list[str]:
    (tmp / "a").write_text("")
    return ["run", "--resume", "--headless", "a=a"]


@case("attach-to-a-vanished-out", "does not exist", "moved or deleted")
def _(tmp: Path) -> list[str]:
    return ["attach", "--headless", "gone"]


@case("attach-to-a-read-only-out", "read-only", "attach", read_only="a")
def _(tmp: Path) -> list[str]:
    evidence(tmp, "a")
    return ["attach", "--headless", "a"]


@case("attach-to-a-read-only-ledger-folder", "study", "read-only", read_only="a/study")
def _(tmp: Path) -> list[str]:
    evidence(tmp, "a")
    return ["attach", "--headless", "a"]


@case("attach-to-a-folder-that-is-not-evidence", "not a studymon evidence folder")
def _(tmp: Path) -> list[str]:
    (tmp / "a").mkdir()
    return ["attach", "--headless", "a"]


@case("attach-to-a-finished-study", "has finished")
def _(tmp: Path) -> list[str]:
    evidence(tmp, "a", finished=True)
    return ["attach", "--headless", "a"]


@case("attach-to-research-json-without-an-id", "no valid study id")
def _(tmp: Path) -> list[str]:
    evidence(tmp, "a", study="Not An Id")
    return ["attach", "--headless", "a"]


@case("attach-to-too-many", f"at most {MAX_STUDIES}", "split")
def _(tmp: Path) -> list[str]:
    return ["attach", "--headless", *(f"s{i}" for i in range(MAX_STUDIES + 1))]


# --- report ---------------------------------------------------------------------------------------


@case("report-of-a-missing-folder", "is not a folder")
def _(tmp: Path) -> list[str]:
    return ["report", "gone"]


@case("report-of-a-file", "is not a folder")
def _(tmp: Path) -> list[str]:
    (tmp / "a").write_text("")
    return ["report", "a"]


@case("report-of-a-folder-that-is-not-evidence", "not a studymon evidence folder")
def _(tmp: Path) -> list[str]:
    (tmp / "a").mkdir()
    (tmp / "a" / "research.json").write_text("{}")
    return ["report", "a"]


def test_the_corpus_is_large_and_names_are_unique() -> None:
    assert len(CASES) >= 30
    assert len({c.name for c in CASES}) == len(CASES)


@pytest.mark.parametrize("c", CASES, ids=[c.name for c in CASES])
def test_refused_in_one_line_with_nothing_changed(tmp_path: Path, c: Case) -> None:
    args = c.build(tmp_path)
    with read_only(tmp_path / c.read_only) if c.read_only else contextlib.nullcontext():
        before = snapshot(tmp_path)
        proc = studymon(*args, cwd=tmp_path)
        after = snapshot(tmp_path)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "Traceback" not in proc.stderr
    lines = proc.stderr.splitlines()
    assert len(lines) == 1 and lines[0].strip(), proc.stderr
    for word in c.words:
        assert word in lines[0], (word, lines[0])
    assert proc.stdout == "", proc.stdout
    assert after == before, {k: (before.get(k), after.get(k)) for k in set(before) | set(after)
                             if before.get(k) != after.get(k)}


# --- report on broken evidence: judged (exit 1 or 3), never refused, never written to --------------
# Each case breaks one file of a sound evidence folder (tests/corpus.py's, judged ✓ with exit 0 first),
# and names a check that must then fail.

BROKEN_EVIDENCE: dict[str, tuple[Callable[[Path], object], tuple[str, str]]] = {
    "research-json-not-json": (lambda out: (out / "research.json").write_text("{"), ("study", "contractKept")),
    "research-json-a-list": (lambda out: (out / "research.json").write_text("[]"), ("study", "contractKept")),
    "launches-a-folder": (lambda out: ((out / "launches.jsonl").unlink(), (out / "launches.jsonl").mkdir()),
                          ("study", "exitedCleanly")),
    "ledger-missing": (lambda out: (out / "study" / "ledger.jsonl").unlink(), ("study", "ledgerWellFormed")),
    "ledger-a-fifo": (lambda out: ((out / "study" / "ledger.jsonl").unlink(), os.mkfifo(out / "study" / "ledger.jsonl")),
                      ("study", "ledgerWellFormed")),
    "kill-json-not-json": (lambda out: (out / "kills" / "1" / "kill.json").write_text("{"), ("kill 1", "killEvidence")),
    "live-events-a-fifo": (lambda out: ((out / "kills" / "1" / "container-events-live.jsonl").unlink(),
                                        os.mkfifo(out / "kills" / "1" / "container-events-live.jsonl")),
                           ("kill 1 · d1", "sameContainerNoRerun")),
}


def sound_evidence(tmp: Path) -> Path:
    from tests.corpus import derive, sound, write

    return write(derive(sound()), tmp / "a")


def test_the_base_of_the_broken_evidence_is_sound(tmp_path: Path) -> None:
    sound_evidence(tmp_path)
    for extra in ((), ("--json",)):
        proc = studymon("report", *extra, "a", cwd=tmp_path)
        assert proc.returncode == 0, proc.stdout + proc.stderr
    [report] = json.loads(proc.stdout)
    assert report["ok"] is True and all(c["ok"] is True for c in report["checks"]), report


@pytest.mark.parametrize("name", sorted(BROKEN_EVIDENCE))
@pytest.mark.parametrize("extra", [(), ("--json",)], ids=["table", "json"])
def test_report_judges_broken_evidence_and_writes_nothing(tmp_path: Path, name: str, extra: tuple[str, ...]) -> None:
    out = sound_evidence(tmp_path)
    breaks, (scope, check) = BROKEN_EVIDENCE[name]
    breaks(out)
    before = snapshot(tmp_path)
    proc = studymon("report", *extra, "a", cwd=tmp_path)
    # A check failed: 1, whether or not the study finished (a ✗ beats every ?, §6.6).
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert proc.stderr == "" and "Traceback" not in proc.stdout
    if extra:
        [report] = json.loads(proc.stdout)
        assert report["ok"] is not True
        verdicts = {(c["scope"], c["name"]): c["ok"] for c in report["checks"]}
        assert verdicts[(scope, check)] is False, verdicts
    else:
        assert re.search(rf"{re.escape(scope)}\s*│ {check}\s*│ ✗", proc.stdout), proc.stdout
    assert snapshot(tmp_path) == before


def test_a_failed_check_in_a_study_that_has_not_finished_is_exit_1_not_3(tmp_path: Path) -> None:
    """§6.6: a ✗ beats a ?; a study whose controller has not ended has a ? ("finished") beside its ✗."""
    out = sound_evidence(tmp_path)
    launches = (out / "launches.jsonl").read_text().splitlines(keepends=True)
    assert json.loads(launches[-1])["event"] == "end"
    (out / "launches.jsonl").write_text("".join(launches[:-1]))  # the last controller has not ended
    (out / "outcome.json").unlink()  # and the console has not written the study's end
    (out / "kills" / "1" / "kill.json").write_text("{")
    proc = studymon("report", "a", cwd=tmp_path)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert re.search(r"kill 1\s*│ killEvidence\s*│ ✗", proc.stdout), proc.stdout
    assert re.search(r"│ finished\s*│ \?", proc.stdout), proc.stdout


def test_report_of_good_and_bad_folders_refuses_the_whole_command(tmp_path: Path) -> None:
    """One OUT that is not a folder refuses the command, even after a good one: no half table."""
    evidence(tmp_path, "a")
    before = snapshot(tmp_path)
    proc = studymon("report", "a", "gone", cwd=tmp_path)
    assert proc.returncode == 2 and proc.stdout == "" and len(proc.stderr.splitlines()) == 1, proc.stdout + proc.stderr
    assert snapshot(tmp_path) == before
