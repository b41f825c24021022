"""A word with the file system's server: one JSON object a line, each way, over a Unix socket outside the mount.

The server answers each request (an object with ``op``) with one object; a
request it cannot read gets ``{"error": ...}``.  The socket lives in a folder
of its own, never in the study's evidence folder.
"""

from __future__ import annotations

import contextlib
import json
import socket
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

Handler = Callable[[dict[str, Any]], dict[str, Any]]
LINE_MAX = 1 << 20  # a request longer than this is no request


def serve(path: Path, handle: Handler) -> socket.socket:
    """Listen at ``path`` and answer each request with ``handle``, each connection in a thread of its own."""
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(str(path))
    listener.listen(8)

    def answer(conn: socket.socket) -> None:
        with conn, conn.makefile("rwb") as stream:
            for raw in iter(lambda: stream.readline(LINE_MAX), b""):
                try:
                    request = json.loads(raw)
                    reply = handle(request) if isinstance(request, dict) else {"error": "a request is an object"}
                except ValueError as exc:
                    reply = {"error": f"not JSON: {exc}"}
                stream.write(json.dumps(reply).encode() + b"\n")
                stream.flush()

    def accept() -> None:
        while True:
            try:
                conn, _ = listener.accept()
            except OSError:  # closed: the server is going away
                return
            threading.Thread(target=answer, args=(conn,), daemon=True).start()

    threading.Thread(target=accept, name="fs-control", daemon=True).start()
    return listener


def ask(path: Path, op: str, timeout: float = 10.0, **fields: Any) -> dict[str, Any]:
    """One request, its reply; OSError when the server does not answer (gone, or not there yet)."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as conn:
        conn.settimeout(timeout)
        conn.connect(str(path))
        conn.sendall(json.dumps({"op": op, **fields}).encode() + b"\n")
        with conn.makefile("rb") as stream:
            raw = stream.readline(LINE_MAX)
    if not raw:
        raise ConnectionError(f"the file system's server at {path} closed without an answer to {op}")
    reply: dict[str, Any] = json.loads(raw)
    return reply


def close(listener: socket.socket, path: Path) -> None:
    listener.close()
    with contextlib.suppress(FileNotFoundError):
        path.unlink()
