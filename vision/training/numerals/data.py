"""Build the numeral reader's training and validation crops: renders over real backgrounds, plus real photos.

Why a cached array: rendering costs far more than a training epoch, so crops are cut once (the
runtime's cut, :func:`dicetower.vision.faces.numerals.numeral_crops`) and stored as ``.npz``: ``x``
``(N, INPUT, INPUT)`` float16 blobs (:func:`~dicetower.vision.faces.numerals.numeral_blob`), ``y``
the class (-1 when only the kind is known), ``y2`` a cocked die's second class (-1: none),
``kind`` the kind index into :data:`KIND_LABELS` (-1 when the class says it), ``source`` a
short name per crop.

Sources (split rules in code, never random by frame):

- renders (:mod:`.scenes`): train seeds from :data:`TRAIN_SEED`, val from
  :data:`VAL_SEED`; :data:`TEST_SEED` is never drawn here. Backgrounds are patches of the
  split's own real photos (:mod:`.backgrounds`); fonts are OpenCV's built-in sans plus the
  TrueType files of ``--fonts`` (default: the DejaVu, STIX and Computer Modern faces that
  matplotlib's wheel ships, when it is installed);
- ``rsandrini-d20`` (real d20 photos; videos split by ``splits.d20_splits``): the die's box
  from :mod:`.single_die_box`, cut at ``--turns`` random turns (class ``d20:face``), and a
  piece of the die at its edge (``none``);
- ``lurig-kinds`` (real, kind only; :func:`~dicetower.vision.eval.splits.split_of`): d10 teach the
  kind ``d10``; d4, d8 and d12 are ``none`` (dice the tower does not read);
- the pip-d6 photos (``byler-d6``, ``epanemu-dice3``, ``matteop65-d6-wood``,
  ``tomitomi3-gray-d6``, ``skovy-d6-crops``; :func:`~dicetower.vision.eval.splits.split_of`):
  class ``d6:face``.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import math
from multiprocessing import get_context
from pathlib import Path

import cv2
import numpy as np

from ...eval.splits import d20_split, d20_splits, split_of
from ...faces.numerals import INPUT, class_names, numeral_blob
from ...faces.pips import crop_die
from ...kinds import KINDS, NUMERAL_NETWORK_KINDS
from ...synth.die3d import BUILTIN_FONTS, Font
from ..backgrounds import BackgroundBank, load_bank
from .scenes import render_crop, render_none

__all__ = [
    "KIND_LABELS",
    "TEST_SEED",
    "TRAIN_SEED",
    "VAL_SEED",
    "build",
    "main",
    "real_samples",
    "render_samples",
    "training_fonts",
]

TRAIN_SEED = 1_000_000
VAL_SEED = 2_000_000
#: Held-out renders: used only by :mod:`.evaluate`.
TEST_SEED = 3_000_000
#: Kind labels: the reader's kinds, then ``none``.
KIND_LABELS: tuple[str, ...] = (*NUMERAL_NETWORK_KINDS, "none")
#: Share of each kind among rendered dice (more faces, more crops).
_KIND_WEIGHTS = {"d6": 0.8, "d6n": 1.2, "d10": 2.0, "d10t": 2.0, "d20": 3.5}
_NONE_SHARE = 0.07
_CLASS = {c: i for i, c in enumerate(class_names())}
#: matteop65's boxes cover the pip area only: the die body is about this much larger.
_MATTEO_BODY = 1.4
_MPL_FONTS = (
    "DejaVuSans.ttf",
    "DejaVuSans-Bold.ttf",
    "DejaVuSans-Oblique.ttf",
    "DejaVuSans-BoldOblique.ttf",
    "DejaVuSansMono.ttf",
    "DejaVuSansMono-Bold.ttf",
    "DejaVuSerif.ttf",
    "DejaVuSerif-Bold.ttf",
    "DejaVuSerif-Italic.ttf",
    "STIXGeneral.ttf",
    "STIXGeneralBol.ttf",
    "cmr10.ttf",
    "cmb10.ttf",
    "cmss10.ttf",
    "cmtt10.ttf",
)


def training_fonts(folder: Path | None = None) -> tuple[Font, ...]:
    """The built-in sans at its weights plus the TrueType files of ``folder`` (or matplotlib's)."""
    if folder is None:
        spec = importlib.util.find_spec("matplotlib")
        if spec is None or not spec.submodule_search_locations:
            return BUILTIN_FONTS
        folder = Path(next(iter(spec.submodule_search_locations))) / "mpl-data" / "fonts" / "ttf"
        files = [folder / f for f in _MPL_FONTS if (folder / f).is_file()]
    else:
        files = sorted(folder.glob("*.ttf"))
    return BUILTIN_FONTS + tuple(Font(str(f), 400) for f in files)


_BANK: BackgroundBank | None = None
_FONTS: tuple[Font, ...] = BUILTIN_FONTS


def _init(bank: BackgroundBank, fonts: tuple[Font, ...]) -> None:
    global _BANK, _FONTS
    _BANK, _FONTS = bank, fonts
    cv2.setNumThreads(1)


def _render_range(args: tuple[int, int]) -> tuple[np.ndarray, list[int], list[int]]:
    seed0, n = args
    kinds = list(_KIND_WEIGHTS)
    weights = np.array([_KIND_WEIGHTS[k] for k in kinds])
    weights /= weights.sum()
    crops, ys, y2s = [], [], []
    for i in range(n):
        seed = seed0 + i
        rng = np.random.default_rng(seed + 17)
        if rng.random() < _NONE_SHARE:
            crops.append(render_none(seed, bank=_BANK, fonts=_FONTS).crop)
            ys.append(0)
            y2s.append(-1)
            continue
        kind = str(rng.choice(kinds, p=weights))
        face = int(rng.choice(KINDS[kind].faces))
        c = render_crop(seed, kind, face, bank=_BANK, fonts=_FONTS)
        crops.append(c.crop)
        ys.append(_CLASS[f"{kind}:{face}"])
        y2s.append(_CLASS[f"{kind}:{c.second}"] if c.second is not None else -1)
    return numeral_blob(crops)[:, 0].astype(np.float16), ys, y2s


def render_samples(
    seed0: int, n: int, bank: BackgroundBank, fonts: tuple[Font, ...], workers: int = 2
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``n`` rendered crops from seeds ``seed0 ...``: (blobs, classes, second classes)."""
    chunk = 250
    jobs = [(seed0 + s, min(chunk, n - s)) for s in range(0, n, chunk)]
    if workers <= 1:
        _init(bank, fonts)
        parts = [_render_range(j) for j in jobs]
    else:
        with get_context("fork").Pool(workers, initializer=_init, initargs=(bank, fonts)) as pool:
            parts = pool.map(_render_range, jobs)
    x = np.concatenate([p[0] for p in parts]) if parts else np.zeros((0, INPUT, INPUT), np.float16)
    y = np.array([v for p in parts for v in p[1]], np.int16)
    y2 = np.array([v for p in parts for v in p[2]], np.int16)
    return x, y, y2


def _jitter(rng: np.random.Generator, box: tuple[float, float, float, float]) -> tuple[float, ...]:
    x, y, w, h = box
    s = max(w, h)
    dx, dy = rng.normal(0, 0.04 * s, 2)
    k = float(rng.uniform(0.92, 1.15))
    cx, cy = x + w / 2 + dx, y + h / 2 + dy
    return (cx - w * k / 2, cy - h * k / 2, w * k, h * k)


def _turns(rng: np.random.Generator, frame: np.ndarray, box: tuple, n: int) -> list[np.ndarray]:
    return [
        crop_die(frame, _jitter(rng, box), size=INPUT, angle=float(rng.uniform(0, 360))) for _ in range(n)
    ]


def _piece(rng: np.random.Generator, frame: np.ndarray, box: tuple) -> np.ndarray:
    x, y, w, h = box
    a = rng.uniform(0, 2 * math.pi)
    cx, cy = x + w / 2 + 0.45 * w * math.cos(a), y + h / 2 + 0.45 * h * math.sin(a)
    s = max(w, h) * float(rng.uniform(0.25, 0.45))
    return crop_die(frame, (cx - s / 2, cy - s / 2, s, s), size=INPUT, angle=float(rng.uniform(0, 360)))


def _rows(folder: Path) -> list[dict]:
    return [json.loads(line) for line in (folder / "manifest.jsonl").read_text().splitlines() if line.strip()]


def real_samples(
    datasets: Path, split: str, turns: int, seed: int
) -> tuple[list[np.ndarray], list[int], list[int], list[str]]:
    """Crops of the real photos of ``split`` (``train`` or ``val``): (crops, classes, kinds, sources)."""
    from ..single_die_box import boxes_for

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
        rows = _rows(d20)
        boxes = boxes_for(d20)
        splits = d20_splits((r["image"], r["dice"][0]["face"]) for r in rows)
        for r in rows:
            face = int(r["dice"][0]["face"])
            box = boxes.get(r["image"])
            if box is None or d20_split(splits, r["image"], face) != split:
                continue
            frame = cv2.imread(str(d20 / r["image"]))
            if frame is None:
                continue
            add(_turns(rng, frame, box, turns), _CLASS[f"d20:{face}"], -1, "rsandrini-d20")
            add([_piece(rng, frame, box)], 0, -1, "rsandrini-d20")
    lurig = datasets / "lurig-kinds"
    if (lurig / "manifest.jsonl").is_file():
        boxes = boxes_for(lurig)
        for r in _rows(lurig):
            box = boxes.get(r["image"])
            if box is None or split_of("lurig-kinds", r["image"]) != split:
                continue
            frame = cv2.imread(str(lurig / r["image"]))
            if frame is None:
                continue
            if r["dice"][0]["die"] == "d10":
                add(_turns(rng, frame, box, max(1, turns // 2)), -1, KIND_LABELS.index("d10"), "lurig-kinds")
            else:
                add(_turns(rng, frame, box, 1), 0, -1, "lurig-kinds")
    for name in ("byler-d6", "epanemu-dice3", "matteop65-d6-wood", "tomitomi3-gray-d6", "skovy-d6-crops"):
        folder = datasets / name
        if not (folder / "manifest.jsonl").is_file():
            continue
        for r in _rows(folder):
            if split_of(name, r["image"]) != split:
                continue
            frame = cv2.imread(str(folder / r["image"]))
            if frame is None:
                continue
            h, w = frame.shape[:2]
            for d in r["dice"]:
                if "box" in d:
                    x, y, bw, bh = d["box"]
                    if name == "matteop65-d6-wood":
                        s = max(bw, bh) * _MATTEO_BODY
                        x, y, bw, bh = x + bw / 2 - s / 2, y + bh / 2 - s / 2, s, s
                    box = (x, y, bw, bh)
                elif name == "tomitomi3-gray-d6":
                    box = (0.25 * w, 0.25 * h, 0.5 * w, 0.5 * h)
                else:
                    box = (0.08 * w, 0.08 * h, 0.84 * w, 0.84 * h)
                add(_turns(rng, frame, box, 1), _CLASS[f"d6:{d['face']}"], -1, name)
    return crops, ys, ks, src


def build(
    out: Path,
    datasets: Path,
    *,
    renders: int,
    val_renders: int,
    turns: int,
    workers: int = 2,
    fonts: tuple[Font, ...] | None = None,
) -> None:
    """Write ``out/train.npz`` and ``out/val.npz``."""
    out.mkdir(parents=True, exist_ok=True)
    fonts = fonts if fonts is not None else training_fonts()
    for split, seed0, n in (("train", TRAIN_SEED, renders), ("val", VAL_SEED, val_renders)):
        bank = load_bank(datasets, split=split)
        rx, ry, ry2 = render_samples(seed0, n, bank, fonts, workers)
        qc, qy, qk, qs = real_samples(datasets, split, turns if split == "train" else 1, seed0 + 7)
        blobs = [numeral_blob(qc[i : i + 512])[:, 0].astype(np.float16) for i in range(0, len(qc), 512)]
        qx = np.concatenate(blobs) if blobs else np.zeros((0, INPUT, INPUT), np.float16)
        np.savez(
            out / f"{split}.npz",
            x=np.concatenate([rx, qx]),
            y=np.concatenate([ry, np.array(qy, np.int16)]),
            y2=np.concatenate([ry2, np.full(len(qy), -1, np.int16)]),
            kind=np.concatenate([np.full(len(ry), -1, np.int8), np.array(qk, np.int8)]),
            source=np.array(["render"] * len(ry) + qs),
        )
        print(f"{split}: {len(ry)} renders, {len(qy)} real crops, {len(bank)} backgrounds", flush=True)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    p.add_argument("--out", type=Path, default=Path("runs/numerals"))
    p.add_argument("--datasets", type=Path, default=Path("../shared/datasets"))
    p.add_argument("--renders", type=int, default=60000)
    p.add_argument("--val-renders", type=int, default=4000)
    p.add_argument("--turns", type=int, default=4)
    p.add_argument("--workers", type=int, default=2)
    p.add_argument("--fonts", type=Path, default=None, help="a folder of .ttf files (default: matplotlib's)")
    a = p.parse_args(argv)
    cv2.setNumThreads(1)
    fonts = training_fonts(a.fonts)
    print(f"{len(fonts)} fonts", flush=True)
    build(
        a.out,
        a.datasets,
        renders=a.renders,
        val_renders=a.val_renders,
        turns=a.turns,
        workers=a.workers,
        fonts=fonts,
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
