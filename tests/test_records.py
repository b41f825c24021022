"""The evidence folder's typed records: what the writer's ``to_json`` gives, the judge's ``parse`` reads back.

And what ``parse`` refuses: every field the judge uses is validated there,
so a value of the wrong type or an impossible time is a reason, never a
crash or a value trusted as given.
"""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from studymon.engine.evidence.records import (
    ArmLine,
    ContainerEvent,
    Gap,
    KillRecord,
    KillTarget,
    LaunchEnd,
    LaunchStart,
    Snapshot,
    TimelineLine,
    WindowRecord,
    epoch,
    parse_arm,
    parse_event,
    parse_kill,
    parse_launch,
    parse_research,
    parse_snapshot,
    parse_timeline,
    parse_window,
    same_json,
    started,
    time_epoch,
)

STEM = "inforsi-s-"  # the study stem the kill.json lines of these tests write

# Millisecond times of this century, as the console's clock gives them.
TIMES = st.integers(1_700_000_000_000, 4_000_000_000_000).map(lambda ms: ms / 1000)
PIDS = st.integers(1, 2**22)


def _through_a_file(value: Any) -> Any:
    return json.loads(json.dumps(value))


@given(PIDS, TIMES, st.booleans())
def test_a_start_line_reads_back(pid: int, at: float, resume: bool) -> None:
    got = parse_launch(_through_a_file(LaunchStart(pid, at, resume).to_json()))
    assert got == LaunchStart(pid, at, resume)


@given(st.one_of(st.none(), PIDS), TIMES, st.one_of(st.none(), st.integers(-128, 255)),
       st.sampled_from([None, "SIGKILL", "SIGTERM"]))
def test_an_end_line_reads_back(pid: int | None, at: float, code: int | None, signal: str | None) -> None:
    got = parse_launch(_through_a_file(LaunchEnd(pid, at, code, signal).to_json()))
    if code is not None and signal is not None:
        # A process exits with a code or is ended by a signal, never both: the keeper never writes such a line.
        assert isinstance(got, str) and "both a code and a signal" in got
        return
    if pid is None and code != 127:
        # A null pid is the keeper's end of a controller it could not start: exit 127, nothing else.
        assert got == "an end line whose pid is null, not exit 127 (null only where no controller started)"
        return
    assert got == LaunchEnd(pid, at, code, signal)
    assert isinstance(got, LaunchEnd) and got.clean is (code == 0 and signal is None)


def test_launch_lines_that_are_not_launches() -> None:
    at = "2026-12-01T00:00:00.000Z"
    assert parse_launch(["x"]) == "a list, not a launch"
    assert parse_launch({"event": "begin", "pid": 1, "at": at}) == "a line whose event is neither start nor end"
    assert parse_launch({"event": "start", "pid": 1}) == "a start line whose at is not a time"
    assert parse_launch({"event": "start", "pid": True, "at": at}) == "a start line whose pid is not a process id"
    assert parse_launch({"event": "end", "pid": -3, "at": at, "code": 0}) == "an end line whose pid is not a process id"
    assert parse_launch({"event": "end", "pid": 1, "at": at, "code": "0", "signal": None}) == "an end line whose code is not an integer"
    assert parse_launch({"event": "end", "pid": 1, "at": at, "code": None, "signal": "SIG\x1b"}) == (
        "an end line whose signal is not a signal's name")
    assert parse_launch({"event": "end", "pid": 1, "at": "10000-01-01T00:00:00Z", "code": 0}) == (
        "an end line whose at is not a time")


def test_an_end_line_s_pid_0_is_not_a_process_id() -> None:
    """pid 0 is no process id on an end line, as on a start line."""
    at = "2026-12-01T00:00:00.000Z"
    assert parse_launch({"event": "end", "pid": 0, "at": at, "code": 0}) == "an end line whose pid is not a process id"
    assert parse_launch({"event": "start", "pid": 0, "at": at}) == "a start line whose pid is not a process id"
    assert parse_launch({"event": "end", "pid": 1, "at": at, "code": 0, "signal": None}) == LaunchEnd(1, 1_796_083_200.0, 0, None)
    # Both written, null where there is none: an end without one of them is not a line the keeper writes.
    for gone in ("code", "signal"):
        line = {k: v for k, v in {"event": "end", "pid": 1, "at": at, "code": 0, "signal": None}.items() if k != gone}
        assert parse_launch(line) == "an end line without its code and signal (null where there is none)"


def test_a_time_at_the_epoch_or_at_the_year_10000_is_not_a_date() -> None:
    """0 s and exactly LAST_DATE (9999-12-31T23:59:60Z, a leap second read as the next second) are no dates."""
    for text in ("1970-01-01T00:00:00Z", "9999-12-31T23:59:60Z"):
        assert time_epoch(text) is None, text
        assert parse_launch({"event": "start", "pid": 1, "at": text}) == "a start line whose at is not a time", text
        assert parse_launch({"event": "end", "pid": 1, "at": text, "code": 0}) == "an end line whose at is not a time"
    assert time_epoch("1970-01-01T00:00:00.001Z") == 0.001
    assert time_epoch("9999-12-31T23:59:59.999Z") is not None


