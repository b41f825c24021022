"""Build the local Docker image the reference study runs its containers in.

No registry is reachable on the machines studymon runs on, so the image is made
locally: a tarball holding a static ``busybox`` and its applet links, imported
with ``docker import``.  ``python -m studymon.refstudy.image`` (or ``studymon image``)
builds it; it does nothing when the image is there already.
"""

from __future__ import annotations

import argparse
import io
import os
import shutil
import subprocess
import sys
import tarfile

IMAGE = "studymon/refstudy:1"

# Applets the run payload and a shell user need; each is a hard link to busybox.
APPLETS = [
    "sh",
    "awk",
    "sleep",
    "cat",
    "echo",
    "printf",
    "ls",
    "date",
    "sha256sum",
    "env",
    "true",
    "false",
    "seq",
    "expr",
]


class ImageError(RuntimeError):
    """The image cannot be built here; the message says why and how to fix it."""


def find_static_busybox() -> str:
    """Path of a statically linked busybox on this machine."""
    for candidate in (os.environ.get("STUDYMON_BUSYBOX"), "/bin/busybox", "/usr/bin/busybox", shutil.which("busybox")):
        if candidate and os.path.isfile(candidate):
            with open(candidate, "rb") as fh:
                head = fh.read(1 << 20)
            # A dynamic ELF names its interpreter; a static one has no PT_INTERP.
            if b"/lib64/ld-linux" in head or b"/lib/ld-linux" in head or b"ld-musl" in head:
                continue
            return candidate
    raise ImageError(
        "no static busybox found: install it (Debian: apt-get install -y busybox-static) "
        "or set STUDYMON_BUSYBOX to its path"
    )


def image_tarball(busybox: str) -> bytes:
    """A root file system: /bin/busybox plus its applet links, and /tmp."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        for d in ("bin", "tmp", "work"):
            info = tarfile.TarInfo(d)
            info.type = tarfile.DIRTYPE
            info.mode = 0o1777 if d == "tmp" else 0o755
            tar.addfile(info)
        tar.add(busybox, arcname="bin/busybox")
        for applet in APPLETS:
            info = tarfile.TarInfo(f"bin/{applet}")
            info.type = tarfile.LNKTYPE
            info.linkname = "bin/busybox"
            info.mode = 0o755  # a link entry's mode is applied to the shared inode
            tar.addfile(info)
    return buf.getvalue()


def image_present(image: str = IMAGE) -> bool:
    import docker

    client = docker.from_env(timeout=10)
    try:
        client.images.get(image)
    except docker.errors.ImageNotFound:
        return False
    else:
        return True
    finally:
        client.close()


def build_image(image: str = IMAGE, force: bool = False) -> str:
    """Import the image unless it is present; returns its name."""
    if not force and image_present(image):
        return image
    data = image_tarball(find_static_busybox())
    docker = shutil.which("docker")
    if docker is None:
        raise ImageError("no docker command on PATH: install Docker's command line, or use the process backend")
    proc = subprocess.run(
        [docker, "import", "--change", "ENV PATH=/bin", "--change", 'CMD ["/bin/sh"]', "-", image],
        input=data,
        capture_output=True,
        check=False,  # its stderr makes the message
    )
    if proc.returncode != 0:
        raise ImageError(f"docker import failed: {proc.stderr.decode(errors='replace').strip()}")
    return image


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m studymon.refstudy.image", description=__doc__.splitlines()[0])
    parser.add_argument("--force", action="store_true", help="import again even when the image exists")
    parser.add_argument("--image", default=IMAGE, help=f"image name (default {IMAGE})")
    args = parser.parse_args(argv)
    try:
        print(build_image(args.image, args.force))
    except ImageError as exc:
        print(f"studymon image: {exc}", file=sys.stderr)
        return 2
    except Exception as exc:  # noqa: BLE001 - whatever stops the Docker SDK (no engine, a refused socket) gets this one line
        print(
            f"studymon image: cannot reach a Docker engine ({exc}); start one or use the process backend",
            file=sys.stderr,
        )
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
