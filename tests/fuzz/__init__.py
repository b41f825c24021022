"""A fuzzer of the judge: real sound evidence folders, changed one or two things at a time, judged twice.

The seeds are folders studymon itself writes (:mod:`.seeds`): the reference
study killed at several points, on the process runtime and on Docker, killed
twice, crashed from outside and resumed, and a small campaign; each passes the
product's judge.  Hypothesis picks a seed and one or two changes to it from
the seed's own files and lines (:mod:`.strategies`, :mod:`.mutators`); the
change is a :class:`~.recipe.Recipe` (seed, mutator, parameters) that replays
exactly.  Each mutant is judged by the product's judge and by the oracle
written apart (``tests.oracle``, once it imports), each in a process of its
own under a timeout (:mod:`.judges`), and every disagreement, exception,
timeout or slow judgement is a finding (:mod:`.compare`), kept as a case in
``tests/fuzz/pending/`` until someone settles it into ``tests/fuzz/corpus/``
(:mod:`.cases`).  :mod:`.harness` runs the loop; ``python3 -m tests.fuzz``
(``.ci/fuzz``) runs it for a number of minutes.
"""