@given(st.lists(st.sampled_from(["d1", "a1", "d2", "x.y-z_9"]), unique=True, max_size=4), TIMES, PIDS,
       st.integers(0, 10**6), st.sampled_from(["auto", "manual"]))
def test_kill_json_reads_back(runs: list[str], at: float, pid: int, seq: int, trigger: str) -> None:
    if trigger == "auto":
        seq = max(seq, 1)  # an automatic kill fires at a record: records are numbered from 1 (0 is a manual kill's)
    targets = [KillTarget(r, "c1", 1, 5, 7, f"inforsi-s-{r}") for r in runs]
    record = KillRecord(trigger=trigger, at_epoch=at, pid=pid, before_kill_seq=seq, targets=targets,
                        trigger_seq=seq if trigger == "auto" else None, signalled=True, since_epoch=at - 0.05,
                        prefix="inforsi-s-", frozen=at - 0.05)
    got = parse_kill(_through_a_file(record.to_json()), "inforsi-s-")
    assert (got.problems, got.delivery) == ([], [])
    assert (got.trigger, got.pid, got.before_kill_seq, got.trigger_seq, got.signalled) == (
        trigger, pid, seq, record.trigger_seq, True)
    assert got.targets == targets
    assert got.at_epoch is not None and abs(got.at_epoch - at) < 0.001
    assert got.since_ns is not None and abs(got.since_ns - round((at - 0.05) * 1e9)) < 1000


def test_kill_json_fields_fail_the_check_they_belong_to() -> None:
    sound = KillRecord(prefix=STEM, trigger="manual", at_epoch=1.8e9, pid=9, before_kill_seq=7, signalled=True,
                       since_epoch=1.8e9 - 0.05).to_json()
    got = parse_kill(dict(sound, pid="9", signalled=False), STEM)
    assert got.problems == [] and got.delivery == ["kill.json pid is a string, not a process id",
                                                   "kill.json says SIGKILL was not sent"]
    got = parse_kill({k: v for k, v in sound.items() if k not in ("since", "sinceEpoch")}, STEM)
    assert got.problems == ["kill.json has no since and sinceEpoch, two times, to open the window at"]
    got = parse_kill(dict(sound, since="2030-01-01T00:00:00.000000000Z"), STEM)
    assert got.problems == ["kill.json: since and sinceEpoch are not the same time"]
    got = parse_kill(dict(sound, prefix="inforsi-t-"), "inforsi-s-")
    assert got.problems == ["kill.json prefix is not the study's inforsi-s-"]
    written = {"cell": "c", "round": 1, "planSeq": 2, "startSeq": None, "container": None}
    got = parse_kill(dict(sound, targets=[{"run": "d1", **written}, {"run": "d1"}, {"run": "D1"}, 5]), STEM)
    assert got.problems == ["kill.json lists run d1 twice", "kill.json target 3 has no valid run id",
                            "kill.json target 4 is an integer, not an object"]
    # A target's facts are held twice (§6.9): one not written cannot be held to the other copy.
    got = parse_kill(dict(sound, targets=[{"run": "d1", **{k: v for k, v in written.items() if k != "container"}}]), STEM)
    assert got.problems == ["kill.json target d1 does not write its container"]


def test_kill_json_since_within_its_text_slack_of_since_epoch_is_the_same_time() -> None:
    """since (written to the nanosecond) and sinceEpoch within TEXT_SLACK (2 µs) are the same time; 5 µs apart
    they are not (just after 1970, where a double is exact to far less)."""
    sound = KillRecord(prefix=STEM, 
        trigger="manual", at_epoch=1.8e9, pid=9, before_kill_seq=7, signalled=True, since_epoch=1.8e9 - 0.05
    ).to_json()
    got = parse_kill(dict(sound, sinceEpoch=0.001, since="1970-01-01T00:00:00.0010015Z"), STEM)
    assert (got.problems, got.since_epoch) == ([], 0.001)
    got = parse_kill(dict(sound, sinceEpoch=0.001, since="1970-01-01T00:00:00.001005Z"), STEM)
    assert got.problems == ["kill.json: since and sinceEpoch are not the same time"]


