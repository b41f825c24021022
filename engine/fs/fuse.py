"""The FUSE binding, loaded once, and whether this machine can mount at all.

The binding is mfusepy (ctypes over libfuse; no compiler, a path-based API):
it looks for libfuse 2 before libfuse 3 unless told, and libfuse 2 refuses to
mount over a folder that holds files, so libfuse 3 is named before it loads.
``STUDYMON_NO_FUSE`` set (to anything) makes this machine one without FUSE:
studymon then runs as it did before the mount, and says so once.
"""

from __future__ import annotations

import ctypes.util
import os
import shutil
from typing import Any

NO_FUSE_ENV = "STUDYMON_NO_FUSE"
DEVICE = "/dev/fuse"

os.environ.setdefault("FUSE_LIBRARY_NAME", "fuse3")

try:  # the binding loads libfuse as it is imported: a machine without it gets its reason from missing()
    import mfusepy as _binding  # type: ignore[import-untyped]
except (ImportError, OSError) as exc:  # the binding raises OSError (EnvironmentError) when libfuse is missing
    _binding = None
    _WHY_NOT = f"the FUSE binding cannot be loaded ({exc})"
else:
    _WHY_NOT = ""

FUSE: Any = getattr(_binding, "FUSE", None)
Operations: Any = getattr(_binding, "Operations", object)
FuseOSError: Any = getattr(_binding, "FuseOSError", OSError)


def caller_pid() -> int:
    """The process (a thread of it) whose call the file system is serving now."""
    return int(_binding.fuse_get_context()[2]) if _binding is not None else 0


def missing() -> str | None:
    """Why this machine cannot serve the study's file system (None: it can), and what to install."""
    if os.environ.get(NO_FUSE_ENV):
        return f"{NO_FUSE_ENV} is set"
    if not os.path.exists(DEVICE):
        return f"{DEVICE} is missing (a container needs --device /dev/fuse and CAP_SYS_ADMIN)"
    if _binding is None:
        # find_library runs ldconfig: asked only to say what to install, never on a keeper's way to a mount.
        if ctypes.util.find_library("fuse3") is None:
            return "libfuse 3 is not installed (Debian: apt-get install libfuse3-3 fuse3)"
        return _WHY_NOT
    if shutil.which("fusermount3") is None:
        return "fusermount3 is not installed (Debian: apt-get install fuse3)"
    return None
