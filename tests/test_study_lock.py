"""One study per id: the study's lock, held by the console and its keepers, refused to a second study."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from studymon.engine.contract.spec import BadInput, StudySpec
from studymon.engine.io.clock import parse_rfc3339
from studymon.engine.launch import lock as studylock
from studymon.engine.launch.lock import LockFolderUnsafe, StudyInUse, claim, claim_for_command, holder_of
from tests.waits import until, until_async

IDENT = "process:/tmp/test-runtime"

HOLD = """
import sys, time
sys.path.insert(0, sys.argv[1])
from pathlib import Path
from studymon.engine.launch.lock import claim
lock = claim("alpha", Path(sys.argv[2]), sys.argv[3], "inforsi")
print("held", flush=True)
time.sleep(60)  # stands in for a study's own work, the lock held meanwhile
"""


def _holder_process(tmp_path: Path, out: Path) -> subprocess.Popen[str]:
    root = str(Path(__file__).resolve().parent.parent)
    proc = subprocess.Popen([sys.executable, "-c", HOLD, root, str(out), IDENT], stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None and proc.stdout.readline().strip() == "held"
    return proc


def test_a_second_claim_of_the_same_id_is_refused_and_names_the_holder(tmp_path: Path) -> None:
    first = claim("alpha", tmp_path / "one", IDENT, "inforsi")
    with pytest.raises(StudyInUse) as caught:
        claim("alpha", tmp_path / "two", IDENT, "inforsi")
    assert caught.value.holder == (tmp_path / "one").resolve()
    assert holder_of("alpha", IDENT, "inforsi") == (tmp_path / "one").resolve()
    # Another id, another prefix or another runtime is another study.
    claim("beta", tmp_path / "three", IDENT, "inforsi").release()
    claim("alpha", tmp_path / "four", IDENT, "other").release()
    claim("alpha", tmp_path / "five", "docker:unix:///elsewhere.sock", "inforsi").release()
    first.release()
    assert holder_of("alpha", IDENT, "inforsi") is None
    claim("alpha", tmp_path / "two", IDENT, "inforsi").release()


def test_the_lock_is_held_across_processes_until_the_holder_ends(tmp_path: Path) -> None:
    proc = _holder_process(tmp_path, tmp_path / "one")
    try:
        with pytest.raises(StudyInUse) as caught:
            claim("alpha", tmp_path / "two", IDENT, "inforsi")
        assert caught.value.holder == (tmp_path / "one").resolve()
    finally:
        proc.kill()
        proc.wait()
    claim("alpha", tmp_path / "two", IDENT, "inforsi").release()


def test_a_relaunch_waits_for_its_own_keeper_but_not_for_another_study(tmp_path: Path) -> None:
    proc = _holder_process(tmp_path, tmp_path / "one")
    try:
        started = time.monotonic()
        with pytest.raises(StudyInUse):
            claim("alpha", tmp_path / "two", IDENT, "inforsi", wait_for_own=5.0)
        assert time.monotonic() - started < 1.0, "another study's lock is refused at once, not waited for"
        subprocess.Popen(["sh", "-c", f"sleep 0.5; kill {proc.pid}"])
        lock = claim("alpha", tmp_path / "one", IDENT, "inforsi", wait_for_own=5.0)
        assert lock.held
        lock.release()
    finally:
        proc.kill()
        proc.wait()


def test_an_inherited_descriptor_keeps_the_study_locked_after_the_console_lets_go(tmp_path: Path) -> None:
    lock = claim("alpha", tmp_path / "one", IDENT, "inforsi")
    keeper = subprocess.Popen(["sleep", "30"], pass_fds=(lock.fileno(),))
    try:
        lock.release()
        with pytest.raises(StudyInUse) as caught:
            claim("alpha", tmp_path / "two", IDENT, "inforsi")
        assert caught.value.holder == (tmp_path / "one").resolve()
    finally:
        keeper.kill()
        keeper.wait()
    claim("alpha", tmp_path / "two", IDENT, "inforsi").release()


def test_an_unsafe_lock_folder_or_file_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    shared = tmp_path / "shared"
    shared.mkdir(mode=0o777)
    shared.chmod(0o777)
    monkeypatch.setenv(studylock.LOCK_DIR_ENV, str(shared))
    with pytest.raises(LockFolderUnsafe, match="can be written by others"):
        claim("alpha", tmp_path / "one", IDENT, "inforsi")
    if os.getuid() == 0:
        foreign = tmp_path / "foreign"
        foreign.mkdir(mode=0o700)
        os.chown(foreign, 65534, 65534)
        monkeypatch.setenv(studylock.LOCK_DIR_ENV, str(foreign))
        with pytest.raises(LockFolderUnsafe, match="belongs to uid 65534"):
            claim("alpha", tmp_path / "one", IDENT, "inforsi")
    mine = tmp_path / "mine"
    mine.mkdir(mode=0o700)
    monkeypatch.setenv(studylock.LOCK_DIR_ENV, str(mine))
    victim = tmp_path / "victim"
    victim.write_text("precious")
    (mine / studylock.lock_name(IDENT, "inforsi", "alpha")).symlink_to(victim)
    with pytest.raises(LockFolderUnsafe, match="symlink"):
        claim("alpha", tmp_path / "one", IDENT, "inforsi")
    assert victim.read_text() == "precious"


def test_a_command_claims_all_of_its_studies_or_none(tmp_path: Path) -> None:
    held = claim("beta", tmp_path / "elsewhere", "process:" + str(Path(os.environ["STUDYMON_PROCESS_RUNTIME"]).resolve()),
                 "inforsi")
    specs = [StudySpec("alpha", tmp_path / "a"), StudySpec("beta", tmp_path / "b")]
    with pytest.raises(BadInput, match=r"study id 'beta' is in use by the study in .*elsewhere.*studymon attach"):
        claim_for_command(specs, {"alpha": "inforsi", "beta": "inforsi"}, {"alpha": "process", "beta": "process"}, True)
    held.release()
    # alpha's lock was let go when beta's was refused.
    locks = claim_for_command(specs, {"alpha": "inforsi", "beta": "inforsi"}, {"alpha": "process", "beta": "process"}, True)
    assert sorted(locks) == ["alpha", "beta"]
    for lock in locks.values():
        lock.release()


def test_a_resume_of_a_study_whose_keeper_still_runs_is_sent_to_attach(tmp_path: Path) -> None:
    out = tmp_path / "a"
    ident = "process:" + str(Path(os.environ["STUDYMON_PROCESS_RUNTIME"]).resolve())
    held = claim("alpha", out, ident, "inforsi")
    try:
        with pytest.raises(BadInput, match=r"alpha is still running .*studymon attach"):
            claim_for_command([StudySpec("alpha", out)], {"alpha": "inforsi"}, {"alpha": "process"}, False)
    finally:
        held.release()


def test_a_fresh_study_is_refused_when_its_containers_already_run(tmp_path: Path) -> None:
    env = dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parent.parent))
    runtime = [sys.executable, "-m", "studymon", "runtime"]
    run = [*runtime, "run", "-d", "--name"]
    subprocess.run([*run, "inforsi-alpha-r1", "-", "sleep", "30"], env=env, check=True, capture_output=True)
    subprocess.run([*run, "inforsi-alpha-b-r1", "-l", "studymon.study=alpha-b", "-", "sleep", "30"],
                   env=env, check=True, capture_output=True)
    try:
        with pytest.raises(BadInput, match=r"'alpha' already has running containers .*inforsi-alpha-r1"):
            claim_for_command([StudySpec("alpha", tmp_path / "a")], {"alpha": "inforsi"}, {"alpha": "process"}, True)
        # Nothing stays locked after the refusal.
        claim("alpha", tmp_path / "a", "process:" + str(Path(os.environ["STUDYMON_PROCESS_RUNTIME"]).resolve()),
              "inforsi").release()
        # A container labelled for another study ("alpha-b" shares the stem) does not count.
        subprocess.run([*runtime, "rm", "-f", "inforsi-alpha-r1"], env=env, check=True, capture_output=True)
        locks = claim_for_command([StudySpec("alpha", tmp_path / "a")], {"alpha": "inforsi"}, {"alpha": "process"}, True)
        locks["alpha"].release()
    finally:
        for name in ("inforsi-alpha-r1", "inforsi-alpha-b-r1"):
            subprocess.run([*runtime, "rm", "-f", name], env=env, capture_output=True)


def test_the_study_stays_locked_through_its_kill_and_resume_and_is_free_at_its_end(tmp_path: Path) -> None:
    """Polled every few milliseconds from the first launch to the end: never free in between (kill, resume)."""
    import asyncio

    from studymon.engine.launch.prepare import create_fresh, plan_fresh
    from studymon.engine.live.supervisor import Supervisor
    from tests.studies import template

    t = template(tmp_path, backend="process", budget=20, diagnosisSeconds=1)
    specs, tpl, backend = plan_fresh([f"alpha={tmp_path / 'a'}"], t, ["alpha"], "process")
    create_fresh(specs, tpl, backend)
    ident = studylock.engine_identity("process")
    seen: list[Path | None] = []
    polled_at: list[float] = []

    async def scenario() -> list:
        sup = Supervisor(lambda event: None)
        session = sup.add(specs[0], resume=False, armed=True)
        task = asyncio.ensure_future(sup.run())
        await until_async(lambda: session.controller is not None or task.done(), 60, "the first launch", step=0.005)
        deadline = time.monotonic() + 240
        while not task.done():
            assert time.monotonic() < deadline, "the study did not end within 240 s"
            seen.append(await asyncio.to_thread(holder_of, "alpha", ident, "inforsi"))
            polled_at.append(time.time())  # when the answer was in hand
            await asyncio.wait([task], timeout=0.005)  # the next poll in 5 ms, or the study's end
        return await task

    results = asyncio.run(scenario())
    assert results[0].finished and (tmp_path / "a" / "kills" / "1" / "kill.json").exists()
    launches = [json.loads(x) for x in (tmp_path / "a" / "launches.jsonl").read_text().splitlines()]
    assert sum(1 for x in launches if x["event"] == "start") == 2, "killed and resumed once"
    assert len(seen) > 50
    # Held by this OUT until it is let go, then free for good; and let go only
    # once the last controller had ended (the polls after that may see it free,
    # as the session finishes on a busy machine).
    held = (tmp_path / "a").resolve()
    first_free = next((i for i, h in enumerate(seen) if h != held), len(seen))
    assert all(h == held for h in seen[:first_free]) and all(h is None for h in seen[first_free:]), \
        {str(h) for h in seen}
    last_end = max(parse_rfc3339(x["at"]) for x in launches if x["event"] == "end")
    assert first_free == len(seen) or polled_at[first_free] >= last_end, "free before the study ended"
    assert holder_of("alpha", ident, "inforsi") is None


def test_a_second_command_with_the_same_id_is_refused_and_the_first_study_is_untouched(tmp_path: Path) -> None:
    """The reported fault: a second command's study took the first one's running container for a stale one."""
    from tests.studies import ROOT, studymon, template

    t = template(tmp_path, backend="process", budget=30, diagnosisSeconds=3)
    one, two = tmp_path / "one", tmp_path / "two"
    env = dict(os.environ, PYTHONPATH=str(ROOT), COLUMNS="200")
    first = subprocess.Popen([sys.executable, "-m", "studymon.tui.cli", "run", "--headless", "--template", str(t), f"a={one}"],
                             cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        ledger = one / "study" / "ledger.jsonl"
        started = lambda: ledger.exists() and b'"runStarted"' in ledger.read_bytes()  # noqa: E731
        until(lambda: started() or first.poll() is not None, 60, "the first study to start a run", step=0.05)
        assert started(), f"the first study ended (exit {first.returncode}) before it started a run"
        second = studymon("run", "--headless", "--template", str(t), f"a={two}", cwd=tmp_path)
        assert second.returncode == 2, second.stdout + second.stderr
        lines = second.stderr.strip().splitlines()
        assert len(lines) == 1 and str(one.resolve()) in lines[0] and "studymon attach" in lines[0], second.stderr
        assert not two.exists(), "a refused command wrote nothing"
        output, _ = first.communicate(timeout=180)
    finally:
        if first.poll() is None:
            first.kill()
    assert first.returncode == 0, output
    launches = [json.loads(x) for x in (one / "launches.jsonl").read_text().splitlines()]
    assert [x["event"] for x in launches] == ["start", "end"] and launches[-1]["code"] == 0
    # Once the first study has ended, the id is free again.
    third = studymon("run", "--headless", "--template", str(t), f"a={two}", cwd=tmp_path)
    assert third.returncode == 0, third.stdout + third.stderr


def test_a_keeper_left_running_by_a_dead_console_keeps_the_id(tmp_path: Path) -> None:
    from tests.studies import ROOT, studymon, template

    t = template(tmp_path, backend="process", budget=30, diagnosisSeconds=3)
    one = tmp_path / "one"
    env = dict(os.environ, PYTHONPATH=str(ROOT), COLUMNS="200")
    console = subprocess.Popen([sys.executable, "-m", "studymon.tui.cli", "run", "--headless", "--template", str(t), f"a={one}"],
                               cwd=tmp_path, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    launches = one / "launches.jsonl"
    until(lambda: launches.exists() and launches.read_text().strip(), 60, "the first launch", step=0.05)
    console.kill()
    console.wait()
    refused = studymon("run", "--headless", "--template", str(t), f"a={tmp_path / 'two'}", cwd=tmp_path)
    assert refused.returncode == 2 and str(one.resolve()) in refused.stderr, refused.stderr
    resumed = studymon("run", "--headless", "--resume", f"a={one}", cwd=tmp_path)
    assert resumed.returncode == 2 and "still running" in resumed.stderr and "studymon attach" in resumed.stderr
    attached = studymon("attach", "--headless", str(one), cwd=tmp_path, timeout=180)
    assert attached.returncode == 0, attached.stdout + attached.stderr


# --- neighbours: stems that extend one another (PROTOCOL §6.1) ------------------------------------------

HOLD_AS = """
import sys
sys.path.insert(0, sys.argv[1])
from pathlib import Path
from studymon.engine.launch.lock import claim
study_id, out, identity, prefix = sys.argv[2:6]
lock = claim(study_id, Path(out), identity, prefix)
print("held", flush=True)
sys.stdin.read()  # held until the test closes our standard input (or kills us)
"""


def _hold_as(study_id: str, out: Path, prefix: str = "inforsi", identity: str = IDENT) -> subprocess.Popen[str]:
    """Another process that holds ``study_id``'s lock until its standard input is closed."""
    root = str(Path(__file__).resolve().parent.parent)
    proc = subprocess.Popen([sys.executable, "-c", HOLD_AS, root, study_id, str(out), identity, prefix],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None and proc.stdout.readline().strip() == "held"
    return proc


def _let_go(proc: subprocess.Popen[str]) -> None:
    assert proc.stdin is not None
    proc.stdin.close()
    proc.wait(timeout=30)


@pytest.mark.parametrize(("held", "claimed"), [
    (("inforsi", "exp"), ("inforsi", "exp-2")),  # claimed extends held
    (("inforsi", "exp-2"), ("inforsi", "exp")),  # claimed is extended by held
    (("inforsi", "exp"), ("inforsi", "exp-2-b")),
    (("inforsi-exp", "2"), ("inforsi", "exp-2")),  # one stem under two prefixes: inforsi-exp-2-
    (("inforsi", "exp-2"), ("inforsi-exp", "2-b")),
])
def test_a_study_whose_stem_extends_a_running_ones_is_refused_naming_it(
    tmp_path: Path, study_lock_dir: Path, held: tuple[str, str], claimed: tuple[str, str]
) -> None:
    holder = _hold_as(held[1], tmp_path / "one", prefix=held[0])
    try:
        with pytest.raises(studylock.NeighbourRunning) as caught:
            claim(claimed[1], tmp_path / "two", IDENT, claimed[0])
        refusal = caught.value
        assert isinstance(refusal, StudyInUse)  # whoever handles a study in use handles this one too
        assert (refusal.other_id, refusal.other_prefix) == (held[1], held[0])
        assert refusal.holder == (tmp_path / "one").resolve()
        message = str(refusal)
        assert f"study id {claimed[1]!r} cannot run beside study {held[1]!r}" in message
        assert f"running in {(tmp_path / 'one').resolve()}" in message
        assert f"{held[0]}-{held[1]}-" in message and f"{claimed[0]}-{claimed[1]}-" in message
        assert "so each study would take the other's containers for its own" in message
        assert f"choose an id that does not extend or is not extended by {held[1]!r}" in message
        # Refused before its own lock file was made.
        assert not os.path.lexists(study_lock_dir / studylock.lock_name(IDENT, *claimed))
    finally:
        _let_go(holder)
    # Once the neighbour has ended, the id is free.
    claim(claimed[1], tmp_path / "two", IDENT, claimed[0]).release()


def test_stems_that_do_not_extend_or_studies_of_other_runtimes_are_not_neighbours(tmp_path: Path) -> None:
    holder = _hold_as("exp", tmp_path / "one")
    try:
        for n, (prefix, study_id, identity) in enumerate([
            ("inforsi", "expx", IDENT),  # inforsi-expx- does not start with inforsi-exp-
            ("inforsi", "ex", IDENT),  # nor inforsi-exp- with inforsi-ex-
            ("inforsi", "e", IDENT),
            ("inforsix", "exp-2", IDENT),  # the same ids under another prefix
            ("other", "exp-2", IDENT),
            ("inforsi", "exp-2", "process:/tmp/another-runtime"),  # another process runtime
            ("inforsi", "exp-2", "docker:unix:///var/run/docker.sock"),  # Docker, not this process runtime
        ]):
            claim(study_id, tmp_path / f"o{n}", identity, prefix).release()
        # The holder is still refused to its real neighbours.
        with pytest.raises(studylock.NeighbourRunning):
            claim("exp-2", tmp_path / "two", IDENT, "inforsi")
    finally:
        _let_go(holder)
    # A neighbour's lock file that nobody holds (its study ended) is no neighbour.
    assert os.path.exists(studylock.lock_dir() / studylock.lock_name(IDENT, "inforsi", "exp"))
    claim("exp-2", tmp_path / "two", IDENT, "inforsi").release()


RACER = """
import os, sys
sys.path.insert(0, sys.argv[1])
from pathlib import Path
from studymon.engine.launch.lock import StudyInUse, claim
study_id, out = sys.argv[2], sys.argv[3]
for n, gate in enumerate(int(g) for g in sys.argv[4:]):
    print("ready", flush=True)
    os.read(gate, 1)  # every racer is released at once, when the test closes the gate's other end
    try:
        lock = claim(study_id, Path(out), f"process:/tmp/race-{n}", "inforsi")
    except StudyInUse:
        lock = None
    print("refused" if lock is None else "held", flush=True)
    sys.stdin.readline()  # the lock is kept until the test has heard every racer
    if lock is not None:
        lock.release()
"""


def test_neighbours_claimed_at_the_same_instant_never_both_hold(tmp_path: Path) -> None:
    """Racers whose stems all extend one another (x, x-1, x-1-2, ...), released together: one wins each round."""
    root = str(Path(__file__).resolve().parent.parent)
    ids = ["x"]
    while len(ids) < 6:
        ids.append(f"{ids[-1]}-{len(ids)}")
    gates = [os.pipe() for _ in range(40)]  # one per round, each on its own runtime
    reads = [r for r, _ in gates]
    opened = [w for _, w in gates]
    racers = [
        subprocess.Popen([sys.executable, "-c", RACER, root, i, str(tmp_path / i), *map(str, reads)],
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, pass_fds=reads)
        for i in ids
    ]
    try:
        for r in reads:
            os.close(r)
        for n, (_, gate) in enumerate(gates):
            for racer in racers:
                assert racer.stdout is not None and racer.stdout.readline().strip() == "ready"
            os.close(gate)
            opened.remove(gate)
            said = [racer.stdout.readline().strip() for racer in racers if racer.stdout is not None]
            seen = dict(zip(ids, said, strict=True))
            assert sorted(said) == ["held"] + ["refused"] * (len(ids) - 1), f"round {n}: {seen}"
            for racer in racers:
                assert racer.stdin is not None
                racer.stdin.write("next\n")
                racer.stdin.flush()
    finally:
        for gate in opened:
            os.close(gate)
        for racer in racers:
            racer.kill()
            racer.wait(timeout=30)


def test_a_command_with_two_neighbours_is_refused_before_any_lock_is_taken(
    tmp_path: Path, study_lock_dir: Path
) -> None:
    specs = [StudySpec("exp", tmp_path / "a"), StudySpec("exp-2", tmp_path / "b")]
    with pytest.raises(BadInput) as caught:
        claim_for_command(specs, {"exp": "inforsi", "exp-2": "inforsi"}, {"exp": "process", "exp-2": "process"}, True)
    message = str(caught.value)
    assert message.startswith("studies 'exp-2' and 'exp' of this command cannot run at once on one runtime")
    assert "the run containers of 'exp-2' (inforsi-exp-2-<run>) are named under inforsi-exp-, the stem of 'exp'" \
        in message
    assert "choose for 'exp-2' an id that does not extend or is not extended by 'exp'" in message
    assert list(study_lock_dir.iterdir()) == []
    # Resumed studies keep their own prefixes: these two stems are one (inforsi-exp-2-).
    specs = [StudySpec("2", tmp_path / "a"), StudySpec("exp-2", tmp_path / "b")]
    both = r"studies 'exp-2' and '2' of this command .*: the run containers of both are named inforsi-exp-2-<run>"
    with pytest.raises(BadInput, match=both):
        claim_for_command(specs, {"2": "inforsi-exp", "exp-2": "inforsi"}, {"2": "process", "exp-2": "process"}, False)
    # Not neighbours: stems that do not extend, or another prefix.
    for other, prefix in (("expx", "inforsi"), ("exp-2", "other")):
        specs = [StudySpec("exp", tmp_path / "a"), StudySpec(other, tmp_path / "b")]
        locks = claim_for_command(specs, {"exp": "inforsi", other: prefix}, {"exp": "process", other: "process"}, True)
        assert sorted(locks) == sorted(["exp", other])
        for lock in locks.values():
            lock.release()


@pytest.mark.usefixtures("docker_engine")
def test_neighbours_on_docker_and_on_the_process_runtime_are_not_refused(tmp_path: Path) -> None:
    specs = [StudySpec("exp", tmp_path / "a"), StudySpec("exp-2", tmp_path / "b")]
    prefixes = {"exp": "inforsi", "exp-2": "inforsi"}
    locks = claim_for_command(specs, prefixes, {"exp": "process", "exp-2": "docker"}, True)
    assert sorted(locks) == ["exp", "exp-2"]
    for lock in locks.values():
        lock.release()


def test_a_command_beside_a_running_neighbour_is_refused_naming_it_and_writes_nothing(
    tmp_path: Path, study_lock_dir: Path
) -> None:
    """A real study ``exp`` runs; a second command with ``exp-2`` (fresh or resumed) is refused, others are not."""
    from studymon.engine.launch.prepare import create_fresh, plan_fresh
    from tests.studies import ROOT, studymon, template

    tiny = [sys.executable, str(ROOT / "tests" / "doubles" / "tiny_study.py")]
    t = template(tmp_path, backend="process", budget=30, diagnosisSeconds=3)
    quick = tmp_path / "quick.json"
    quick.write_text(json.dumps({"command": tiny, "backend": "process"}))
    elsewhere = tmp_path / "elsewhere.json"
    elsewhere.write_text(json.dumps({"command": tiny, "backend": "process", "containerPrefix": "other"}))
    # A made, never started exp-2, to be resumed while exp runs.
    made = tmp_path / "made"
    specs, tpl, backend = plan_fresh([f"exp-2={made}"], quick, [], "process")
    create_fresh(specs, tpl, backend)

    def digest(folder: Path) -> list[tuple[str, int, int, bytes]]:
        return [
            (str(p.relative_to(folder)), p.stat().st_mode, p.stat().st_mtime_ns, p.read_bytes() if p.is_file() else b"")
            for p in sorted(folder.rglob("*"))
        ]

    made_before = digest(made)
    one, two = tmp_path / "one", tmp_path / "two"
    env = dict(os.environ, PYTHONPATH=str(ROOT), COLUMNS="200")
    first = subprocess.Popen([sys.executable, "-m", "studymon.tui.cli", "run", "--headless", "--template", str(t),
                              f"exp={one}"], cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                             text=True)
    try:
        ledger = one / "study" / "ledger.jsonl"
        started = lambda: ledger.exists() and b'"runStarted"' in ledger.read_bytes()  # noqa: E731
        until(lambda: started() or first.poll() is not None, 60, "the first study to start a run", step=0.05)
        assert started(), f"the first study ended (exit {first.returncode}) before it started a run"
        locks_before = sorted(p.name for p in study_lock_dir.iterdir())
        for args in (("--template", str(quick), f"exp-2={two}"), ("--resume", f"exp-2={made}")):
            second = studymon("run", "--headless", *args, cwd=tmp_path)
            assert second.returncode == 2, second.stdout + second.stderr
            lines = second.stderr.strip().splitlines()
            assert len(lines) == 1, second.stderr
            assert lines[0] == (
                f"studymon run: study id 'exp-2' cannot run beside study 'exp' (running in {one.resolve()}) on this "
                "runtime: the run containers of 'exp-2' (inforsi-exp-2-<run>) are named under inforsi-exp-, the stem "
                "of 'exp', so each study would take the other's containers for its own; choose an id that does not "
                f"extend or is not extended by 'exp', or wait for 'exp' to end; watch it with: studymon attach "
                f"{one.resolve()}"
            ), lines[0]
        assert not two.exists(), "a refused command wrote nothing"
        assert digest(made) == made_before, "a refused resume touched nothing"
        assert sorted(p.name for p in study_lock_dir.iterdir()) == locks_before, "nor made a lock file"
        # Not neighbours of exp: a stem that does not extend, the same ids under another prefix.
        for args in (("--template", str(quick), f"expx={tmp_path / 'x'}"),
                     ("--template", str(elsewhere), f"exp-2={tmp_path / 'other'}")):
            beside = studymon("run", "--headless", *args, cwd=tmp_path)
            assert beside.returncode == 0, beside.stdout + beside.stderr
        assert first.poll() is None, "exp was still running while its non-neighbours ran"
        output, _ = first.communicate(timeout=180)
    finally:
        if first.poll() is None:
            first.kill()
    assert first.returncode == 0, output
    # Once exp has ended, exp-2 may run.
    resumed = studymon("run", "--headless", "--resume", f"exp-2={made}", cwd=tmp_path)
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr


def test_a_command_with_two_neighbour_ids_is_refused_and_writes_nothing(tmp_path: Path, study_lock_dir: Path) -> None:
    from tests.studies import ROOT, studymon

    quick = tmp_path / "quick.json"
    quick.write_text(json.dumps({"command": [sys.executable, str(ROOT / "tests" / "doubles" / "tiny_study.py")],
                                 "backend": "process"}))
    refused = studymon("run", "--headless", "--template", str(quick), f"exp={tmp_path / 'one'}",
                       f"exp-2={tmp_path / 'two'}", cwd=tmp_path)
    assert refused.returncode == 2, refused.stdout + refused.stderr
    assert refused.stderr.strip().splitlines() == [
        (
            "studymon run: studies 'exp-2' and 'exp' of this command cannot run at once on one runtime: the run "
            "containers of 'exp-2' (inforsi-exp-2-<run>) are named under inforsi-exp-, the stem of 'exp', so each "
            "study would take the other's containers for its own; choose for 'exp-2' an id that does not extend or "
            "is not extended by 'exp', or run them one after the other"
        )
    ], refused.stderr
    assert not (tmp_path / "one").exists() and not (tmp_path / "two").exists()
    assert list(study_lock_dir.iterdir()) == []
    # Ids that do not extend one another run side by side.
    beside = studymon("run", "--headless", "--template", str(quick), f"exp={tmp_path / 'one'}",
                      f"expx={tmp_path / 'two'}", cwd=tmp_path)
    assert beside.returncode == 0, beside.stdout + beside.stderr
