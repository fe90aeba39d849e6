"""The one table of die kinds: for each kind its faces, how it is read, how it is drawn, its name.

Why one table: a die kind is known to the manifest (which labels are valid), to the readers
(which network answers for it, whether it is found as a whole body), to the renderer and the
simulated camera (which solid to draw, how its numerals are printed), to the config (which
dice a tower may be loaded with) and to training. Each of those reads :data:`KINDS`, so adding
a kind is one :class:`DieKind` row here plus the reader that reads it (docs/vision.md,
"Adding a die kind").

A kind's ``name`` is what the table and the numeral network call it; its ``label`` is what
manifests, readings, configs and the rules call it. They differ for one kind only: the numeral
d6 (``d6n``) is a ``d6`` to everything outside the readers, which must tell it from a pip d6.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

__all__ = [
    "BODY_KINDS",
    "DRAWN_KINDS",
    "KINDS",
    "LABELS",
    "NEVER_READ",
    "NUMERAL_KINDS",
    "NUMERAL_NETWORK_KINDS",
    "DieKind",
    "Reader",
    "Shape",
    "faces_of",
    "kind",
    "label_of",
    "min_px_of",
    "readable_labels",
    "taught_only_labels",
]


class Reader(StrEnum):
    """Which of the general readers reads a kind's face."""

    PIPS = "pips"  #: the pip-d6 face reader (:mod:`dicetower.vision.faces.pips`)
    #: the numeral network names the kind (:mod:`~dicetower.vision.faces.numerals`) and the
    #: upright-numeral reader reads the face (:mod:`~dicetower.vision.faces.glyphs`)
    NUMERALS = "numerals"
    NONE = "none"  #: no general reader: a label eval may score, not a die the tower reads


class Shape(StrEnum):
    """The solid the renderer draws a kind as (:mod:`dicetower.vision.synth.solids`)."""

    CUBE = "cube"
    TRAPEZOHEDRON = "trapezohedron"
    ICOSAHEDRON = "icosahedron"


@dataclass(frozen=True)
class DieKind:
    """One row of the table.

    ``faces`` are the printed faces in the manifest's convention (a tens die's are 0, 10, ...,
    90); ``printed`` formats a face as it is printed on the die (``"{:02d}"`` prints the tens
    die's 0 as ``00``). ``body`` says the pip-d6 detector boxes this kind's numerals one by one,
    so it is located whole, as a body against the tray (:mod:`dicetower.vision.bodies`).
    ``shape`` is ``None`` for a kind the renderer does not draw.
    """

    name: str
    faces: tuple[int, ...]
    reader: Reader
    shape: Shape | None
    display: str  #: how people call it: "numeral d6", "tens d10"
    label: str = ""  #: the kind outside the readers; empty: the same as ``name``
    printed: str = "{}"
    body: bool = False
    #: the imaging budget: the smallest die, in pixels (its box's longer side), that the general
    #: reader reads as well as a full-size one (``bench/imaging_budget.py``, docs/vision.md);
    #: ``0``: not measured. ``dicetower tower calibrate`` warns below it, and a numeral die
    #: smaller than it is refused as ``too_small`` rather than read.
    min_px: float = 0.0

    def __post_init__(self) -> None:
        if not self.label:
            object.__setattr__(self, "label", self.name)

    @property
    def pips(self) -> bool:
        """Its faces are pips (the renderer draws pips; the pip reader reads them), not numerals."""
        return self.reader is Reader.PIPS

    def text(self, face: int) -> str:
        """``face`` as the die prints it (``"00"`` for a tens die's 0)."""
        return self.printed.format(face)

    def face_of_text(self, text: str) -> int | None:
        """The face whose printed numeral is ``text``; ``None`` when this kind prints no such text."""
        for face in self.faces:
            if self.text(face) == text:
                return face
        return None


