"""A study whose model service is down before its first diagnosis run, honest to the contract.

It is the reference study, except that before round 1's diagnosis stage it
asks the model service whether it is up, and the first time it asks the
service is down: it writes ``serviceError`` (stage ``diagnosis``, round 1)
and exits 75 before any run is planned.  ``--resume`` replays that outage as
the retry it is, finds the service up, and goes on like the reference study.
(The reference study's own scheduled outage, ``serviceFailAtRound``, comes in
a proposal stage, after that round's diagnosis run has started.)

    python3 tests/doubles/early_outage_study.py --config C --dir D [--resume]
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from studymon.refstudy.controller import Experiment, Study, TemporaryFailure, main  # noqa: E402

MESSAGE = "model service unreachable before round 1 (scheduled outage)"


class EarlyOutageStudy(Study):
    """The reference study with an outage of its model service before the first diagnosis."""

    def diagnosis(self, round_: int) -> list[Experiment]:
        if round_ == 1:
            self.service_up()
        return super().diagnosis(round_)

    def service_up(self) -> None:
        """Down at the first attempt (exit 75), up at the next: deterministic, so a resume replays it."""
        attempt = 0
        while True:
            attempt += 1
            self.checkpoint()
            if attempt > 1:
                return
            live = self.journal.live
            self.journal.step("serviceError", {"stage": "diagnosis", "round": 1, "message": MESSAGE})
            if live:
                raise TemporaryFailure(MESSAGE)


if __name__ == "__main__":
    sys.exit(main(study_class=EarlyOutageStudy))
