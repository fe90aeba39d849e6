"""Hand the memory a fit has freed back to the system, so a fit's resident size follows what it holds.

Why: glibc keeps freed heap memory for reuse rather than returning it. Once a fit has freed one
large array, glibc raises its threshold for mapping arrays apart from the heap, and the many
mid-sized arrays that follow (a photo's crops and features, a few hundred kilobytes each) land on
the heap; freed, they stay resident. After a die's features are let go, several hundred megabytes
of a 700-roll fit stayed resident that way, counted against a 2 GB Pi. ``malloc_trim`` returns
the free pages. Where the C library is not glibc it does nothing.
"""

from __future__ import annotations

import ctypes
import ctypes.util
from functools import cache

__all__ = ["return_freed_memory"]


@cache
def _malloc_trim() -> object | None:
    name = ctypes.util.find_library("c")
    if name is None:
        return None
    try:
        return ctypes.CDLL(name).malloc_trim
    except (OSError, AttributeError):  # no such library, or not glibc
        return None


def return_freed_memory() -> None:
    """Return the heap's free pages to the system (glibc's ``malloc_trim(0)``); elsewhere nothing."""
    trim = _malloc_trim()
    if trim is not None:
        trim(0)  # type: ignore[operator]
