"""toolong's ``tl`` with its watcher's start-up race fixed, for ``many_studies.py``'s baseline.

toolong 1.5's poll watcher (``toolong/poll_watcher.py``) walks its dict of
open files in its own thread while the app still adds a tab's file to it; with
many tabs the walk meets a dict that changed size, raises, and the thread ends:
that toolong shows every file but follows none.  On a fast machine it happens
at almost every start with 48 tabs.  Here the walk goes over a copy of the
dict's items taken each time round (48 pairs every pass), and toolong is
otherwise its own: run this file with toolong's interpreter, the files as its
arguments, as ``tl FILE...``.
"""

from __future__ import annotations

import sys
from typing import Any

from toolong import watcher
from toolong.cli import run


class _Files(dict):  # type: ignore[type-arg]
    """toolong's watched files, walked over a copy so that a file added meanwhile does not end the walk."""

    def items(self) -> Any:
        return list(super().items())


_init = watcher.WatcherBase.__init__


def _init_with_copy(self: watcher.WatcherBase) -> None:
    _init(self)
    self._file_descriptors = _Files()


watcher.WatcherBase.__init__ = _init_with_copy  # type: ignore[method-assign]

if __name__ == "__main__":
    sys.argv[0] = "tl"
    sys.exit(run())
