"""``python -m studymon``: the same command line as ``studymon``."""

import sys

if __name__ == "__main__":
    if sys.argv[1:2] == ["runtime"]:
        # A study calls this for every look at its runs ($STUDYMON_RUNTIME): the runtime's
        # command line alone is loaded, not the console's (half the start-up time).
        from studymon.engine import runtime_main

        sys.exit(runtime_main(sys.argv[2:]))
    if sys.argv[1:2] == ["fs"]:
        # The server of a study's file system (studymon.engine.fs): the engine's part alone.
        from studymon.engine import fs_main

        sys.exit(fs_main(sys.argv[2:]))
    from studymon.tui.cli import main

    sys.exit(main())
