"""The judge: every check of a study, from its evidence folder alone.

The modules, in the order a judgement runs:

* :mod:`.read` reads ``OUT`` through :mod:`studymon.engine.folder` and
  :mod:`studymon.engine.safefile` into the facts of :mod:`.facts` (the
  container events into the tally of :mod:`.events`);
* :mod:`.study`, :mod:`.kill` and :mod:`.target` hold the checks, each a
  function of facts already read (nothing there touches a file), giving a
  :class:`~.verdict.Check`;
* :mod:`.report` puts them together (:func:`judge`), :mod:`.table` shows them.

The checks and what makes each hold are in ``docs/contract.md``.
"""

from studymon.engine.judge.report import Judgement, NotEvidence, judge
from studymon.engine.judge.verdict import Check, overall

__all__ = ["Check", "Judgement", "NotEvidence", "judge", "overall"]
