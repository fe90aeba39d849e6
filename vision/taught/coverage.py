"""How far a collect has come: each die's faces seen often enough, estimated by grouping.

Why an estimate: the faces are not named while the tower collects, so which were seen is told
by grouping (:mod:`.group`): a die's crops sorted into as many groups as it has faces, each group
taken to show one face. A group of at least ``min_per_face`` crops is a face seen often enough
(a fit wants :data:`~.fit.MIN_PER_FACE` a face). Its limits (``docs/teach.md``): a face the
grouping splits in two (a numeral seen at two turns) counts twice while another face it merges
away counts not at all, so the count can be off either way; and a missing face cannot be named
by its number, since nothing is named yet. Where the general reader read a face surely, its
counts are given beside, as its reading: a hint, since it reads untaught dice poorly.

The rolls still needed assume a fair die: the group sizes stand for the faces' counts, and
throws are drawn at random until every face has ``min_per_face`` (the median of many draws).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from .grouped import FolderDie, hint_counts

__all__ = ["MAX_ESTIMATE", "DieCoverage", "die_coverage", "rolls_to_go"]

#: The estimate of rolls still needed stops here ("more than").
MAX_ESTIMATE = 100_000
#: Random draws behind the estimate, from a fixed seed (the same counts give the same answer).
TRIALS = 200


def rolls_to_go(
    counts: Sequence[int], faces: int, per_throw: int, min_per_face: int, *, trials: int = TRIALS
) -> int:
    """Rolls until each of ``faces`` faces has ``min_per_face``, from ``counts`` so far (median).

    ``per_throw`` dice of the kind are in each throw; a fair die is assumed.
    """
    have = np.zeros(faces, np.int64)
    got = sorted((int(c) for c in counts), reverse=True)[:faces]
    have[: len(got)] = got
    if faces <= 0 or have.min() >= min_per_face:
        return 0
    rng = np.random.default_rng(0)
    state = np.tile(have, (trials, 1))
    done = np.zeros(trials, np.int64)
    rows = np.arange(trials)
    for roll in range(1, MAX_ESTIMATE + 1):
        for _ in range(max(per_throw, 1)):
            state[rows, rng.integers(0, faces, trials)] += 1
        finished = (state.min(axis=1) >= min_per_face) & (done == 0)
        done[finished] = roll
        if done.all():
            break
    done[done == 0] = MAX_ESTIMATE
    return int(np.median(done))


@dataclass(frozen=True)
class DieCoverage:
    """One die's faces seen often enough, estimated from its groups' sizes."""

    id: str
    faces: tuple[int, ...]  #: every face of the kind
    sizes: tuple[int, ...]  #: the groups' sizes (crops), largest first
    per_throw: int  #: dice of this kind and colour in a throw
    min_per_face: int
    #: faces the general reader read surely, and how often (a hint, not a count of the truth)
    hints: Mapping[int, int] = field(default_factory=dict)

    @property
    def crops(self) -> int:
        return sum(self.sizes)

    @property
    def seen(self) -> int:
        """Groups of at least ``min_per_face`` crops: faces estimated seen often enough."""
        return min(sum(s >= self.min_per_face for s in self.sizes), len(self.faces))

    @property
    def missing(self) -> int:
        return len(self.faces) - self.seen

    @property
    def done(self) -> bool:
        return self.missing == 0

    def rolls_more(self) -> int:
        """About how many more rolls until every face is seen often enough (0: none)."""
        return rolls_to_go(self.sizes, len(self.faces), self.per_throw, self.min_per_face)

    def describe(self) -> str:
        """``blue d20: 17 of 20 faces seen at least 8 times (estimated by grouping); roll about 60 more``."""
        line = (
            f"{self.id}: {self.seen} of {len(self.faces)} faces seen at least {self.min_per_face} times "
            f"(estimated by grouping {self.crops} crops)"
        )
        if self.done:
            return line
        more = self.rolls_more()
        if more >= MAX_ESTIMATE:
            return f"{line}; roll more than {MAX_ESTIMATE} more"
        return f"{line}; roll about {more} more"

    def hint(self) -> str:
        """The general reader's sure readings of the faces short of ``min_per_face``, labelled as such."""
        short = [f for f in self.faces if self.hints.get(f, 0) < self.min_per_face]
        if not short:
            return (
                f"{self.id}: the general reader (a hint: it reads untaught dice poorly) read every face "
                f"surely at least {self.min_per_face} times"
            )
        listed = ", ".join(f"{f} ({self.hints.get(f, 0)})" for f in short)
        return (
            f"{self.id}: the general reader (a hint: it reads untaught dice poorly) read these faces surely "
            f"fewer than {self.min_per_face} times: {listed}"
        )


def die_coverage(
    folder: str | Path, die: FolderDie, groups: Sequence[Sequence[int]], min_per_face: int
) -> DieCoverage:
    """``die``'s coverage from its ``groups``, with the general reader's hints from ``folder``."""
    sizes = tuple(len(g) for g in groups)
    return DieCoverage(die.id, die.faces, sizes, die.per_throw, min_per_face, hint_counts(folder, die))
