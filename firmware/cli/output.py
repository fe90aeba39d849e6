"""Text output that survives any terminal: degrade the characters, never lose the result.

``check`` and ``odds`` print ``→``, ``≈`` and ``−``; on a terminal whose encoding cannot hold
them (``PYTHONIOENCODING=ascii``, a latin-1 locale, a serial console) Python raises
``UnicodeEncodeError`` *after* the dice were rolled, and the roll is lost. :func:`safe_streams`
makes stdout and stderr write such characters as ASCII look-alikes (``->``, ``~``, ``-``,
``^2``) and anything else as ``?``, so every line still comes out.
"""

from __future__ import annotations

import codecs
import sys
import unicodedata
from contextlib import suppress
from typing import TextIO

__all__ = ["ERRORS", "TRANSLITERATIONS", "safe_streams", "transliterate"]

#: The codec error handler :func:`safe_streams` installs.
ERRORS = "dicetower-ascii"

#: ASCII stand-ins for the characters the CLI prints; others fall back to their NFKD form, then "?".
TRANSLITERATIONS: dict[str, str] = {
    "\u2192": "->",  # →
    "\u2190": "<-",  # ←
    "\u21d2": "=>",  # ⇒
    "\u2248": "~",  # ≈
    "\u2212": "-",  # − (minus sign)
    "\u2013": "-",  # –
    "\u2014": "--",  # —
    "\u2264": "<=",  # ≤
    "\u2265": ">=",  # ≥
    "\u2260": "!=",  # ≠
    "\u00d7": "x",  # ×
    "\u00b7": ".",  # ·
    "\u2022": "*",  # •
    "\u2026": "...",  # …
    "\u00b1": "+/-",  # ±
    "\u221e": "inf",  # ∞
    "\u00b2": "^2",  # ²
    "\u00b3": "^3",  # ³
    "\u00b9": "^1",  # ¹
    "\u2018": "'",
    "\u2019": "'",
    "\u201c": '"',
    "\u201d": '"',
    "\u00a0": " ",
    "\u2009": " ",
    "\u202f": " ",
}


def transliterate(text: str, encoding: str = "ascii") -> str:
    """``text`` with every character ``encoding`` cannot hold replaced by its stand-in."""
    out = []
    for ch in text:
        try:
            ch.encode(encoding)
            out.append(ch)
        except UnicodeEncodeError:
            out.append(_stand_in(ch, encoding))
    return "".join(out)


def _stand_in(ch: str, encoding: str) -> str:
    if ch in TRANSLITERATIONS:
        return TRANSLITERATIONS[ch]
    decomposed = "".join(c for c in unicodedata.normalize("NFKD", ch) if not unicodedata.combining(c))
    try:
        return decomposed.encode(encoding).decode(encoding) if decomposed else "?"
    except UnicodeEncodeError:
        return "?"


def _handler(exc: UnicodeError) -> tuple[str, int]:
    if not isinstance(exc, UnicodeEncodeError):
        raise exc
    encoding = exc.encoding or "ascii"
    return "".join(_stand_in(ch, encoding) for ch in exc.object[exc.start : exc.end]), exc.end


codecs.register_error(ERRORS, _handler)


def safe_streams(*streams: TextIO) -> None:
    """Make each stream (default stdout and stderr) transliterate what its encoding cannot hold.

    Streams that cannot be reconfigured (a test's capture buffer, a replaced ``sys.stdout``)
    are left as they are. stderr's default handler (``backslashreplace``) would not fail, but
    ``\\u2192`` reads worse than ``->``, so it is replaced too.
    """
    for stream in streams or (sys.stdout, sys.stderr):
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is None or getattr(stream, "errors", None) == ERRORS:
            continue
        with suppress(ValueError, OSError, TypeError, AttributeError):
            reconfigure(errors=ERRORS)
