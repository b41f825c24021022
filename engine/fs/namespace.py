"""A mount namespace of the study's own: the controller sees the mount over ``OUT/study``, nobody else does.

The console, the judge and any tool the operator runs read the study's files
beneath, where they always are, never through the file system: a reader
there cannot be stuck behind a held write, nor keep the mount alive after the
study.  The keeper unshares its mount namespace (private, so nothing mounted
in it reaches the machine's) before it starts the server and the controller;
the mount is gone with the last process in the namespace, whatever becomes of
studymon.
"""

from __future__ import annotations

import ctypes
import os

CLONE_NEWNS = 0x00020000
MS_REC = 0x4000
MS_PRIVATE = 0x40000


def private_mounts() -> str | None:
    """Move this process into a mount namespace of its own, private from the machine's; why not, when it cannot."""
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.unshare(CLONE_NEWNS) != 0:
        return f"cannot have mounts of its own here ({os.strerror(ctypes.get_errno())}): exact points need root"
    if libc.mount(b"none", b"/", None, MS_REC | MS_PRIVATE, None) != 0:
        return f"cannot keep its mounts private ({os.strerror(ctypes.get_errno())})"
    return None
