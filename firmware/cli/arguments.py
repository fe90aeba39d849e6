"""Argument types more than one subcommand parses the same way.

Each is an argparse ``type=``: it returns the value or raises
:class:`argparse.ArgumentTypeError`, which argparse prints as ``argument --x: ...``.
"""

from __future__ import annotations

import argparse

__all__ = ["positive_int", "rate"]


def positive_int(text: str) -> int:
    """A whole number of at least 1 (``--limit 50``)."""
    try:
        n = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
    if n < 1:
        raise argparse.ArgumentTypeError("must be at least 1")
    return n


def rate(text: str) -> float:
    """A rate from 0 to 1, both included (``--max-wrong 0.01``)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a rate from 0 to 1, got {text!r}") from None
    if not 0.0 <= value <= 1.0:
        raise argparse.ArgumentTypeError(f"expected a rate from 0 to 1, got {text}")
    return value
