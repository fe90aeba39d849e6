"""Argument types more than one subcommand parses the same way.

Each is an argparse ``type=``: it returns the value or raises
:class:`argparse.ArgumentTypeError`, which argparse prints as ``argument --x: ...``.
"""

from __future__ import annotations

import argparse

__all__ = ["positive_int"]


def positive_int(text: str) -> int:
    """A whole number of at least 1 (``--limit 50``)."""
    try:
        n = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
    if n < 1:
        raise argparse.ArgumentTypeError("must be at least 1")
    return n
