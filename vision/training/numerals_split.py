"""The held-back split of ``rsandrini-d20`` for the numeral reader: whole videos, never frames.

Why: each photo is a frame of a video of one d20 turning on one background, the same face up
all along, so neighbouring frames are near-duplicates and a split by frame (or by block of
frames) puts the same die, background and face on both sides. A *video* is one die on one
background; the file-name prefix names the background (``d20_color``, ``d20_off-angle_``,
``d20_top_``, ``d20_wood``) and the face label tells one video of a background from the next.
Whole videos go to one split:

- a face filmed on one background only has its one video in ``train`` (a held-back copy of it
  would leave the face unseen in training, and the renders carry the faces real photos lack);
- a face filmed on ``n >= 2`` backgrounds (its videos sorted by background) has video
  ``face % n`` in ``test`` and, when ``n >= 3``, video ``(face + 1) % n`` in ``val``; the rest
  train;
- the two stray photos named ``img*`` are ``train``.

So a test photo shows a background never paired with that face in training. The die itself is
not recorded: the same physical d20 may appear on another background in training (six dice in
all), which this split cannot rule out and BENCHMARKS.md says so.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from ..splits import Split

__all__ = ["background_of", "d20_split", "d20_splits"]

_NUMBER = re.compile(r"^(.*?)(\d+)$")


def background_of(image_relpath: str) -> str:
    """The background a photo was taken on: its file name without the frame number."""
    name = image_relpath.replace("\\", "/").rsplit("/", 1)[-1].rsplit(".", 1)[0]
    m = _NUMBER.match(name)
    return m.group(1) if m else name


def d20_splits(photos: Iterable[tuple[str, int]]) -> dict[tuple[str, int], Split]:
    """The split of every video ``(background, face)`` among ``photos`` (``(relpath, face)`` pairs)."""
    videos: dict[int, set[str]] = {}
    for relpath, face in photos:
        bg = background_of(relpath)
        videos.setdefault(face, set())
        if not bg.startswith("img"):
            videos[face].add(bg)
    out: dict[tuple[str, int], Split] = {}
    for face, backgrounds in videos.items():
        ordered = sorted(backgrounds)
        n = len(ordered)
        for i, bg in enumerate(ordered):
            split: Split = "train"
            if n >= 2 and i == face % n:
                split = "test"
            elif n >= 3 and i == (face + 1) % n:
                split = "val"
            out[(bg, face)] = split
    return out


def d20_split(splits: dict[tuple[str, int], Split], relpath: str, face: int) -> Split:
    """One photo's split, from :func:`d20_splits` of the whole manifest."""
    return splits.get((background_of(relpath), face), "train")
