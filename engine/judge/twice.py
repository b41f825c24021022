"""The facts a folder holds twice, compared (contract §6.9): the judge's side of ``evidence/heldtwice.py``.

:data:`COMPARED` names, for each row of the evidence module's table, where
the judge compares its copies; a disagreement is ✗ of the check named there,
whichever copy looks sound alone.  ``tests/test_held_twice_judged.py`` holds
the two against each other: a row the judge does not compare fails it.

The comparisons of a kill's own moment live here (:func:`kill_moment`): they
read ``kill.json`` as written, before :func:`~studymon.engine.evidence.records.parse_kill`
keeps only what the other checks need.
"""

from __future__ import annotations

import itertools
import math
from typing import Any

from studymon.engine.contract.folder import KillFolder
from studymon.engine.evidence.records import WRITTEN_MS, epoch, time_epoch

# A float of today's epoch, and a text to the millisecond, round: a little more than their resolution.
SLACK = 1e-6

# Where each row of the evidence module's table (engine/evidence/heldtwice.py) is compared, and the check it fails.
COMPARED: dict[str, str] = {
    "timeline-is-the-ledger": "read._Seen (ledgerWellFormed)",
    "ledger-at-kill": "read._AtKill (killEvidence)",
    "before-kill-seq": "read._AtKill: ledger-at-kill.json ends at beforeKillSeq (killEvidence; not kill-report.json)",
    "trigger-record": "study.kill_triggered: triggerSeq is the point's moment (killTriggered; not triggerAt)",
    "result-seen": "read._Seen.result_seen (killEvidence)",
    "window-closed": "records.parse_window, target._window_entry: results seen inside the window (killEvidence)",
    "seen-around-the-kill": "controllers.ControllerReplay and read._Seen (killEvidence, the targets' checks)",
    "trigger-seen": "read._Seen._trigger_seen: an after: point's, by the timeline (killEvidence; the trace is the "
    "explorer's, not the judge's)",
    "kill-sent": "twice.kill_moment (killEvidence)",
    "frozen": "twice.kill_moment (killEvidence)",
    "since": "records.parse_kill, kill.kill_evidence (killEvidence)",
    "kill-order": "twice.kill_moment (killEvidence)",
    "kill-then-end": "controllers.ControllerReplay (killDelivered; not machine.jsonl's snapshot)",
    "point-fired": "study.kill_triggered (killTriggered; not the fired line's at)",
    "point-counted-from": "study.kill_triggered: a fired line counts from no seq before the kill fired before it "
    "(killTriggered; equal within one console, which arms.jsonl does not tell)",
    "container-name": "target._snapshots, contract rule 4, kill.kill_evidence (the targets' checks)",
    "container-id": "target._snapshots and target._own_events (sameContainerNoRerun; not machine.jsonl)",
    "container-started": "target._snapshots (sameContainerNoRerun)",
    "container-exit": "target._own_events (sameContainerNoRerun)",
    "recordings-agree": "events.EventTally (sameContainerNoRerun)",
    "event-own-copies": "records.parse_event: time and timeNano within a second (sameContainerNoRerun)",
    "killed-controller": "controllers.ControllerReplay, kill.kill_delivered (killDelivered)",
    "final-ending": "read.read_outcome (exitedCleanly; not report.json)",
    "targets-from-ledger": "kill.kill_evidence (killEvidence)",
    "targets-in-window": "kill.kill_evidence (killEvidence)",
    # A campaign's facts are compared by report CAMPAIGN (engine/explore/campaign.py), each a check of scope campaign.
    "trial-identity": "campaign: journalWellFormed (id <ID>-<n>, out trials/<n>), trialFolders (research.json's study)",
    "trial-points": "campaign: journalWellFormed (a trial's points kept), trialFolders (arms.jsonl armed at them)",
    "trial-class": "campaign: journalWellFormed (its class kept), summaryAgrees (its first point's class in the plan)",
    "trial-verdict": "campaign: journalAgrees (the journal's verdict is the folder's report.json), trialHolds",
    "campaign-is-the-journal": "campaign: summaryAgrees (trials the journal's last lines, verdicts and matrix judged)",
    "campaign-template": "campaign: trialFolders (each trial's research.json the campaign's template)",
}