def test_an_epoch_number_within_the_first_second_is_a_time() -> None:
    """Epoch seconds in (0, 1] can be a date: a resultSeenEpoch or a sinceEpoch of 0.5 is taken."""
    assert epoch(0.5) == 0.5 and epoch(1) == 1.0 and epoch(0) is None
    doc = WindowRecord(1.8e9, 1.8e9 + 5, {"d1": {"resultSeq": 9, "resultSeenEpoch": 0.5}}).to_json()
    got, problem = parse_window(doc)
    assert problem is None and got is not None and got.seen_ns("d1") == 500_000_000
    sound = KillRecord(prefix=STEM, 
        trigger="manual", at_epoch=1.8e9, pid=9, before_kill_seq=7, signalled=True, since_epoch=1.8e9 - 0.05
    ).to_json()
    got_kill = parse_kill(dict(sound, sinceEpoch=0.5, since="1970-01-01T00:00:00.500Z"), STEM)
    assert (got_kill.problems, got_kill.since_epoch) == ([], 0.5)


def test_kill_json_is_the_documented_record() -> None:
    """Every field docs/evidence.md lists for kill.json, with its value and its JSON type, and no other."""
    t = 1_800_000_000.5  # 2027-01-15T08:00:00.5Z; the times below are exact doubles
    record = KillRecord(trigger="auto", at_epoch=t + 0.0133056640625, pid=4242, before_kill_seq=17,
                        targets=[KillTarget("d1", "c1", 2, 12, 15, "inforsi-s-d1")], trigger_seq=16, signalled=True,
                        since_epoch=t, prefix="inforsi-s-", capture_error=None, group_stopped=True,
                        trigger_at="2027-01-15T08:00:00.497Z", trigger_seen=t - 0.001953125, frozen=t + 0.0009765625,
                        kill_returned=t + 0.0142822265625, point="after:runStarted/diagnosis")
    want = {
        "trigger": "auto",
        "at": "2027-01-15T08:00:00.513Z",
        "pid": 4242,
        "beforeKillSeq": 17,
        "targets": [{"run": "d1", "class": "inFlight", "cell": "c1", "round": 2, "planSeq": 12, "startSeq": 15,
                     "container": "inforsi-s-d1"}],
        "prefix": "inforsi-s-",
        "signal": "SIGKILL",
        "signalled": True,
        "groupStopped": True,
        "captureError": None,
        "point": "after:runStarted/diagnosis",
        "exact": False,
        "triggerSeq": 16,
        "triggerEvent": None,
        "triggerAt": "2027-01-15T08:00:00.497Z",
        "triggerSeenAt": "2027-01-15T08:00:00.498Z",
        "frozenAt": "2027-01-15T08:00:00.500Z",
        "killSentAt": "2027-01-15T08:00:00.513Z",
        "triggerSeenEpoch": 1_800_000_000.498046875,
        "frozenEpoch": 1_800_000_000.5009765625,
        "killSentEpoch": 1_800_000_000.5133056640625,
        "killReturnedEpoch": 1_800_000_000.5142822265625,
        "frozenMs": 12.329,  # from the freeze to SIGKILL, to the microsecond
        "since": "2027-01-15T08:00:00.500000000Z",
        "sinceEpoch": 1_800_000_000.5,
    }
    got = record.to_json()
    assert got == want
    assert json.dumps(got, sort_keys=True) == json.dumps(want, sort_keys=True)  # the types too: 12.329, never 12
    assert _through_a_file(got) == want


def test_an_end_the_console_did_not_make_has_no_signal() -> None:
    """kill.json's signal (docs/evidence.md): SIGKILL for a kill the console made (auto, manual); null for a crash or
    a stop, whose end no signal of the console's made."""
    def signal(trigger: str) -> Any:
        doc = KillRecord(prefix=STEM, trigger=trigger, at_epoch=1.8e9, pid=9, before_kill_seq=7, since_epoch=1.8e9 - 0.05).to_json()
        assert "signal" in doc
        return doc["signal"]

    assert [signal(t) for t in ("auto", "manual", "crash", "stop")] == ["SIGKILL", "SIGKILL", None, None]


_AUTO = {"trigger": "auto", "at": "2027-01-15T08:00:00.513Z", "pid": 9, "beforeKillSeq": 7, "triggerSeq": 7,
         "signalled": True, "targets": [], "since": "2027-01-15T08:00:00.500000000Z", "sinceEpoch": 1_800_000_000.5}


def test_kill_json_names_its_point_and_a_container_point_its_event() -> None:
    def problems(**fields: Any) -> list[str]:
        return parse_kill(_through_a_file({**_AUTO, **fields}), STEM).problems

    assert problems() == [] and parse_kill(_AUTO, STEM).point is None  # an older console's: the seed's point
    assert problems(point="after:charge#2") == [] and parse_kill({**_AUTO, "point": "after:charge#2"}, STEM).point == \
        "after:charge#2"
    assert problems(point="after:nope") == ["kill.json point is after:nope, not a kill point"]
    assert problems(point="x\x1b[2J") == ["kill.json point is x?[2J, not a kill point"]
    assert problems(point=3) == ["kill.json point is an integer, not a kill point"]
    event = {"Action": "die", "Actor": {"Attributes": {"name": "inforsi-s-d1"}}}
    # A container point's kill has its event, and no record to name: triggerSeq may be null.
    assert problems(point="container:die", triggerSeq=None, triggerEvent=event) == []
    assert parse_kill({**_AUTO, "point": "container:die", "triggerEvent": event}, STEM).trigger_event == event
    assert problems(point="container:die", triggerSeq=None) == [
        "kill.json triggerEvent is null, not a container event"]
    assert problems(triggerEvent=[1]) == ["kill.json triggerEvent is a list, not a container event"]
    assert problems(point="after:halt", triggerSeq=None) == ["kill.json triggerSeq is null, not a seq"]
    assert problems(point="after:halt", triggerSeq=None, trigger="manual") == []


