"""Every ✗ of every corpus case states its proofs, and they are the ones kept in ``tests/corpus_proofs.json``.

A proof is what a reader of the report is given to see why a check failed (§6.8.3: each contradicting
event with its file and line, "Let … Then … a contradiction"): its words are output, held here as the
details are held by the corpus test.  A change to a proof's words, or to the lines it names, fails this
test; when the change is meant, ``STUDYMON_WRITE_PROOFS=1 python3 -m pytest tests/test_proofs.py`` writes
the file again, and its diff is the change to read.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from studymon.engine.judge import judge
from studymon.engine.judge.facts import LedgerFacts
from studymon.engine.judge.study import kill_triggered
from tests.corpus import CORPUS, write
from tests.test_checks import STUDY, _at_container, _die_of, armed, evidence, fired_line, one_kill

# A kill at a container point, each way it can be wrong (tests/test_checks.py holds their details): the proofs
# killTriggered states for each.  (point, its triggerEvent, the fired line's run)
CONTAINER_POINTS = {
    "no triggerEvent": ("container:die/diagnosis", None, "d1"),
    "an event of another action": ("container:die", _die_of("d1", action="start"), "d1"),
    "not a run container of the study": ("container:die", _die_of("d1", name="other-d1"), "d1"),
    "the fired line names another run": ("container:die", _die_of("d1"), "d2"),
    "a run of another purpose": ("container:die/ablation", _die_of("d1"), "d1"),
    "the point had passed": ("container:start", _die_of("d1", action="start"), "d1"),
    "no such event": ("container:die", {"Type": "container", "Action": "die"}, "d1"),
}

KEPT = Path(__file__).with_name("corpus_proofs.json")


def proofs(tmp: Path) -> dict[str, dict[str, list[str]]]:
    """Per corpus case, per check that does not hold, the texts of its proofs; then each wrong container point's."""
    said: dict[str, dict[str, list[str]]] = {}
    for n, case in enumerate(CORPUS):
        out = write(case.build(), tmp / f"c{n}")
        said[case.name] = {
            f"{c.scope} · {c.name}": [p.text for p in c.proofs] for c in judge(out).checks if c.ok is False
        }
    for name, (point, event, run) in CONTAINER_POINTS.items():
        files = one_kill()
        ev, acc = evidence(files)
        _at_container(ev, fired_line(files), point, event, run)
        c = kill_triggered(armed(files), [ev], acc, LedgerFacts(), True, STUDY)
        assert c is not None and c.ok is False, name
        said[f"container point: {name}"] = {f"{c.scope} · {c.name}": [p.text for p in c.proofs]}
    return said


def test_every_failed_check_of_the_corpus_states_its_kept_proofs(tmp_path: Path) -> None:
    got = proofs(tmp_path)
    if os.environ.get("STUDYMON_WRITE_PROOFS") == "1":
        KEPT.write_text(json.dumps(got, indent=1, ensure_ascii=False, sort_keys=True) + "\n", encoding="utf-8")
    kept = json.loads(KEPT.read_text(encoding="utf-8"))
    # Every ✗ is proven (a check that fails says why, with the lines), and as kept.
    unproven = [(case, check) for case, checks in got.items() for check, texts in checks.items() if not texts]
    assert not unproven, f"checks that fail without a proof: {unproven[:10]}"
    assert set(got) == set(kept), "corpus cases added or gone: write the file again (see the docstring)"
    for case in got:
        assert got[case] == kept[case], case
