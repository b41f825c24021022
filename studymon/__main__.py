"""``python -m studymon``: the same command line as ``studymon``."""

import sys

from studymon.tui.cli import main

if __name__ == "__main__":
    sys.exit(main())