def test_a_capture_error_is_read_back_short_and_without_control_characters() -> None:
    """What failed while the controller was frozen reaches killEvidence's detail: at most 120 characters, printable."""
    def read(error: Any) -> list[str]:
        doc = KillRecord(prefix=STEM, trigger="manual", at_epoch=1.8e9, pid=9, before_kill_seq=7, signalled=True,
                         since_epoch=1.8e9 - 0.05, capture_error=error).to_json()
        return parse_kill(_through_a_file(doc), STEM).problems

    said = "capture failed while the controller was frozen: "
    assert read("the containers could not be inspected while frozen (timed out)") == [
        said + "the containers could not be inspected while frozen (timed out)"]
    assert read("inspect failed:\n\x1b[2Jgone\u202e") == [said + "inspect failed:??[2Jgone?"]
    assert read("e" * 120) == [said + "e" * 120]
    assert read("e" * 121) == [said + "e" * 119 + "…"]
    assert read("e" * 5000) == [said + "e" * 119 + "…"]
    assert read(["e"]) == [said + "a list"]  # a hostile file's: what it is, never what it says


@given(TIMES, st.floats(0.001, 1e5), st.dictionaries(st.sampled_from(["d1", "a2", "d3"]),
                                                      st.tuples(st.integers(1, 99), st.floats(0, 1))))
def test_the_window_reads_back(since: float, length: float, results: dict[str, tuple[int, float]]) -> None:
    entries = {run: {"resultSeq": seq, "resultSeenEpoch": since + at * length} for run, (seq, at) in results.items()}
    got, problem = parse_window(_through_a_file(WindowRecord(since, since + length, entries).to_json()))
    assert problem is None and got is not None
    assert (got.since_epoch, got.until_epoch, got.notes) == (since, since + length, [])
    assert {run: got.seen_ns(run) for run in entries} == {
        run: round(e["resultSeenEpoch"] * 1e9) for run, e in entries.items()}


def test_the_window_disagreeing_with_itself_is_noted_and_impossible_times_refused() -> None:
    doc = WindowRecord(1.8e9, 1.8e9 + 5, {}).to_json()
    got, problem = parse_window(dict(doc, until="2030-01-01T00:00:00.000000000Z"))
    assert problem is None and got is not None and got.notes == [
        "container-events-window.json: until and untilEpoch are not the same time"]
    assert parse_window(dict(doc, untilEpoch=1.8e9 - 5))[1] == (
        "container-events-window.json: untilEpoch comes before sinceEpoch")
    assert parse_window(dict(doc, sinceEpoch=1e300))[1] == "container-events-window.json: sinceEpoch is a number, not a time"


def test_the_window_s_until_may_be_within_its_text_slack_of_until_epoch_and_no_more() -> None:
    """until and untilEpoch 1.5 µs apart are the same time; 1 ms or half a second apart they are noted."""
    doc = {
        "since": "1970-01-01T00:00:00.001Z",
        "sinceEpoch": 0.001,
        "until": "1970-01-01T00:00:00.0020015Z",
        "untilEpoch": 0.002,
        "targets": {},
    }
    got, problem = parse_window(doc)
    assert problem is None and got is not None and got.notes == []
    got, problem = parse_window(dict(doc, until="1970-01-01T00:00:00.003Z"))
    assert problem is None and got is not None
    assert got.notes == ["container-events-window.json: until and untilEpoch are not the same time"]
    got, problem = parse_window(dict(WindowRecord(1.8e9, 1.8e9 + 5, {}).to_json(), until="2027-01-15T08:00:05.500Z"))
    assert problem is None and got is not None
    assert got.notes == ["container-events-window.json: until and untilEpoch are not the same time"]


@given(TIMES, st.floats(0, 100))
def test_a_gap_reads_back(lo: float, length: float) -> None:
    hi = lo + length
    got = parse_event(_through_a_file(Gap(lo, hi).to_json()))
    assert isinstance(got, Gap) and abs(got.lo - lo) < 0.001 and abs(got.hi - hi) < 0.001


