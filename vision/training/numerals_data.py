"""Build the numeral reader's training and validation crops: renders plus real photos.

Why a cached array: rendering and locating cost far more than a training epoch on one core,
so crops are cut once (the runtime's cut, :func:`dicetower.vision.numerals.numeral_crops`) and
stored as ``.npz``: ``x`` (N, 64, 64) float16 blobs, ``y`` the class (-1 when only the kind is
known), ``kind`` the kind index into :data:`KIND_LABELS` (-1 when the class says it),
``source`` a short name per crop.

Sources (split rules in code, never random by frame):

- renders (:mod:`dicetower.vision.synth.numerals`): train seeds from :data:`TRAIN_SEED`, val
  from :data:`VAL_SEED`; the test seed :data:`TEST_SEED` is never drawn here. The box is jittered
  as the locator's boxes are; ``none`` crops are bare tray and off-centre pieces of dice;
- ``rsandrini-d20`` (real d20 photos, :mod:`.numerals_split`): the largest located box is the
  die (class ``d20:face``), other boxes smaller than a third of it are ``none``; train and val
  videos only;
- ``lurig-kinds`` (real, kind only): d10 photos teach the kind ``d10``; d4, d8 and d12 are
  ``none`` (dice the tower does not read); photos of the train split of
  :func:`~.splits.split_of` only;
- ``byler-d6`` and ``tomitomi3-gray-d6`` (real pip d6), train and val splits by
  :func:`~.splits.split_of`: class ``d6:face``.

Real crops are cut at several random turns (``--turns``): the tower sees dice every way up.
"""

from __future__ import annotations

import argparse
import json
import math
from pathlib import Path

import cv2
import numpy as np

from ..locate import locate_dice
from ..numerals import INPUT, NUMERAL_KINDS, class_names, numeral_blob
from ..pips import crop_die
from ..splits import split_of
from ..synth.numerals import FACES, KINDS, NumeralStyle, render_crop, render_tray
from .numerals_split import d20_split, d20_splits

__all__ = ["KIND_LABELS", "TEST_SEED", "TRAIN_SEED", "VAL_SEED", "build", "main", "render_samples"]

TRAIN_SEED = 1_000_000
VAL_SEED = 2_000_000
#: Held-out renders: used only by :mod:`.numerals_eval`.
TEST_SEED = 3_000_000
#: Kind labels: the reader's kinds, then ``none``.
KIND_LABELS: tuple[str, ...] = (*NUMERAL_KINDS, "none")
#: Share of each kind among rendered dice (d20 has the most faces).
_KIND_WEIGHTS = {"d6": 1.0, "d6n": 1.5, "d10": 2.0, "d10t": 2.0, "d20": 3.5}
_CLASS = {c: i for i, c in enumerate(class_names())}


def _jittered(rng: np.random.Generator, box: tuple[float, float, float, float]) -> tuple[float, ...]:
    x, y, w, h = box
    s = max(w, h)
    dx, dy = rng.normal(0, 0.05 * s, 2)
    k = float(rng.uniform(0.9, 1.15))
    cx, cy = x + w / 2 + dx, y + h / 2 + dy
    return (cx - w * k / 2, cy - h * k / 2, w * k, h * k)


def render_samples(seed0: int, n: int, *, none_share: float = 0.08) -> tuple[list[np.ndarray], list[int]]:
    """``n`` rendered crops from seeds ``seed0 ...``: (BGR crops, classes)."""
    kinds = list(_KIND_WEIGHTS)
    weights = np.array([_KIND_WEIGHTS[k] for k in kinds])
    weights /= weights.sum()
    crops, ys = [], []
    for i in range(n):
        rng = np.random.default_rng(seed0 + i)
        if rng.random() < none_share:
            crops.append(_none_crop(rng))
            ys.append(0)
            continue
        kind = str(rng.choice(kinds, p=weights))
        face = int(rng.choice(FACES[kind]))
        frame, box = render_crop(seed0 + i, kind, face)
        angle = float(rng.uniform(0, 360))
        crops.append(crop_die(frame, _jittered(rng, box), size=INPUT, angle=angle))
        ys.append(_CLASS[f"{kind}:{face}"])
    return crops, ys


def _none_crop(rng: np.random.Generator) -> np.ndarray:
    """Bare tray, or a piece of a die off-centre: what the locator may hand over that is no die."""
    kind = str(rng.choice(KINDS))
    frame, _ref, labels = render_tray(
        int(rng.integers(2**31)),
        [(kind, int(rng.choice(FACES[kind])))],
        (240, 240),
        style=NumeralStyle(die_size=(130.0, 200.0), perspective=0.0),
    )
    box = labels[0].box
    assert box is not None
    x, y, w, h = box
    if rng.random() < 0.5:  # a piece: a quarter-size box at the die's edge
        a = rng.uniform(0, 2 * math.pi)
        cx, cy = x + w / 2 + 0.45 * w * math.cos(a), y + h / 2 + 0.45 * h * math.sin(a)
        s = w * float(rng.uniform(0.25, 0.45))
    else:  # the tray beside it
        cx, cy, s = float(rng.uniform(20, 220)), float(rng.uniform(20, 220)), float(rng.uniform(20, 60))
    return crop_die(frame, (cx - s / 2, cy - s / 2, s, s), size=INPUT, angle=float(rng.uniform(0, 360)))


