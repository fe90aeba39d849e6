"""The honest train/val/test split of the shared datasets.

Why not a random split: several datasets are video frames or augmented copies, and a
near-duplicate on each side of the split makes any figure measured on val/test a lie.
Each photo is mapped to a *group* of photos that may be near-duplicates of each other,
and whole groups go to one split, chosen by a stable hash of the group's key (so the
split never changes between runs, machines or Python versions):

- ``byler-d6``: each photo is its own group (every photo is a fresh throw).
- ``epanemu-dice3``: the source photo name before ``_jpg.rf.`` (Roboflow's augmented
  copies share it).
- ``matteop65-d6-wood``: contiguous blocks of :data:`MATTEO_BLOCK` frame numbers within
  each file-name prefix (``dice_``, ``two_``, ..., ``valid_``): webcam frames taken in
  sequence.
- ``tomitomi3-gray-d6``: contiguous blocks of :data:`TOMITOMI_BLOCK` images of the index
  within each face (200 images a face, in capture order). Blocks are dealt in a fixed
  rotation (7 train, 1.5 val, 1.5 test of every 10) instead of hashed, so every face has
  the same share in every split (a hash left face 1 out of test).
- ``rsandrini-d20``: each photo is a frame of a video of one d20 turning on one background,
  the same face up all along. With the labels at hand (eval, :func:`select_entries
  <dicetower.vision.eval.evaluate.select_entries>`, and the numeral training) whole videos go to one
  split (:func:`d20_splits`): a *video* is one background (the file-name prefix: ``d20_color``,
  ``d20_off-angle_``, ``d20_top_``, ``d20_wood``) and one face. A face filmed on one background
  only has its one video in ``train`` (a held-back copy would leave the face unseen in
  training; renders carry the faces real photos lack); a face filmed on ``n >= 2`` backgrounds
  (videos sorted by background) has video ``face % n`` in ``test`` and, when ``n >= 3``,
  video ``(face + 1) % n`` in ``val``; the rest train; the two stray ``img*`` photos train. So
  a test photo shows a background never paired with that face in training; the same physical
  d20 may still appear on another background in training (six dice in all, not recorded).
  Without labels (:func:`split_of`), contiguous blocks of :data:`RSANDRINI_BLOCK` frame
  numbers within each background are dealt 5 train, 1 val, 1 test; frames at the edge of two
  blocks are neighbours, so that split leaks a little and no figure is measured on it.
- any other dataset (e.g. the tower's own recordings): each photo is its own group.

API (stable, shared with the face-reader work): :func:`split_of`.
"""

from __future__ import annotations

import re
import zlib
from collections.abc import Iterable
from typing import Literal

__all__ = ["SPLITS", "Split", "background_of", "d20_split", "d20_splits", "group_of", "split_of"]

Split = Literal["train", "val", "test"]
SPLITS: tuple[Split, ...] = ("train", "val", "test")

#: Per mille of groups in each split: 70% train, 15% val, 15% test.
_TRAIN_BELOW = 700
_VAL_BELOW = 850

MATTEO_BLOCK = 10
TOMITOMI_BLOCK = 10
TOMITOMI_PER_FACE = 200
RSANDRINI_BLOCK = 32

_NUMBER = re.compile(r"^(.*?)(\d+)$")


def _stem(image_relpath: str) -> str:
    name = image_relpath.replace("\\", "/").rsplit("/", 1)[-1]
    return name.rsplit(".", 1)[0] if "." in name else name


def _prefix_and_number(stem: str) -> tuple[str, int] | None:
    m = _NUMBER.match(stem)
    if m is None:
        return None
    return m.group(1), int(m.group(2))


def group_of(dataset_name: str, image_relpath: str) -> str:
    """The key of the near-duplicate group ``image_relpath`` belongs to."""
    stem = _stem(image_relpath)
    if dataset_name.startswith("epanemu"):
        return stem.split("_jpg.rf.", 1)[0]
    if dataset_name.startswith("matteop65"):
        pn = _prefix_and_number(stem)
        if pn is not None:
            return f"{pn[0]}#{pn[1] // MATTEO_BLOCK}"
    if dataset_name.startswith("tomitomi3"):
        # Names are "00000" (face 1) or "00200_00000" (global index _ index within face).
        first = stem.split("_", 1)[0]
        if first.isdigit():
            index = int(first)
            face, within = divmod(index, TOMITOMI_PER_FACE)
            return f"face{face}#{within // TOMITOMI_BLOCK}"
    if dataset_name.startswith("rsandrini"):
        pn = _prefix_and_number(stem)
        if pn is not None:
            return f"{pn[0]}#{pn[1] // RSANDRINI_BLOCK}"
    return stem


def _dealt_split(dataset_name: str, image_relpath: str) -> Split | None:
    """The rotation-dealt split for datasets balanced per face, else None (use the hash)."""
    stem = _stem(image_relpath)
    if dataset_name.startswith("tomitomi3"):
        first = stem.split("_", 1)[0]
        if first.isdigit():
            face, within = divmod(int(first), TOMITOMI_PER_FACE)
            slot = (within // TOMITOMI_BLOCK + 3 * face) % 20
            return "train" if slot < 14 else "val" if slot < 17 else "test"
    if dataset_name.startswith("rsandrini"):
        pn = _prefix_and_number(stem)
        if pn is not None:
            slot = (pn[1] // RSANDRINI_BLOCK) % 7
            return "train" if slot < 5 else "val" if slot < 6 else "test"
    return None


def split_of(dataset_name: str, image_relpath: str) -> Split:
    """``"train"``, ``"val"`` or ``"test"`` for one photo of a dataset.

    ``dataset_name`` is the dataset's folder name (``"byler-d6"``); ``image_relpath`` the
    manifest's ``image`` field (``"images/IMG_1.jpg"``) or any path ending in the file name.
    """
    dealt = _dealt_split(dataset_name, image_relpath)
    if dealt is not None:
        return dealt
    key = f"{dataset_name}/{group_of(dataset_name, image_relpath)}"
    bucket = zlib.crc32(key.encode("utf-8")) % 1000
    if bucket < _TRAIN_BELOW:
        return "train"
    if bucket < _VAL_BELOW:
        return "val"
    return "test"


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