def test_a_gap_needs_two_times_in_order() -> None:
    for gap in ({"from": "2026-12-01T00:00:01.000Z"}, {"from": "x", "to": "y"}, "2026",
                {"from": "2026-12-01T00:00:02.000Z", "to": "2026-12-01T00:00:01.000Z"}):
        assert parse_event({"gap": gap}) == "a gap line that is not a gap (from and to, two times in order)"


def test_an_event_reads_its_names_labels_and_action() -> None:
    e = parse_event({"Type": "container", "Action": "exec_start: sh -c 'x'", "time": 1_800_000_000,
                     "timeNano": 1_800_000_000_250_000_000,
                     "Actor": {"ID": "abc", "Attributes": {"name": "/inforsi-s-d1", "studymon.study": "s",
                                                           "studymon.run": "d1", "exitCode": "3"}}})
    assert isinstance(e, ContainerEvent)
    assert (e.verb, e.id, e.name, e.study, e.run, e.exit_code) == ("exec_start", "abc", "inforsi-s-d1", "s", "d1", 3)
    assert e.key == ("abc", "exec_start", 1_800_000_000_250_000_000)
    whole = {"Type": "container", "Action": "die", "time": 5, "Actor": {"ID": "abc", "Attributes": {"name": "n"}}}
    assert not isinstance(parse_event(whole), str)
    # What the runtime writes whole (§6.9): its Type, Action, Actor's Id and name, the older copies agreeing.
    for broken, why in [
        ({"Type": "image", "Action": "pull"}, "an event that is not a container's (its Type is not container)"),
        (dict(whole, Type=None), "an event that is not a container's (its Type is not container)"),
        ({k: v for k, v in whole.items() if k != "Type"}, "an event that is not a container's (its Type is not container)"),
        (dict(whole, Action=5), "an event without an Action"),
        (dict(whole, status="start"), "an event whose status and Action disagree"),
        (dict(whole, Actor=["x"]), "an event whose Actor is not an object with Attributes"),
        (dict(whole, Actor={"ID": "abc"}), "an event whose Actor is not an object with Attributes"),
        (dict(whole, Actor={"ID": None, "Attributes": {"name": "n"}}), "an event without its container's Id (Actor.ID)"),
        (dict(whole, Actor={"ID": "", "Attributes": {"name": "n"}}), "an event without its container's Id (Actor.ID)"),
        (dict(whole, id="abd"), "an event whose id and Actor.ID disagree"),
        (dict(whole, Actor={"ID": "abc", "Attributes": {"name": 5}}), "an event without its container's name (Actor.Attributes.name)"),
        (dict(whole, Actor={"ID": "abc", "Attributes": {}}), "an event without its container's name (Actor.Attributes.name)"),
        (dict(whole, Actor={"ID": "abc", "Attributes": {"name": "/"}}), "an event without its container's name (Actor.Attributes.name)"),
        (dict(whole, Actor={"ID": "abc", "Attributes": {"name": ""}}), "an event without its container's name (Actor.Attributes.name)"),
    ]:
        assert parse_event(broken) == why, broken
    assert not isinstance(parse_event(dict(whole, status="die", id="abc")), str)


def test_a_snapshot_reads_its_state() -> None:
    s = parse_snapshot({"Id": "abc", "Name": "/inforsi-s-d1", "State": {
        "Running": False, "Status": "exited", "StartedAt": "2026-12-01T00:00:00.1Z",
        "FinishedAt": "2026-12-01T00:00:05.500000000Z", "ExitCode": 0}})
    assert not isinstance(s, str) and s.exited and s.name == "inforsi-s-d1" and s.exit_code == 0
    assert s.finished_ns == round(time_epoch("2026-12-01T00:00:05.5Z") * 1e9)  # type: ignore[operator]
    running = parse_snapshot({"Id": "abc", "State": {"Running": True, "FinishedAt": "0001-01-01T00:00:00Z"}})
    assert not isinstance(running, str) and running.finished_ns is None and not running.exited
    assert parse_snapshot(["x"]) == "a list, not an object"


