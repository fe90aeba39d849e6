"""Sort one die's crops into groups by how their face looks, without labels.

Why groups: naming each face once is a minute's work; naming each of 300 crops is an hour's.
Two crops of one face look alike up to a turn (a die lands at any angle). The likeness of two
crops is the mean of two measures, each blind to the turn (:func:`crop_likeness`):

- their features (:mod:`.features`) less the die's mean feature (what every crop of the die
  shares: its colour, its size), the best match of one crop against the other turned every
  :data:`TURN_STEP` degrees;
- the general network's answer at its surest turn, per class: on a die it never saw it may
  name the wrong face, but it names the same wrong face for crops of one face.

Crops are joined by average linkage until as many groups are left as the die has faces
(:func:`average_linkage`). Either measure alone mixed faces of a rendered d20 thrown at random
(24 crops of three faces: 17 of 24 and 16 of 24 in a group of their face); together, 24 of 24.
For numeral dice a third measure joins them (:func:`upright_answers`): the upright-numeral
network's surest answer over the turns of the die's middle, which reads the numeral on top.

A person then names each group, moves a misfit out, or splits a mixed group (``naming``).
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from pathlib import Path

import cv2
import numpy as np

from ..faces.glyphs import CENTRAL, central_crops
from ..faces.pips import CROP_MARGIN
from ..kinds import KINDS, Shape
from .features import NETWORKS, Backbone, Network
from .head import softmax

__all__ = [
    "MAX_CROPS",
    "SHEET_ROW",
    "TURN_STEP",
    "average_linkage",
    "contact_sheet",
    "crop_likeness",
    "crops_likeness",
    "group_crops",
    "likeness",
    "upright_answers",
]

#: Degrees between the turns a crop is compared at.
TURN_STEP = 30
#: Most crops of one die grouped at once (bounds memory: crops x turns x features).
MAX_CROPS = 1500
#: Thumbnails shown per group on a contact sheet, and their side (px).
SHEET_ROW = 16
THUMB = 64


def likeness(features: np.ndarray) -> np.ndarray:
    """``(N, N)`` likeness of crops from their features ``(N, T, D)`` at ``T`` turns (turn 0 first).

    The cosine of crop ``i`` as it is against crop ``j`` at its best turn, made symmetric by
    taking the better of the two directions.
    """
    f = features / (np.linalg.norm(features, axis=2, keepdims=True) + 1e-6)
    upright = f[:, 0]
    n, turns = f.shape[:2]
    best = np.full((n, n), -1.0, np.float32)
    for t in range(turns):
        np.maximum(best, upright @ f[:, t].T, out=best)
    return np.maximum(best, best.T)


def crop_likeness(features: np.ndarray, answers: np.ndarray) -> np.ndarray:
    """``(N, N)`` likeness of crops from their features ``(N, T, D)`` and general answers ``(N, T, K)``.

    The mean of the centred features' :func:`likeness` and the cosine of the answers' largest
    probability per class over the turns (module docstring).
    """
    centred = features - features.reshape(-1, features.shape[2]).mean(axis=0)
    surest = answers.max(axis=1)
    surest = surest / (np.linalg.norm(surest, axis=1, keepdims=True) + 1e-9)
    return (likeness(centred) + surest @ surest.T) / 2.0


def average_linkage(distance: np.ndarray, groups: int) -> list[list[int]]:
    """Join items by average linkage until ``groups`` are left; each group's items in order.

    ``distance`` is a symmetric ``(N, N)`` matrix. O(N²) memory, N - groups merges of O(N²).
    """
    n = len(distance)
    if n == 0:
        return []
    d = np.array(distance, np.float64, copy=True)
    np.fill_diagonal(d, np.inf)
    size = np.ones(n)
    members: dict[int, list[int]] = {i: [i] for i in range(n)}
    alive = n
    while alive > max(groups, 1):
        flat = int(np.argmin(d))
        i, j = divmod(flat, n)
        if not np.isfinite(d[i, j]):
            break
        if j < i:
            i, j = j, i
        merged = (size[i] * d[i] + size[j] * d[j]) / (size[i] + size[j])
        d[i], d[:, i] = merged, merged
        d[i, i] = np.inf
        d[j], d[:, j] = np.inf, np.inf
        size[i] += size[j]
        members[i].extend(members.pop(j))
        alive -= 1
    return [sorted(m) for m in members.values()]


def group_crops(
    backbone: Backbone,
    crops: Sequence[np.ndarray],
    faces: int,
    *,
    turn_step: int = TURN_STEP,
    kind: str = "",
) -> list[list[int]]:
    """Groups of ``crops`` (indices), as many as ``faces``, largest first.

    ``crops`` are square crops of one die (any size, BGR); each is read at every ``turn_step``
    degrees by ``backbone``. A ``kind`` whose top numeral sits in the middle (not a d10's kite)
    is compared by its upright numeral too. More than :data:`MAX_CROPS` crops is refused.
    """
    if not crops:
        return []
    groups = average_linkage(1.0 - crops_likeness(backbone, crops, turn_step=turn_step, kind=kind), faces)
    return sorted(groups, key=lambda g: (-len(g), g[0]))


def crops_likeness(
    backbone: Backbone, crops: Sequence[np.ndarray], *, turn_step: int = TURN_STEP, kind: str = ""
) -> np.ndarray:
    """``(N, N)`` likeness of one die's ``crops``, as :func:`group_crops` groups them (1: alike)."""
    if len(crops) > MAX_CROPS:
        raise ValueError(f"{len(crops)} crops of one die; group at most {MAX_CROPS} at once")
    angles = np.arange(0, 360, turn_step)
    side = backbone.spec.side
    turned = []
    for crop in crops:
        h, w = crop.shape[:2]
        for a in angles:
            m = cv2.getRotationMatrix2D((w / 2, h / 2), float(a), side / max(h, w))
            m[0, 2] += side / 2 - w / 2
            m[1, 2] += side / 2 - h / 2
            turned.append(
                cv2.warpAffine(crop, m, (side, side), flags=cv2.INTER_AREA, borderMode=cv2.BORDER_REPLICATE)
            )
    flat = backbone.features(turned)
    answers = softmax(flat @ backbone.weights.T + backbone.bias).reshape(len(crops), len(angles), -1)
    feats = flat.reshape(len(crops), len(angles), -1)
    likeness_ = crop_likeness(feats, answers)
    shape = KINDS[kind].shape if kind in KINDS else None
    if backbone.spec.network is Network.NUMERALS and shape is not Shape.TRAPEZOHEDRON:
        upright = upright_answers(_upright_network(), crops)
        likeness_ = (2.0 * likeness_ + upright @ upright.T) / 3.0
    return likeness_


@functools.cache
def _upright_network() -> Backbone:
    return Backbone(NETWORKS[Network.GLYPHS])


def upright_answers(glyphs: Backbone, crops: Sequence[np.ndarray]) -> np.ndarray:
    """``(N, classes)`` unit vectors: the upright-numeral network's surest probability of each numeral
    over the turns of each crop's middle (a crop is the die with the reader's margin around it).

    Why: on the simulated tower's d20 this alone put crops of one face far more alike (median
    cosine 0.95) than crops of two faces (0.68); it reads the numeral on top, whatever else the
    whole-die features see.
    """
    angles = np.arange(0, 360, TURN_STEP, dtype=np.float64)
    out = []
    for crop in crops:
        h, w = crop.shape[:2]
        side = min(h, w) / CROP_MARGIN
        box = ((w - side) / 2, (h - side) / 2, side, side)
        probs = glyphs.general(glyphs.features(central_crops(crop, box, angles, CENTRAL)))
        best = probs.max(axis=0)
        out.append(best / (np.linalg.norm(best) + 1e-9))
    return np.array(out, np.float32)


def contact_sheet(
    crops: Sequence[np.ndarray], groups: Sequence[Sequence[int]], path: str | Path, title: str = ""
) -> Path:
    """Write a PNG with one row per group: its index and size, then up to :data:`SHEET_ROW` crops."""
    label_w = 90
    head = 24 if title else 0
    rows = max(len(groups), 1)
    sheet = np.full((head + rows * (THUMB + 4), label_w + SHEET_ROW * (THUMB + 2), 3), 255, np.uint8)
    if title:
        cv2.putText(sheet, title, (4, 17), cv2.FONT_HERSHEY_SIMPLEX, 0.55, (0, 0, 0), 1, cv2.LINE_AA)
    for r, group in enumerate(groups):
        y = head + r * (THUMB + 4) + 2
        cv2.putText(
            sheet,
            f"#{r} ({len(group)})",
            (4, y + THUMB // 2 + 5),
            cv2.FONT_HERSHEY_SIMPLEX,
            0.5,
            (0, 0, 0),
            1,
        )
        for k, i in enumerate(list(group)[:SHEET_ROW]):
            crop = crops[i]
            thumb = cv2.resize(
                crop if crop.ndim == 3 else cv2.cvtColor(crop, cv2.COLOR_GRAY2BGR), (THUMB, THUMB)
            )
            x = label_w + k * (THUMB + 2)
            sheet[y : y + THUMB, x : x + THUMB] = thumb
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    if not cv2.imwrite(str(path), sheet):
        raise OSError(f"{path}: cannot write the contact sheet")
    return path
