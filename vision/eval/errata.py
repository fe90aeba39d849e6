"""Errata for a labelled folder: labels a person looked at again and found wrong.

Why a separate file and not an edited manifest: the shared datasets are read-only and are
other people's work, and a score against corrected labels is a different figure from a score
against the published ones. ``dicetower eval`` reports the published labels unless it is given
``--errata DIR``, and then it says how many labels it changed, so the two figures are never
confused.

Format: ``DIR/<folder name>.jsonl``, one correction per line::

    {"image": "images/IMG_1.jpg", "die": 3, "label": 2, "face": 3, "why": "three pips plainly"}

- ``image``: as written in the folder's manifest; ``die``: the die's 0-based position in
  that photo's ``dice`` list;
- ``label``: the face the manifest gives (checked: a correction written for another version
  of the manifest is refused, not applied to whatever die now sits at that position);
- ``face``: the face the photo shows, or ``null`` when no face can be told (a cocked die,
  a die hidden under another): the die is then scored as ``cocked``, where "unreadable" is
  the right answer;
- ``why``: what the person saw, for the next person to check.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from ..errors import VisionError
from ..files import read_bounded
from ..manifest import ManifestEntry

__all__ = [
    "MAX_ERRATA",
    "MAX_ERRATA_BYTES",
    "ErrataError",
    "Erratum",
    "apply_errata",
    "errata_for",
    "read_errata",
]

#: More corrections than this in one file is not an errata list; refuse it (bounds the read).
MAX_ERRATA = 10_000
#: An errata file is at most this long (10,000 lines of a few hundred bytes fit many times over).
MAX_ERRATA_BYTES = 16 * 2**20


class ErrataError(VisionError, ValueError):
    """An errata file that cannot be used; names the file and line."""


@dataclass(frozen=True)
class Erratum:
    image: str  #: the manifest's ``image`` field
    die: int  #: 0-based position in that photo's ``dice``
    label: int  #: the face the manifest gives
    face: int | None  #: the face the photo shows; None: none can be told (scored as cocked)
    why: str
    line: int


def _parse(raw: str, lineno: int, source: Path) -> Erratum:
    try:
        obj: Any = json.loads(raw)
        if not isinstance(obj, dict):
            raise ValueError("expected a JSON object")
        unknown = set(obj) - {"image", "die", "label", "face", "why"}
        if unknown:
            raise ValueError(f"unknown keys {sorted(unknown)}")
        image, die, label, face, why = obj["image"], obj["die"], obj["label"], obj["face"], obj["why"]
        if not isinstance(image, str) or not image:
            raise ValueError("image must be the manifest's non-empty image path")
        for name, value in (("die", die), ("label", label)):
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise ValueError(f"{name} must be a non-negative integer, got {value!r}")
        if face is not None and (isinstance(face, bool) or not isinstance(face, int)):
            raise ValueError(f"face must be an integer or null, got {face!r}")
        if face == label:
            raise ValueError("face equals label: nothing to correct")
        if not isinstance(why, str) or not why.strip():
            raise ValueError("why must say what the photo shows")
    except (ValueError, KeyError, TypeError) as exc:
        raise ErrataError(f"{source}:{lineno}: bad errata line: {exc}") from None
    return Erratum(image, die, label, face, why, lineno)


def read_errata(path: str | Path) -> list[Erratum]:
    """The corrections in ``path`` (one JSON object a line; blank lines skipped)."""
    path = Path(path)
    out: list[Erratum] = []
    seen: set[tuple[str, int]] = set()
    try:
        text = read_bounded(path, MAX_ERRATA_BYTES).decode("utf-8")
    except OSError as exc:
        raise ErrataError(f"{path}: cannot read: {exc.strerror or exc}") from None
    except UnicodeDecodeError as exc:
        raise ErrataError(f"{path}: not UTF-8 text (byte {exc.start})") from None
    for lineno, raw in enumerate(text.splitlines(), 1):
        if lineno > MAX_ERRATA:
            raise ErrataError(f"{path}: more than {MAX_ERRATA} lines")
        if not raw.strip():
            continue
        e = _parse(raw, lineno, path)
        if (e.image, e.die) in seen:
            raise ErrataError(f"{path}:{lineno}: a second correction of {e.image} die {e.die}")
        seen.add((e.image, e.die))
        out.append(e)
    return out


def errata_for(folder: str | Path, errata_dir: str | Path) -> list[Erratum]:
    """The corrections ``errata_dir`` holds for ``folder`` (none when it has no file for it)."""
    path = Path(errata_dir) / f"{Path(folder).resolve().name}.jsonl"
    return read_errata(path) if path.is_file() else []


def apply_errata(entries: list[ManifestEntry], errata: list[Erratum]) -> list[ManifestEntry]:
    """A whole manifest's ``entries`` with the corrections made.

    Apply to the manifest as read, before any split or ``--kinds`` filter, since ``die`` counts
    the manifest's own ``dice``. A correction that names a photo the manifest lacks, or whose
    die or label does not match, is an error: the manifest it was written for has changed, and
    applying it to whatever sits there now would corrupt a good label.
    """
    by_image: dict[str, list[Erratum]] = {}
    for e in errata:
        by_image.setdefault(e.image, []).append(e)
    out = []
    for entry in entries:
        fixes = by_image.pop(entry.relpath, None)
        if not fixes:
            out.append(entry)
            continue
        dice = list(entry.dice)
        for e in fixes:
            if e.die >= len(dice) or dice[e.die].face != e.label:
                have = f"labelled {dice[e.die].face}" if e.die < len(dice) else "not there"
                raise ErrataError(
                    f"errata line {e.line}: {e.image} die {e.die} is {have}, not {e.label}:"
                    " the manifest changed since the correction was written"
                )
            d = dice[e.die]
            dice[e.die] = replace(d, cocked=True) if e.face is None else replace(d, face=e.face)
        out.append(replace(entry, dice=tuple(dice)))
    if by_image:
        e = next(iter(by_image.values()))[0]
        raise ErrataError(f"errata line {e.line}: the manifest has no photo {e.image}")
    return out