def test_a_snapshot_s_values_of_the_wrong_type_are_read_as_absent() -> None:
    """A tampered snapshot's values never reach a check as given: an ExitCode of 1.0 or true would equal a die's 1.
    Its State's own fields of the wrong type, or Running and Status saying two things, make it no inspect (§6.9)."""
    got = parse_snapshot({"Id": 5, "Name": ["/inforsi-s-d1"], "State": {"Running": False}})
    assert got == Snapshot(None, None, False, None, None, None, None)
    # The times it holds twice with the events are texts where written: another type would hide the exit it dates.
    assert parse_snapshot({"Id": "x", "State": {"Running": False, "StartedAt": 7}}) == (
        "an inspect whose State.StartedAt is not a text")
    assert parse_snapshot({"Id": "x", "State": {"Running": False, "FinishedAt": 1.8e9}}) == (
        "an inspect whose State.FinishedAt is not a text")
    # Every runtime writes Running: a State without it is no inspect's.
    assert parse_snapshot({"Id": "x", "State": {"Status": "exited"}}) == "an inspect whose State.Running is not true or false"
    for running, status, code, why in (
        ("true", "exited", 0, "an inspect whose State.Running is not true or false"),
        (False, ["exited"], 0, "an inspect whose State.Status is not a text"),
        (False, "exited", 1.0, "an inspect whose State.ExitCode is not an integer"),
        (False, "exited", True, "an inspect whose State.ExitCode is not an integer"),
        (False, "exited", "1", "an inspect whose State.ExitCode is not an integer"),
        (True, "exited", 0, "an inspect whose State.Running and State.Status disagree"),
        (False, "running", 0, "an inspect whose State.Running and State.Status disagree"),
        (False, "paused", 0, "an inspect whose State.Running and State.Status disagree"),
    ):
        got = parse_snapshot({"Id": "x", "State": {"Running": running, "Status": status, "ExitCode": code}})
        assert got == why, (running, status, code)
    for running, status in ((True, "running"), (True, "paused"), (True, "restarting"), (False, "exited"), (False, "created")):
        assert not isinstance(parse_snapshot({"Id": "x", "State": {"Running": running, "Status": status}}), str)


def test_a_snapshot_shows_a_started_container_only_with_its_start_time() -> None:
    """started(): a container inspect shows it was started (running or exited) only with a real StartedAt and a
    Status other than created; anything else, a hostile file's included, is no start and never a crash."""
    when = "2026-12-01T00:00:00.1Z"
    assert started({"State": {"Status": "exited", "StartedAt": when}}) is True
    assert started({"State": {"Status": "running", "StartedAt": when}}) is True
    assert started({"State": {"StartedAt": when}}) is True
    for state in (
        {"Status": "created", "StartedAt": when},  # created says so, whatever its start time
        {"Status": "created", "StartedAt": "0001-01-01T00:00:00Z"},
        {"Status": "exited", "StartedAt": "0001-01-01T00:00:00Z"},  # Docker's zero time: never started
        {"Status": "exited", "StartedAt": ""},
        {"Status": "exited", "StartedAt": None},
        {"Status": "exited", "StartedAt": 7},
        {"Status": "exited"},
    ):
        assert started({"State": state}) is False, state
    for snapshot in ({"State": None}, {"State": "running"}, {"State": ["running"]}, {}, None, ["x"]):
        assert started(snapshot) is False, snapshot


@given(st.sampled_from(["arm", "disarm", "fired", "missed"]), TIMES)
def test_arm_lines_read_back(event: str, at: float) -> None:
    line = ArmLine(event, at, kill=1 if event == "fired" else None, run="d1" if event in ("fired", "missed") else None,
                   detail="late" if event == "missed" else None)
    got = parse_arm(_through_a_file(line.to_json()))
    assert got == line
    assert parse_arm({"event": "armed"}) == "not an arming event"


def test_arm_lines_are_the_documented_lines() -> None:
    """arms.jsonl's lines (docs/evidence.md): arm with its point, disarm bare, fired with kill, run, point and fromSeq,
    missed with run, detail, point and fromSeq; each read back as written."""
    t = 1_800_000_000.5
    at = "2027-01-15T08:00:00.500Z"
    lines = [
        (ArmLine("arm", t, point="after:charge#2"), {"event": "arm", "at": at, "point": "after:charge#2"}),
        (ArmLine("disarm", t), {"event": "disarm", "at": at}),
        (ArmLine("fired", t, kill=1, run="d1", point="after:runStarted/diagnosis", from_seq=6),
         {"event": "fired", "at": at, "point": "after:runStarted/diagnosis", "run": "d1", "kill": 1, "fromSeq": 6}),
        (ArmLine("missed", t, run="d1", detail="late", point="container:die", from_seq=9),
         {"event": "missed", "at": at, "point": "container:die", "run": "d1", "detail": "late", "fromSeq": 9}),
    ]
    for line, want in lines:
        got = line.to_json()
        assert got == want, got
        assert parse_arm(_through_a_file(got)) == line


@given(st.integers(1, 10**9), TIMES)
def test_timeline_lines_read_back(seq: int, seen: float) -> None:
    got = parse_timeline(_through_a_file(TimelineLine(seq, "runStarted", "2026-12-01T00:00:00.000Z", seen).to_json()))
    assert not isinstance(got, str) and got.seq == seq and abs(got.seen_at - seen) < 0.001
    assert (got.kind, got.at) == ("runStarted", "2026-12-01T00:00:00.000Z")
    assert parse_timeline({"seq": 0, "seenAt": "2026-12-01T00:00:00.000Z"}) == "a timeline line without a seq"
    assert parse_timeline({"seq": 3, "seenAt": 5}) == "a timeline line whose seenAt is not a time"


