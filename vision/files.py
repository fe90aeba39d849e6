"""Files written whole or not at all, and files a user names read with a bound.

Why write through a rename: a dataset, a teach folder or a model is read by other commands while,
or after, it is written; a crash or Ctrl-C half-way through a file must leave the old file or the
new one, never half of one. Writing a temporary file in the same folder and renaming it over the
target gives that on every POSIX file system (a rename within one file system is atomic).

Why read through :func:`read_bounded`: a path on the command line or in a config can name
something that is not a file. ``/dev/zero`` never ends (a plain read grows until the out-of-memory
killer comes), a FIFO blocks the open until someone writes, a directory or a socket cannot be read
at all. Only a regular file is opened, without waiting for a writer, and at most a stated number
of bytes is read from it.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

__all__ = ["read_bounded", "write_atomic"]

#: What each kind of file that is not a regular file is called in an error.
_KINDS = (
    (stat.S_ISDIR, "a directory"),
    (stat.S_ISFIFO, "a FIFO"),
    (stat.S_ISSOCK, "a socket"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
)


def _not_regular(mode: int, path: str | Path) -> OSError | None:
    if stat.S_ISREG(mode):
        return None
    kind = next((name for test, name in _KINDS if test(mode)), "not a regular file")
    return OSError(errno.EINVAL, f"not a regular file ({kind})", str(path))


def read_bounded(path: str | Path, max_bytes: int) -> bytes:
    """The bytes of the regular file at ``path``; an ``OSError`` for anything else.

    Refused, each with an ``OSError`` whose ``strerror`` says why (so callers that already report
    ``OSError`` need nothing new): a path that is not a regular file (directory, FIFO, socket,
    device; checked before opening, then again on the open file, which is opened non-blocking so a
    FIFO swapped in meanwhile cannot hang it), and a file longer than ``max_bytes`` (``EFBIG``,
    whether its size says so or it grows while read).
    """
    problem = _not_regular(os.stat(path).st_mode, path)
    if problem is not None:
        raise problem
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOCTTY", 0) | getattr(os, "O_CLOEXEC", 0))
    try:
        info = os.fstat(fd)
        problem = _not_regular(info.st_mode, path)
        if problem is not None:
            raise problem
        if info.st_size > max_bytes:
            raise OSError(errno.EFBIG, f"{info.st_size} bytes, more than the {max_bytes} read", str(path))
        chunks, total = [], 0
        while total <= max_bytes:
            chunk = os.read(fd, min(1 << 20, max_bytes + 1 - total))
            if not chunk:
                break
            chunks.append(chunk)
            total += len(chunk)
        if total > max_bytes:
            raise OSError(errno.EFBIG, f"more than the {max_bytes} bytes read", str(path))
        return b"".join(chunks)
    finally:
        os.close(fd)


def write_atomic(path: Path, data: bytes) -> None:
    """Write through a temporary file in the same folder, then rename: readers see all or nothing."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        with open(tmp, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
