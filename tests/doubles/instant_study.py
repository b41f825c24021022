"""The reference study whose runs exit at once, and whose controller works a moment before it waits for each.

A run's payload takes no time (``diagnosisSeconds`` and ``ablationSeconds``
0), so its container has nearly always exited by the time the console's kill
at d1's ``runStarted`` lands: the snapshot before the kill shows it exited,
and Docker stamps its ``die`` 10-60 ms after ``FinishedAt``, inside the
kill's window.  A sound study; v3 §6.4 says the judge must pass it.

Between writing ``runStarted`` and waiting for the container, the controller
does its own bookkeeping for :data:`WORK` seconds (as real controllers log,
checkpoint or poll on a period): without it the result can be written before
the console has even seen the start, and the kill is missed, which says
nothing about the judge.

    python3 tests/doubles/instant_study.py --config C --dir D [--resume]
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from studymon.refstudy.controller import RunPlan, Study, main  # noqa: E402

WORK = 0.25


class InstantStudy(Study):
    """The reference study, with a moment's work before each wait for a run's container."""

    def await_container(self, plan: RunPlan) -> tuple[int, dict[str, float]]:
        time.sleep(WORK)  # stands in for the controller's own work between starting a run and waiting for it
        return super().await_container(plan)


if __name__ == "__main__":
    sys.exit(main(study_class=InstantStudy))