def test_a_timeline_line_is_the_documented_line() -> None:
    """timeline.jsonl's fields (docs/evidence.md): the record's seq, kind and at, and when the console saw it."""
    want = {"seq": 7, "kind": "runStarted", "at": "2027-01-15T08:00:00.497Z", "seenAt": "2027-01-15T08:00:00.500Z"}
    assert TimelineLine(7, "runStarted", "2027-01-15T08:00:00.497Z", 1_800_000_000.5).to_json() == want
    assert TimelineLine.line(7, "runStarted", "2027-01-15T08:00:00.497Z", "2027-01-15T08:00:00.500Z") == want


def test_research_reads_who_the_study_is() -> None:
    r = parse_research({"study": "s", "expectEnd": "export"}, "inforsi", ("halt", "export", "any"))
    assert (r.study, r.container_prefix, r.expect_end, r.problems) == ("s", "inforsi", "export", ())
    r = parse_research({"study": "S!", "containerPrefix": ["x"], "expectEnd": "never"}, "inforsi", ("halt",))
    assert (r.study, r.container_prefix, r.expect_end) == (None, None, "?")
    assert r.problems == ("research.json: study is not a valid study id",
                          "research.json: containerPrefix is not a container name prefix")


def test_a_container_prefix_may_hold_capitals() -> None:
    """containerPrefix keeps Docker's rule for names, capitals included."""
    for prefix in ("Inforsi", "iNFORSI-S_2.x"):
        r = parse_research({"study": "s", "containerPrefix": prefix}, "inforsi", ("halt",))
        assert (r.container_prefix, r.problems) == (prefix, ()), prefix


def test_same_json_tells_types_apart() -> None:
    assert same_json({"a": [1, {"b": 2.5}]}, {"a": [1, {"b": 2.5}]})
    for a, b in ((1, 1.0), (1, True), (0, False), ([1], [1, 1]), ({"a": 1}, {"a": 1, "b": 2}), ("1", 1), (None, 0)):
        assert not same_json(a, b) and not same_json({"k": [a]}, {"k": [b]})


from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402


@settings(max_examples=400, deadline=None)
@given(
    st.integers(1, 9999), st.integers(0, 13), st.integers(0, 32),
    st.integers(0, 25), st.integers(0, 61), st.integers(0, 61), st.sampled_from(["", ".5", ".123", ".123456789"]),
    st.sampled_from(["Z", "+00:00"]),
)
def test_utc_epoch_is_datetime_s_reading_of_any_time(y: int, mo: int, d: int, h: int, mi: int, s: int, frac: str,
                                                     zone: str) -> None:
    """The arithmetic reading (with its days kept per date) gives what datetime gives, and refuses what it refuses."""
    from datetime import UTC, datetime

    from studymon.engine.io.clock import utc_epoch

    text = f"{y:04d}-{mo:02d}-{d:02d}T{h:02d}:{mi:02d}:{s:02d}{frac}{zone}"
    try:
        # a leap second (:60) is read as the next second, as the arithmetic does
        want: float | None = datetime(y, mo, d, h, mi, min(s, 59), tzinfo=UTC).timestamp() + (s == 60)
    except ValueError:
        want = None
    if s > 60:
        want = None
    got = utc_epoch(text)
    if want is None:
        assert got is None, text
    else:
        assert got is not None and abs(got - want - (float(frac) if frac else 0.0)) < 2e-5, (text, got, want)  # a double at 6e10 s
    assert utc_epoch(text) == got  # the second reading, from the kept days, is the same


def test_utc_epoch_keeps_a_bounded_number_of_dates() -> None:
    from studymon.engine.io import clock

    for n in range(3 * clock._DAYS_KEPT):
        day = 1 + n % 28
        month = 1 + (n // 28) % 12
        year = 1970 + n // (28 * 12)
        assert clock.utc_epoch(f"{year:04d}-{month:02d}-{day:02d}T00:00:00Z") is not None
        assert len(clock._DAYS) <= clock._DAYS_KEPT
    assert clock.utc_epoch("2026-02-29T00:00:00Z") is None and "2026-02-29" not in clock._DAYS


_SCALARS = st.sampled_from([0, 1, True, False, 1.0, 0.0, -0.0, None, float("inf"), float("nan"), 2**70, "1", "", "a"])
_VALUES = st.recursive(
    _SCALARS,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.sampled_from(["a", "b", "c"]), inner, max_size=3),
    max_leaves=8,
)


@settings(max_examples=400, deadline=None)
@given(_VALUES, _VALUES, st.booleans())
def test_same_json_s_fast_path_says_what_the_level_by_level_comparison_says(a: Any, b: Any, copy: bool) -> None:
    """The C fast path (equality and orjson's text) never calls equal what the types or values tell apart."""
    from studymon.engine.evidence.records import _same_json

    if copy:
        b = json.loads(json.dumps(a))  # an equal copy, as ledger-at-kill.json holds: nan and inf come back as such
    assert same_json(a, b) is _same_json(a, b), (a, b)


