"""studymon's front ends: the command line, the headless printer and the Textual console."""
