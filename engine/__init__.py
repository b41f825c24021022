"""The launch-and-check engine of studymon.

It launches studies, tails their ledgers, samples the machine, performs kills
and resumes, writes the evidence folder and judges the checks.  It emits typed
events that a front end (the headless printer, the Textual console) renders.
It never imports Textual: a test proves it.
"""