# Rows the judge does not compare yet, and why that is safe for now (each is a fact no check reads from that
# copy): the test holds the two lists to the table, so that a new row is placed in one of them.
NOT_YET: dict[str, str] = {
    "accounts-are-the-ledger": "accounts.json is the judge's own output; the judge reads the ledger",
    "checks-in-reports": "report.json is the judge's own output; report judges the folder again",
    "kill-report-is-the-folder": "kill-report.json is the judge's own output",
    "trigger-event": "the trace is read by the explorer, not by the judge",
    "container-labels": "labels decide attribution in the events; snapshots' labels are not compared",
    "read-back-in-window": "read-back events outside the window are ignored, not failed",
    "restart-gap": "restarts explain a check; their gap line is not compared",
    "controller-in-snapshots": "machine.jsonl is not read by the judge",
    "snapshot-per-launch": "machine.jsonl is not read by the judge",
    "launch-argv": "a start's argv is not compared with research.json",
    "targets-snapshotted": "a target missing from a snapshot fails; extra names are not compared",
}


def _unset(value: Any) -> bool:
    """A time the console did not take (a manual kill is seen by nobody): written as 0."""
    return value == 0 and isinstance(value, (int, float)) and not isinstance(value, bool)


def _time(obj: dict[str, Any], text: str, number: str) -> tuple[float | None, float | None]:
    return time_epoch(obj.get(text)), epoch(obj.get(number))


def kill_moment(obj: dict[str, Any]) -> list[str]:
    """What kill.json says of its own moment, twice: each time as text and as epoch seconds, and their order.

    ``at`` and ``killSentAt`` are one text; each text is its epoch's, to the
    millisecond; ``frozenMs`` is the freeze's length; and the moment was
    seen, then the window opened (``since``), then the freeze, the kill sent
    and its return, in that order.  A field that is absent is not compared
    (the other checks say what a kill needs); one of the wrong shape is.
    """
    f = KillFolder.KILL
    said: list[str] = []
    if "killSentAt" in obj and obj.get("killSentAt") != obj.get("at"):
        said.append(f"{f}: killSentAt is not at: one moment, written twice")
    times: dict[str, float] = {}
    for text, number, name in (
        ("at", "killSentEpoch", "the kill"),
        ("frozenAt", "frozenEpoch", "the freeze"),
        ("triggerSeenAt", "triggerSeenEpoch", "the trigger seen"),
    ):
        if number not in obj or _unset(obj.get(number)):
            continue
        written, exact = _time(obj, text, number)
        if exact is None or (text in obj and written is None):
            said.append(f"{f}: {number} or {text} is not a time")
            continue
        times[number] = exact
        if written is not None and not (written - SLACK <= exact < written + WRITTEN_MS + SLACK):
            said.append(f"{f}: {text} and {number} are not one time ({name})")
    frozen_ms = obj.get("frozenMs")
    if "frozenMs" in obj and "frozenEpoch" in times and "killSentEpoch" in times:
        length = (times["killSentEpoch"] - times["frozenEpoch"]) * 1000
        if not (isinstance(frozen_ms, (int, float)) and not isinstance(frozen_ms, bool) and math.isfinite(frozen_ms)):
            said.append(f"{f}: frozenMs is not a number")
        elif abs(frozen_ms - length) > 0.01:
            said.append(f"{f}: frozenMs is not killSentEpoch - frozenEpoch")
    for key in ("sinceEpoch", "killReturnedEpoch"):
        value = epoch(obj.get(key))
        if value is not None:
            times[key] = value
        elif key in obj and not _unset(obj.get(key)):
            said.append(f"{f}: {key} is not a time")
    order = [k for k in ORDER if k in times]
    for before, after in itertools.pairwise(order):
        if times[after] < times[before] - WRITTEN_MS:
            said.append(f"{f}: {after} comes before {before}: {ORDER_SAYS}")
            break
    return said


# A kill's times in the order they happen (§6.9: since <= the freeze <= killSentEpoch).
ORDER = ("triggerSeenEpoch", "sinceEpoch", "frozenEpoch", "killSentEpoch", "killReturnedEpoch")
ORDER_SAYS = "the moment is seen, the window opens, the controller is frozen, then killed"
