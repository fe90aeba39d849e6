"""The teaching examples in a labelled folder: each taught die's named crops, in the order rolled.

A folder in the manifest format (a teach folder once named, or photos labelled by hand) holds
dice of several kinds and colours. A *taught die* is one (kind, colour) of it: the dice of one
kind and colour name are one die to the tower, which tells its dice apart by kind and colour
(``vision.identity``). A folder whose labels carry no colour teaches one die per kind.

Order is the manifest's line order: the order a tower rolled them in. The latest lines are
held back (:func:`hold_back_split`) to choose the abstention threshold on crops the reader was
not fitted on; a threshold chosen on the fitted crops is too low for later rolls.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ..imageio import ImageError, load_image
from ..kinds import KINDS, Reader, label_of
from ..manifest import read_manifest

__all__ = [
    "MAX_PHOTOS",
    "SKIPPED_KINDS",
    "Example",
    "TaughtDie",
    "TeachingSet",
    "die_id",
    "held_back_line",
    "hold_back_split",
    "load_photo",
    "read_teaching_set",
    "slug",
    "split_at",
]

#: Most photos one fit reads (bounds memory and time: 700 photos fit in minutes).
MAX_PHOTOS = 20_000
#: Kinds a taught reader cannot read, with the reason shown when a folder holds them.
SKIPPED_KINDS: dict[str, str] = {
    "d4": "a d4 shows its result at its corners, not on a face on top; the tower cannot read it",
}


def die_id(kind: str, colour: str) -> str:
    """How a taught die is called: ``"blue d20"``, or ``"d20"`` when no colour is known."""
    return f"{colour} {kind}" if colour else kind


def slug(identity: str) -> str:
    """A file-name-safe form of a die's id: ``"blue d20"`` -> ``"blue-d20"``."""
    return "".join(c if c.isalnum() else "-" for c in identity.lower()).strip("-") or "die"


@dataclass(frozen=True)
class Example:
    """One named crop of a taught die: where it is, and its face."""

    line: int  #: the manifest line (1-based): the order it was rolled in
    image: Path
    box: tuple[float, float, float, float] | None  #: None: the whole photo is the die
    face: int


@dataclass
class TaughtDie:
    """A (kind, colour) of the folder and its named crops, in order."""

    kind: str  #: the label kind (``d6``, ``d10``, ``d10t``, ``d20``, ``d8``, ``d12``)
    colour: str
    examples: list[Example] = field(default_factory=list)

    @property
    def id(self) -> str:
        return die_id(self.kind, self.colour)

    @property
    def faces(self) -> tuple[int, ...]:
        """Every face of the kind (the table of kinds)."""
        for k in KINDS.values():
            if k.label == self.kind:
                return k.faces
        raise KeyError(self.kind)

    @property
    def reader(self) -> Reader:
        """The general reader a taught die of this kind builds on."""
        return KINDS[self.kind].reader if self.kind in KINDS else Reader.NONE

    def counts(self) -> dict[int, int]:
        """Named crops per face (every face of the kind, zeros included)."""
        out = dict.fromkeys(self.faces, 0)
        for e in self.examples:
            out[e.face] = out.get(e.face, 0) + 1
        return out


@dataclass
class TeachingSet:
    """What a folder teaches: its dice, the photos read, and what was skipped and why."""

    folder: Path
    dice: list[TaughtDie]
    lines: int  #: manifest lines read
    references: list[Path]  #: empty-tray photos the lines name, in order of first use
    notes: list[str] = field(default_factory=list)

    def photos(self) -> Iterator[Path]:
        seen: set[Path] = set()
        for die in self.dice:
            for e in die.examples:
                if e.image not in seen:
                    seen.add(e.image)
                    yield e.image


def read_teaching_set(folder: str | Path) -> TeachingSet:
    """The taught dice of ``folder``'s manifest; kinds no taught reader reads are skipped with a note.

    Dice not yet named (a teach folder before naming) are left out and counted in a note.
    """
    folder = Path(folder)
    dice: dict[tuple[str, str], TaughtDie] = {}
    references: list[Path] = []
    skipped: dict[str, int] = {}
    unnamed = 0
    lines = 0
    for entry in read_manifest(folder, unnamed=True):
        lines += 1
        if lines > MAX_PHOTOS:
            raise ValueError(f"{folder}: more than {MAX_PHOTOS} photos; teach on fewer")
        if entry.reference is not None and entry.reference not in references:
            references.append(entry.reference)
        for d in entry.dice:
            kind = label_of(d.die)
            if kind in SKIPPED_KINDS:
                skipped[kind] = skipped.get(kind, 0) + 1
                continue
            if d.face is None:
                unnamed += 1
                continue
            key = (kind, d.colour)
            dice.setdefault(key, TaughtDie(kind, d.colour)).examples.append(
                Example(entry.line, entry.image, d.box, d.face)
            )
    notes = [f"skipped {n} {kind} (not taught: {SKIPPED_KINDS[kind]})" for kind, n in skipped.items()]
    if unnamed:
        notes.append(f"skipped {unnamed} dice not yet named (dicetower teach name)")
    ordered = sorted(dice.values(), key=lambda d: (d.kind, d.colour))
    return TeachingSet(folder, ordered, lines, references, notes)


def held_back_line(lines: Iterable[int], share: float) -> int:
    """The first manifest line held back when the latest ``share`` of ``lines`` (photos) is."""
    if not 0.0 < share < 1.0:
        raise ValueError(f"the held-back share must be between 0 and 1, got {share}")
    ordered = sorted(set(lines))
    return ordered[int(np.floor(len(ordered) * (1.0 - share)))] if ordered else 0


def split_at(examples: list[Example], cut: int) -> tuple[list[Example], list[Example]]:
    """``(fitted, held back)``: the examples before manifest line ``cut``, and from it on."""
    return [e for e in examples if e.line < cut], [e for e in examples if e.line >= cut]


def hold_back_split(examples: list[Example], share: float) -> tuple[list[Example], list[Example]]:
    """``(fitted, held back)``: the latest ``share`` of the examples' photos is held back.

    Whole photos go to one side (by manifest line), so two dice of one throw are never split.
    """
    return split_at(examples, held_back_line((e.line for e in examples), share))


def load_photo(path: Path) -> np.ndarray | None:
    """The photo as BGR, or None when it cannot be read (a broken file is skipped, not fatal)."""
    try:
        return load_image(path)
    except ImageError:
        return None