def _largest(cands: list) -> tuple[object | None, list]:
    if not cands:
        return None, []
    areas = [c.box[2] * c.box[3] for c in cands]
    i = int(np.argmax(areas))
    return cands[i], [c for j, c in enumerate(cands) if j != i and areas[j] < areas[i] / 3]


def _turns(rng: np.random.Generator, frame: np.ndarray, box: tuple, n: int) -> list[np.ndarray]:
    return [crop_die(frame, box, size=INPUT, angle=float(rng.uniform(0, 360))) for _ in range(n)]


def real_samples(
    datasets: Path, split: str, turns: int, seed: int
) -> tuple[list[np.ndarray], list[int], list[int], list[str]]:
    """Crops of the real photos of ``split`` (``train`` or ``val``): (crops, classes, kinds, sources)."""
    rng = np.random.default_rng(seed)
    crops: list[np.ndarray] = []
    ys: list[int] = []
    ks: list[int] = []
    src: list[str] = []

    def add(cs: list[np.ndarray], y: int, k: int, s: str) -> None:
        crops.extend(cs)
        ys.extend([y] * len(cs))
        ks.extend([k] * len(cs))
        src.extend([s] * len(cs))

    d20 = datasets / "rsandrini-d20"
    if (d20 / "manifest.jsonl").is_file():
        rows = [
            json.loads(line) for line in (d20 / "manifest.jsonl").read_text().splitlines() if line.strip()
        ]
        splits = d20_splits((r["image"], r["dice"][0]["face"]) for r in rows)
        for r in rows:
            face = int(r["dice"][0]["face"])
            if d20_split(splits, r["image"], face) != split:
                continue
            frame = cv2.imread(str(d20 / r["image"]))
            if frame is None:
                continue
            die, pieces = _largest(locate_dice(frame))
            if die is None:
                continue
            add(_turns(rng, frame, die.box, turns), _CLASS[f"d20:{face}"], -1, "rsandrini-d20")
            for p in pieces[:2]:
                add(_turns(rng, frame, p.box, 1), 0, -1, "rsandrini-d20")
    lurig = datasets / "lurig-kinds"
    if (lurig / "manifest.jsonl").is_file():
        for line in (lurig / "manifest.jsonl").read_text().splitlines():
            if not line.strip():
                continue
            r = json.loads(line)
            if split_of("lurig-kinds", r["image"]) != split:
                continue
            kind = r["dice"][0]["die"]
            frame = cv2.imread(str(lurig / r["image"]))
            if frame is None:
                continue
            die, _ = _largest(locate_dice(frame))
            if die is None:
                continue
            if kind == "d10":
                add(
                    _turns(rng, frame, die.box, max(1, turns // 2)),
                    -1,
                    KIND_LABELS.index("d10"),
                    "lurig-kinds",
                )
            else:
                add(_turns(rng, frame, die.box, 1), 0, -1, "lurig-kinds")
    for name in ("byler-d6", "tomitomi3-gray-d6"):
        folder = datasets / name
        if not (folder / "manifest.jsonl").is_file():
            continue
        for line in (folder / "manifest.jsonl").read_text().splitlines():
            if not line.strip():
                continue
            r = json.loads(line)
            if split_of(name, r["image"]) != split:
                continue
            frame = cv2.imread(str(folder / r["image"]))
            if frame is None:
                continue
            for d in r["dice"]:
                h, w = frame.shape[:2]
                box = tuple(d["box"]) if "box" in d else (0.1 * w, 0.1 * h, 0.8 * w, 0.8 * h)
                add(_turns(rng, frame, box, 1), _CLASS[f"d6:{d['face']}"], -1, name)
    return crops, ys, ks, src


def build(out: Path, datasets: Path, *, renders: int, val_renders: int, turns: int) -> None:
    """Write ``out/train.npz`` and ``out/val.npz``."""
    out.mkdir(parents=True, exist_ok=True)
    for split, seed0, n in (("train", TRAIN_SEED, renders), ("val", VAL_SEED, val_renders)):
        rc, ry = render_samples(seed0, n)
        qc, qy, qk, qs = real_samples(datasets, split, turns if split == "train" else 1, seed0 + 7)
        crops = rc + qc
        y = np.array(ry + qy, np.int16)
        kind = np.array([-1] * len(ry) + qk, np.int8)
        source = np.array(["render"] * len(ry) + qs)
        x = np.concatenate([numeral_blob(crops[i : i + 512]) for i in range(0, len(crops), 512)])[:, 0]
        np.savez(out / f"{split}.npz", x=x.astype(np.float16), y=y, kind=kind, source=source)
        print(f"{split}: {len(crops)} crops ({len(ry)} renders, {len(qc)} real)", flush=True)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    p.add_argument("--out", type=Path, default=Path("runs/numerals"))
    p.add_argument("--datasets", type=Path, default=Path("../shared/datasets"))
    p.add_argument("--renders", type=int, default=20000)
    p.add_argument("--val-renders", type=int, default=2500)
    p.add_argument("--turns", type=int, default=4)
    a = p.parse_args(argv)
    cv2.setNumThreads(1)
    build(a.out, a.datasets, renders=a.renders, val_renders=a.val_renders, turns=a.turns)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
