"""Text output that survives any terminal: degrade the characters, never lose the result.

``check`` and ``odds`` print ``→``, ``≈`` and ``−``; on a terminal whose encoding cannot hold
them (``PYTHONIOENCODING=ascii``, a latin-1 locale, a serial console) Python raises
``UnicodeEncodeError`` *after* the dice were rolled, and the roll is lost. :func:`safe_streams`
makes stdout and stderr write such characters as ASCII look-alikes (``->``, ``~``, ``-``,
``^2``) and anything else as ``?``, so every line still comes out.

Text that came from a user or from storage (a path, a host, a roll log's fields) can hold
characters a terminal acts on: ESC and the 8-bit CSI (U+009B) start escape sequences, BEL rings,
bidi overrides reorder what follows. :class:`EscapedWriter` writes a stream of lines with those
shown escaped, as :func:`~dicetower.rules.errors.printable` shows them in error messages.
"""

from __future__ import annotations

import codecs
import io
import json
import sys
import unicodedata
from contextlib import suppress
from typing import TextIO

from ...rules.errors import printable

__all__ = ["ERRORS", "TRANSLITERATIONS", "EscapedWriter", "escape_controls", "safe_streams", "transliterate"]

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


#: What lines are made of: kept as they are by :func:`escape_controls`.
_LAYOUT = str.maketrans("", "", "\n\r\t")


def escape_controls(text: str, *, json_escapes: bool = False) -> str:
    """``text`` with every control or format character but newline, return and tab escaped.

    ``json_escapes`` writes them as JSON does (``\\u009b``), so a JSON line stays JSON and reads
    back to the same string; otherwise as :func:`~dicetower.rules.errors.printable` does (``\\x9b``).
    """
    if text.translate(_LAYOUT).isprintable():  # the common case, at C speed
        return text
    out = []
    for ch in text:
        shown = ch if ch in "\n\r\t" or ch.isprintable() else printable(ch)
        if shown != ch and json_escapes:
            shown = json.dumps(ch)[1:-1]
        out.append(shown)
    return "".join(out)


class EscapedWriter(io.TextIOBase):
    """A text stream that writes to ``stream`` through :func:`escape_controls`.

    For writers that take a stream (``csv.writer``, an export): what they write reaches the
    terminal or the file with no character a terminal would act on.
    """

    def __init__(self, stream: TextIO, *, json_escapes: bool = False) -> None:
        super().__init__()
        self._stream = stream
        self._json = json_escapes

    def writable(self) -> bool:
        return True

    def write(self, text: str) -> int:
        self._stream.write(escape_controls(text, json_escapes=self._json))
        return len(text)

    def flush(self) -> None:
        self._stream.flush()