def test_same_json_in_the_cases_the_fast_path_cannot_take() -> None:
    assert not same_json({"x": None}, {"x": float("inf")})  # both written "null" by orjson
    assert same_json({"x": float("inf")}, {"x": float("inf")})
    assert same_json({"x": 2**70}, {"x": 2**70}) and not same_json({"x": 2**70}, {"x": float(2**70)})
    assert same_json({"a": 1, "b": 2}, {"b": 2, "a": 1})  # the key order is not the value
    assert not same_json([float("nan")], [float("nan")])


def test_an_event_time_is_a_date_from_its_first_second_to_the_year_9999() -> None:
    from studymon.engine.evidence.records import LAST_DATE

    def ev(**times: Any) -> Any:
        return parse_event({"Type": "container", "Action": "die", "Actor": {"ID": "i", "Attributes": {"name": "n"}}, **times})

    assert ev(time=1).lo_ns == 1_000_000_000 and ev(timeNano=1).lo_ns == 1
    last = int(LAST_DATE) - 1
    assert ev(time=last).lo_ns == last * 1_000_000_000
    assert ev(timeNano=last * 1_000_000_000).lo_ns == last * 1_000_000_000
    assert ev(time=0) == ev(time=int(LAST_DATE)) == "an event without a time that can be a date"
    for tn in (0, int(LAST_DATE * 1e9)):
        assert ev(timeNano=tn) == "an event whose timeNano cannot be a date", tn


def test_every_launch_line_has_its_pid_null_only_where_none_was_started() -> None:
    """The keeper writes the pid on every line, null where it could not start the controller (its start says
    ``error``, its end exit 127): a line without the key is not a launch."""
    at = "2026-12-01T00:00:00.000Z"
    for event, rest in (("start", {"resume": False, "error": "not found"}), ("end", {"code": 127, "signal": None})):
        said = parse_launch({"event": event, "at": at, **rest})
        assert said == f"{'a start' if event == 'start' else 'an end'} line without its pid (null where none was started)"
        assert not isinstance(parse_launch({"event": event, "pid": None, "at": at, **rest}), str)
    # Null says no controller started, and only then: the start says why, the end is exit 127.
    assert parse_launch({"event": "start", "pid": None, "at": at, "resume": False}) == (
        "a start line whose pid is null, without the error that says why no controller started"
    )
    for code in (0, 1, None):
        assert parse_launch({"event": "end", "pid": None, "at": at, "code": code, "signal": None}) == (
            "an end line whose pid is null, not exit 127 (null only where no controller started)"
        )


def test_a_start_line_s_argv_and_start_time_are_of_their_types_where_written() -> None:
    """The keeper writes ``argv`` (a list of strings) on every start and ``startTime`` (a number) where it read one:
    one written null, or of another type, makes the line no launch."""
    at = "2026-12-01T00:00:00.000Z"
    start = {"event": "start", "pid": 7, "at": at, "resume": False}
    assert isinstance(parse_launch({**start, "argv": ["study"], "startTime": 1.5}), LaunchStart)
    assert isinstance(parse_launch(start), LaunchStart)  # neither written: a start as a console of v2 wrote it
    assert parse_launch({**start, "argv": None}) == "a start line whose argv is not a list of strings"
    for bad in ("1.5", True, [1]):
        assert parse_launch({**start, "startTime": bad}) == "a start line whose startTime is not a number", bad
    # A time where written (greater than 0, before the year 10 000), or 0: a controller gone before its keeper
    # read its start (docs/contract.md, "Hostile evidence").
    for fine in (0, 0.0, 1796585823.28):
        assert isinstance(parse_launch({**start, "startTime": fine}), LaunchStart), fine
    for bad in (-1, -0.001, 253402300800, 1e308):
        assert parse_launch({**start, "startTime": bad}) == "a start line whose startTime is not a time", bad


def test_a_window_entry_needs_both_its_result_fields_even_when_null() -> None:
    """A target's entry names resultSeq and resultSeenEpoch, null where there is none: one of them missing is a
    window that cannot be used, even when the other is null."""
    doc = WindowRecord(1.8e9, 1.8e9 + 5, {}).to_json()
    for entry in ({"resultSeq": None}, {"resultSeenEpoch": None}, {}):
        got, problem = parse_window(dict(doc, targets={"d1": entry}))
        assert got is None and problem == (
            "container-events-window.json: a target's entry without its resultSeq and resultSeenEpoch (null where none)"
        ), entry
    got, problem = parse_window(dict(doc, targets={"d1": {"resultSeq": None, "resultSeenEpoch": None}}))
    assert problem is None and got is not None
