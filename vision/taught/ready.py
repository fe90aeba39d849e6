"""Is a folder ready to fit? The packages, the named faces and the held-back dice, checked first.

Why before the fit: a fit runs for minutes, and it refuses only at the end of its work (no onnx
to write the networks; a held-back wrong rate that could be over ``--max-wrong``), or after
reading every photo (a face named too few times). What it will refuse for these reasons is
known from the manifest alone, in a second, and so is what would mend it: how many more rolls
each die needs. The tests are the fit's own: its held-back split
(:func:`~.teaching.hold_back_split`), its wrong-rate bound (:mod:`.enough`), its fewest names a
face. Rolls still needed for the faces assume a fair die (:func:`~.coverage.rolls_to_go`).
"""

from __future__ import annotations

import importlib.util
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from .coverage import MAX_ESTIMATE, rolls_to_go
from .enough import dice_to_show, rolls_to_show
from .teaching import TaughtDie, hold_back_split, read_teaching_set

__all__ = ["TEACH_PACKAGES", "DieNeed", "Readiness", "fit_readiness", "missing_packages"]

#: What ``pip install 'dicetower[teach]'`` adds, and what each is for.
TEACH_PACKAGES: dict[str, str] = {
    "onnx": "writes the taught networks",
    "threadpoolctl": "one BLAS thread: the same model from the same folder",
}


def missing_packages() -> list[str]:
    """The ``teach`` extra's packages this Python cannot import."""
    return [name for name in TEACH_PACKAGES if importlib.util.find_spec(name) is None]


@dataclass(frozen=True)
class DieNeed:
    """One taught die: its faces named too few times, and about how many more rolls it needs."""

    id: str
    short: dict[int, int]  #: face -> times named, for each face named fewer than the fit wants
    rolls_for_faces: int  #: more rolls until every face is named often enough (0: none)
    rolls_for_bound: int  #: more rolls until the held-back dice can show the bound (shared by all)

    @property
    def rolls_more(self) -> int:
        return max(self.rolls_for_faces, self.rolls_for_bound)

    def describe(self, min_per_face: int) -> str:
        """``blue d20: faces 7 (5) and 13 (2) named fewer than 8 times; roll about 40 more``."""
        if not self.rolls_more:
            return f"{self.id}: ready"
        why = []
        if self.short:
            listed = ", ".join(f"{f} ({n})" for f, n in sorted(self.short.items()))
            why.append(f"faces {listed} named fewer than {min_per_face} times")
        if self.rolls_for_bound:
            why.append("too few held-back dice for the wrong-rate bound")
        more = "more than 100000" if self.rolls_more >= MAX_ESTIMATE else f"about {self.rolls_more}"
        return f"{self.id}: {'; '.join(why)}: roll {more} more"


@dataclass
class Readiness:
    """What a fit of ``folder`` would refuse for, found before it starts."""

    folder: Path
    dice: list[DieNeed]
    photos: int  #: photos with a named die
    held_back_dice: int  #: dice the fit would hold back, over every taught die
    needed: int  #: held-back dice that can show ``max_wrong`` with none wrong
    max_wrong: float
    notes: list[str] = field(default_factory=list)

    @property
    def ready(self) -> bool:
        return bool(self.dice) and not any(d.rolls_more for d in self.dice)

    def summary(self) -> str:
        """One line: what is missing, and the commands that mend it."""
        need = [d for d in self.dice if d.rolls_more]
        if not need:
            return f"{self.folder}: ready to fit"
        each = ", ".join(f"the {d.id} about {d.rolls_more}" for d in need)
        bound = (
            f"; the fit holds back {self.held_back_dice} dice and showing at most {self.max_wrong:.1%} "
            f"wrong takes {self.needed}"
            if self.held_back_dice < self.needed
            else ""
        )
        return (
            f"teach more rolls before fitting: {each} more{bound} "
            f"(dicetower teach collect --tower config --rolls N --out {self.folder} carries on, "
            "its new crops joining the named groups)"
        )


def _per_throw(die: TaughtDie) -> int:
    return max(Counter(e.line for e in die.examples).values(), default=1)


def fit_readiness(
    folder: str | Path,
    *,
    hold_back: float,
    min_per_face: int,
    max_wrong: float,
    seen_faces_only: bool = False,
) -> Readiness:
    """What a fit of ``folder`` with these options would refuse for (reads the manifest only)."""
    teaching = read_teaching_set(folder)
    lines = sorted({e.line for d in teaching.dice for e in d.examples})
    photos = len(lines)
    held = sum(len(hold_back_split(d.examples, hold_back)[1]) for d in teaching.dice)
    needed = dice_to_show(max_wrong)
    per_photo = round(sum(len(d.examples) for d in teaching.dice) / photos) if photos else 0
    bound_more = rolls_to_show(photos, per_photo, hold_back, max_wrong) if held < needed else 0
    dice = []
    for die in teaching.dice:
        counts = die.counts()
        faces = [f for f in die.faces if counts.get(f, 0) > 0] if seen_faces_only else list(die.faces)
        short = {f: counts.get(f, 0) for f in faces if counts.get(f, 0) < min_per_face}
        more = rolls_to_go([counts.get(f, 0) for f in faces], len(faces), _per_throw(die), min_per_face)
        dice.append(DieNeed(die.id, short, more if short else 0, bound_more))
    return Readiness(Path(folder), dice, photos, held, needed, max_wrong, list(teaching.notes))
