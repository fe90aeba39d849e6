"""Run an OpenCV decode with its library chatter captured instead of printed.

libjpeg, libpng and libtiff report damage by writing to the process's stderr (file
descriptor 2) from C, and OpenCV logs ``[ERROR:0@0.1] global grfmt_png.cpp ...`` lines the
same way: none of it passes through Python's ``sys.stderr``, so it reaches the user's terminal
beside our own one-line error. :func:`captured_stderr` points descriptor 2 at a temporary file
for the duration of a call and hands the text back, so the caller can both keep the terminal
clean and use the text: libjpeg's "Corrupt JPEG data" warning is the only sign that a photo
was decoded from damaged data (it still returns a full-size picture).

Descriptor 2 is process-wide, so captures are serialised by a lock; what another thread writes
to descriptor 2 inside that window lands in the capture (a decode takes milliseconds).
"""

from __future__ import annotations

import os
import sys
import tempfile
import threading
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from typing import IO

import cv2

__all__ = ["Captured", "captured_stderr"]

#: Longest stretch of captured text kept (a decoder that loops on warnings writes a lot).
MAX_CAPTURED_BYTES = 64 * 1024

_lock = threading.Lock()


class Captured:
    """The text written to descriptor 2 during the ``with`` block (set when it ends)."""

    __slots__ = ("text",)

    def __init__(self) -> None:
        self.text = ""


_sink: IO[bytes] | None = None


def _open_sink() -> IO[bytes]:
    """One temporary file reused by every capture (opening one per decode costs more than the check)."""
    global _sink
    if _sink is None or _sink.closed:
        _sink = tempfile.TemporaryFile()  # noqa: SIM115 - kept open for the process, closed at exit
    _sink.seek(0)
    _sink.truncate()
    return _sink


@contextmanager
def captured_stderr() -> Iterator[Captured]:
    """Capture descriptor 2 and silence OpenCV's logger for the duration of the block."""
    out = Captured()
    with _lock:
        sink = _open_sink()
        with suppress(OSError, ValueError, AttributeError):
            sys.stderr.flush()
        saved = os.dup(2)
        level = cv2.utils.logging.getLogLevel()
        cv2.utils.logging.setLogLevel(cv2.utils.logging.LOG_LEVEL_SILENT)
        os.dup2(sink.fileno(), 2)
        try:
            yield out
        finally:
            os.dup2(saved, 2)
            os.close(saved)
            cv2.utils.logging.setLogLevel(level)
            sink.seek(0)
            out.text = sink.read(MAX_CAPTURED_BYTES).decode("utf-8", "replace")