#: Every kind, in the order the numeral network numbers its classes (do not reorder: a
#: network's card lists its classes, and the code checks them against this order).
KINDS: dict[str, DieKind] = {
    k.name: k
    for k in (
        DieKind("d4", tuple(range(1, 5)), Reader.NONE, None, "d4"),
        DieKind("d6", tuple(range(1, 7)), Reader.PIPS, Shape.CUBE, "d6", min_px=21),
        DieKind("d6n", tuple(range(1, 7)), Reader.NUMERALS, Shape.CUBE, "numeral d6", label="d6"),
        DieKind("d8", tuple(range(1, 9)), Reader.NONE, None, "d8"),
        DieKind("d10", tuple(range(10)), Reader.NUMERALS, Shape.TRAPEZOHEDRON, "d10", body=True, min_px=48),
        DieKind(
            "d10t",
            tuple(range(0, 100, 10)),
            Reader.NUMERALS,
            Shape.TRAPEZOHEDRON,
            "tens d10",
            printed="{:02d}",
            body=True,
            min_px=56,
        ),
        DieKind("d12", tuple(range(1, 13)), Reader.NONE, None, "d12"),
        DieKind("d20", tuple(range(1, 21)), Reader.NUMERALS, Shape.ICOSAHEDRON, "d20", body=True, min_px=80),
    )
}

#: The kinds a label, a reading or a config may name (the numeral d6 is a ``d6`` there).
LABELS: tuple[str, ...] = tuple(dict.fromkeys(k.label for k in KINDS.values()))
#: Kinds the numeral network tells apart, in its class order (it also answers for the pip d6,
#: so a numeral die is never left to the pip reader).
NUMERAL_NETWORK_KINDS: tuple[str, ...] = tuple(
    k.name for k in KINDS.values() if k.reader in (Reader.PIPS, Reader.NUMERALS)
)
#: Kinds whose face the numeral readers give, over the pip reader's.
NUMERAL_KINDS: frozenset[str] = frozenset(k.name for k in KINDS.values() if k.reader is Reader.NUMERALS)
#: Kinds no reader reads, taught or not, and why: a tower refuses them whatever it was taught.
NEVER_READ: dict[str, str] = {
    "d4": "a d4 shows its result at its corners, not on a face on top",
}
#: Kinds located as a whole body rather than by the pip-d6 detector.
BODY_KINDS: frozenset[str] = frozenset(k.name for k in KINDS.values() if k.body)
#: Kinds the renderer draws, in table order.
DRAWN_KINDS: tuple[str, ...] = tuple(k.name for k in KINDS.values() if k.shape is not None)


def kind(name: str) -> DieKind:
    """The row of ``name``; ``KeyError`` names the known kinds."""
    try:
        return KINDS[name]
    except KeyError:
        raise KeyError(f"unknown die kind {name!r}; known: {', '.join(KINDS)}") from None


def label_of(name: str) -> str:
    """The kind as labels and readings name it: a numeral d6 is a ``d6``."""
    return KINDS[name].label if name in KINDS else name


def min_px_of(label: str) -> float:
    """The imaging budget of a kind as labels name it: the largest of its rows' (``d6``: the pip d6's)."""
    return max((k.min_px for k in KINDS.values() if k.label == label), default=0.0)


def faces_of(label: str) -> tuple[int, ...]:
    """The printed faces of a kind as labels name it (``d6``, ``d10t`` ...)."""
    for k in KINDS.values():
        if k.label == label:
            return k.faces
    raise KeyError(f"unknown die kind {label!r}; known: {', '.join(LABELS)}")


def readable_labels() -> tuple[str, ...]:
    """The labels of the kinds a general reader reads, in table order: what a tower may hold."""
    return tuple(dict.fromkeys(k.label for k in KINDS.values() if k.reader is not Reader.NONE))


def taught_only_labels() -> tuple[str, ...]:
    """The labels no general reader reads but a taught one may (d8, d12): a tower holds them once taught."""
    general = readable_labels()
    return tuple(label for label in LABELS if label not in general and label not in NEVER_READ)
