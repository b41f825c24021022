"""studymon: an operator console for long-running automated research studies.

It launches studies, watches their ledgers and containers, kills and resumes
them on request and judges, with evidence, whether they recovered.  The parts:

- :mod:`studymon.engine`: the launch-and-check engine (no Textual inside);
- :mod:`studymon.tui`: the command line, the headless printer and the console;
- :mod:`studymon.widgets`: the console's widgets;
- :mod:`studymon.refstudy`: the reference study, which honours the contract.
"""

__version__ = "0.1.0"
