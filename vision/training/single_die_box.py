"""Boxes of the one die in single-die photos whose manifest gives no box (rsandrini-d20, lurig-kinds).

Why: those manifests say only "the whole photo is one die", yet the die covers a tenth to a
half of the photo, and training crops, background patches and detector targets need its body.
The scenes are plain (one die on coloured card, white paper or wood, lit from one side), so
the background is learned from the photo's border and the die is what differs from it:

* a quadratic surface per Lab channel, fitted robustly to the border, follows the light's
  fall-off; the border's residuals fall into a few clusters (wood: light and dark grain),
  each with its own spread, and a pixel's score is its Mahalanobis distance to the nearest;
* a shadow dims the surface's light but keeps its colour, so the score compares each pixel
  with the background dimmed to the pixel's own luminance (down to :data:`_SHADOW_MIN`):
  soft shadows score low, a black die (far darker than any shadow) scores high;
* hysteresis and morphology join the die's pieces (speckles, translucent bodies, numerals);
  the big, central, die-shaped component is taken and its faint fringe (shadow cores,
  reflections on varnished wood) trimmed against the blob's own strength;
* :func:`cv2.grabCut`, started from that guess in a chroma-weighted Lab image (a die's
  shaded facet keeps the die's hue, a shadow the background's), settles the outline on the
  die's edges and drops shadow the guess still holds.

Where no component has a die's size and shape, or grabCut keeps under :data:`_GC_AGREE` of the
first guess's area (the two disagree on where the die is), the answer is ``None``. A box that
misses part of the die is worse than one slightly too big, so each step leans to keeping die pixels.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import cv2
import numpy as np

__all__ = ["DieMask", "boxes_for", "die_mask", "find_die_box", "main", "photo_prefix"]

ROOT = Path(__file__).resolve().parents[2]
#: Where :func:`boxes_for` keeps its answers, one JSON file per dataset.
CACHE_DIR = ROOT / "runs" / "single_die_boxes"
#: Bumped whenever the method changes, so that stale caches are recomputed.
VERSION = 1

#: Longest side (px) the photo is worked on at; boxes are scaled back to the photo.
_WORK = 240
#: Shortest photo side (px) searched at all.
_MIN_PHOTO = 48
#: Width (px at work scale) of the border strip the background is learned from.
_BORDER = 8

#: Gaussian blur (work px) before scoring: quietens wood grain and paper noise against the die's body.
_BLUR = 1.5
#: Background clusters learned from the border, the smallest share of the border one may hold,
#: and the least spread (L, a, b variance) each is given.
_CLUSTERS = 3
_MIN_SHARE = 0.08
_COV_FLOOR = np.diag([1.0, 0.25, 0.25])
#: The darkest shadow, as a fraction of the background's light (linear RGB).
_SHADOW_MIN = 0.45
#: Luminance weights of linear B, G, R.
_LUMA = np.array([0.0722, 0.7152, 0.2126], np.float32)
#: Score above which a pixel is foreground, and the score its component must reach somewhere.
_FG = 8.0
_STRONG = 12.0
#: A blob is trimmed at this fraction of its upper-quartile score, kept within [_FG, _FG_MAX].
_REL = 0.25
_FG_MAX = 20.0
#: GrabCut refinement: margin around the first guess, the inner part kept as sure die and the ring
#: that may join (fractions of its size), iterations.
_GC_GROW = 0.25
_GC_CORE = 0.3
_GC_NEAR = 0.3
_GC_ITER = 4
#: Pixels of the first guess scoring under this fraction of its median start as probable background.
_GC_FAINT = 0.5
#: Scale of lightness and of chroma in the image grabCut sees.
_GC_L = 0.5
_GC_AB = 2.0
#: A die's box side as a fraction of the photo's short side, its largest aspect ratio, the least
#: share of its box it fills (a d4 seen edge-on fills half), and how many components are tried.
_MIN_SIDE = 0.06
_MAX_SIDE = 0.8
_MAX_ASPECT = 2.2
_MIN_FILL = 0.4
_TRIES = 3
#: GrabCut's answer must hold at least this share of the first guess's area, or the die is not trusted.
_GC_AGREE = 0.45

Box = tuple[float, float, float, float]


@dataclass
class DieMask:
    """The stages of :func:`die_mask` (work-scale arrays), kept for drawing and tests."""

    scale: float  #: photo px per work px
    score: np.ndarray  #: float32, distance to the background dimmed as by a shadow (border spreads)
    plain: np.ndarray  #: float32, distance to the lit background (border spreads)
    fg: np.ndarray  #: uint8 0/255, pixels that differ, cleaned
    blob: np.ndarray | None = None  #: uint8 0/255, the component taken, or None
    final: np.ndarray | None = None  #: uint8 0/255, the die after refinement, or None
    box: Box | None = None  #: the die's box in photo px, or None


def _fit_surface(xy: np.ndarray, values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Robust quadratic fit of each column of ``values`` over ``xy``: (coefficients (6, c), inlier mask)."""
    x, y = xy[:, 0], xy[:, 1]
    design = np.stack([np.ones_like(x), x, y, x * x, y * y, x * y], 1)
    keep = np.ones(len(values), bool)
    coef = np.zeros((6, values.shape[1]), np.float64)
    for _ in range(4):
        coef, *_ = np.linalg.lstsq(design[keep], values[keep], rcond=None)
        res = values - design @ coef
        mad = np.median(np.abs(res[keep] - np.median(res[keep], 0)), 0) * 1.4826 + 0.5
        keep = np.all(np.abs(res) < 3.0 * mad, 1)
    return coef, keep


def _linear(bgr: np.ndarray) -> np.ndarray:
    """sRGB-encoded values in [0, 1] to linear light."""
    return np.where(bgr <= 0.04045, bgr / 12.92, ((bgr + 0.055) / 1.055) ** 2.4).astype(np.float32)


def _gamma(lin: np.ndarray) -> np.ndarray:
    """Linear light in [0, 1] to sRGB-encoded values."""
    lin = np.clip(lin, 0.0, 1.0)
    return np.where(lin <= 0.0031308, lin * 12.92, 1.055 * lin ** (1 / 2.4) - 0.055).astype(np.float32)


def _clusters(res: np.ndarray) -> list[tuple[np.ndarray, np.ndarray]]:
    """(mean, covariance) of up to :data:`_CLUSTERS` clusters of border residuals ``res`` (n, 3).

    Plain k-means started at lightness quantiles (deterministic); a cluster holding under
    :data:`_MIN_SHARE` of the border (a stray object, a die touching the edge) is dropped.
    """
    qs = np.linspace(0.15, 0.85, _CLUSTERS)
    order = np.argsort(res[:, 0])
    centres = res[order[(qs * (len(res) - 1)).astype(int)]].copy()
    scale = 1.0 / (res.std(0) + 1e-3)
    label = np.zeros(len(res), int)
    for _ in range(10):
        label = np.argmin((((res[:, None, :] - centres[None]) * scale) ** 2).sum(2), 1)
        for j in range(len(centres)):
            if np.any(label == j):
                centres[j] = res[label == j].mean(0)
    out = []
    for j in range(len(centres)):
        part = res[label == j]
        if len(part) >= max(_MIN_SHARE * len(res), 10):
            out.append((part.mean(0), np.cov(part.T) + _COV_FLOOR))
    return out or [(res.mean(0), np.cov(res.T) + _COV_FLOOR)]


def die_mask(image: np.ndarray) -> DieMask:
    """Every stage of the search for the die in BGR ``image`` (see the module's description)."""
    if image.ndim == 2:
        image = cv2.cvtColor(image, cv2.COLOR_GRAY2BGR)
    image = np.ascontiguousarray(image[..., :3])
    h0, w0 = image.shape[:2]
    if min(h0, w0) < _MIN_PHOTO:
        raise ValueError(f"photo of {w0}x{h0} px is too small to find a die in (least side {_MIN_PHOTO})")
    k = _WORK / max(h0, w0)
    small = cv2.resize(image, (max(1, round(w0 * k)), max(1, round(h0 * k))), interpolation=cv2.INTER_AREA)
    h, w = small.shape[:2]
    blurred = cv2.GaussianBlur(small, (0, 0), _BLUR)
    lab = cv2.cvtColor(blurred.astype(np.float32) / 255.0, cv2.COLOR_BGR2Lab)

    ys, xs = np.mgrid[0:h, 0:w].astype(np.float32)
    xn, yn = (xs - w / 2) / (w / 2), (ys - h / 2) / (h / 2)
    border = np.zeros((h, w), bool)
    border[:_BORDER], border[-_BORDER:], border[:, :_BORDER], border[:, -_BORDER:] = True, True, True, True
    xy = np.stack([xn[border], yn[border]], 1).astype(np.float64)
    coef, inl = _fit_surface(xy, lab[border].astype(np.float64))
    design = np.stack([np.ones_like(xn), xn, yn, xn * xn, yn * yn, xn * yn], -1).astype(np.float64)
    bg = (design @ coef).astype(np.float32)
    res = lab - bg

    # The border's residuals fall into a few clusters (wood: light and dark grain); each keeps its spread.
    models = [
        (mu.astype(np.float32), np.linalg.inv(c).astype(np.float32))
        for mu, c in _clusters(res[border][inl].astype(np.float64))
    ]

    def distance(d: np.ndarray) -> np.ndarray:
        """Mahalanobis distance of residuals ``d`` (h, w, 3) to the nearest cluster."""
        out = np.full(d.shape[:2], np.inf, np.float32)
        for mu, inv in models:
            e = d - mu
            np.minimum(out, ((e @ inv) * e).sum(-1), out=out)
        return np.sqrt(np.maximum(out, 0.0))

    # A shadow dims the background's light (linear RGB) by a factor down to _SHADOW_MIN and keeps
    # its colour: compare each pixel with the background dimmed to the pixel's own luminance.
    bg_lin = _linear(np.clip(cv2.cvtColor(bg, cv2.COLOR_Lab2BGR), 0.0, 1.0))
    px_lin = _linear(blurred.astype(np.float32) / 255.0)
    dim = np.clip((px_lin @ _LUMA) / np.maximum(bg_lin @ _LUMA, 1e-4), _SHADOW_MIN, 1.0)
    shaded = cv2.cvtColor(_gamma(bg_lin * dim[..., None]), cv2.COLOR_BGR2Lab)
    score = distance(lab - shaded)
    plain = distance(res)

    weak = (score > _FG).astype(np.uint8)
    n, lab_weak = cv2.connectedComponents(weak)
    seeded = np.zeros(n, bool)
    seeded[np.unique(lab_weak[score > _STRONG])] = True
    seeded[0] = False
    fg = seeded[lab_weak].astype(np.uint8) * 255
    fg = cv2.morphologyEx(fg, cv2.MORPH_OPEN, _disc(3))
    fg = cv2.morphologyEx(fg, cv2.MORPH_CLOSE, _disc(9))

    for blob in _candidates(fg):
        guess = _trim(blob, score)
        final = _grabcut(small, guess, score)
        if np.count_nonzero(final) < _GC_AGREE * np.count_nonzero(guess):
            continue  # the colour models and the score disagree on where the die is
        if _die_sized(final):
            x, y, bw, bh = cv2.boundingRect(final)
            return DieMask(1 / k, score, plain, fg, blob, final, (x / k, y / k, bw / k, bh / k))
    return DieMask(1 / k, score, plain, fg)


def _chroma_weighted(bgr: np.ndarray) -> np.ndarray:
    """8-bit Lab with lightness damped and chroma stretched: the colour space grabCut works in here.

    A die's shaded facet keeps the die's hue while a shadow keeps the background's, so hue should
    weigh more than lightness in grabCut's colour models and edges.
    """
    lab = cv2.cvtColor(bgr, cv2.COLOR_BGR2Lab).astype(np.float32)
    lab[..., 0] *= _GC_L
    lab[..., 1:] = 128.0 + (lab[..., 1:] - 128.0) * _GC_AB
    return np.clip(lab, 0, 255).astype(np.uint8)


def _grabcut(small: np.ndarray, die: np.ndarray, score: np.ndarray) -> np.ndarray:
    """``die`` settled on the photo's edges by :func:`cv2.grabCut`, started from it.

    The start: sure die where the guess's inner part scores above its median, probable die
    over the rest of the guess except its faint pixels (likely shadow), probable background
    in those and a ring around the guess, sure background beyond. Returns ``die`` unchanged
    where grabCut cannot run (the guess fills its whole window).
    """
    x, y, bw, bh = cv2.boundingRect(die)
    side = max(bw, bh)
    h, w = die.shape
    g = max(4, round(_GC_GROW * side))
    x0, y0, x1, y1 = max(0, x - g), max(0, y - g), min(w, x + bw + g), min(h, y + bh + g)
    roi = die[y0:y1, x0:x1] > 0
    sc = score[y0:y1, x0:x1]
    middle = float(np.median(sc[roi]))
    core = cv2.erode(roi.astype(np.uint8), _disc(max(3, round(_GC_CORE * side) | 1))) > 0
    near = cv2.dilate(roi.astype(np.uint8), _disc(max(3, round(_GC_NEAR * side) | 1))) > 0
    mask = np.full(roi.shape, cv2.GC_BGD, np.uint8)
    mask[near] = cv2.GC_PR_BGD
    mask[roi & (sc >= _GC_FAINT * middle)] = cv2.GC_PR_FGD
    mask[core & (sc >= middle)] = cv2.GC_FGD
    if not np.any(mask == cv2.GC_FGD) or not np.any(mask == cv2.GC_BGD):
        return die
    bgd, fgd = np.zeros((1, 65), np.float64), np.zeros((1, 65), np.float64)
    try:
        cv2.grabCut(
            _chroma_weighted(small[y0:y1, x0:x1]), mask, None, bgd, fgd, _GC_ITER, cv2.GC_INIT_WITH_MASK
        )
    except cv2.error:
        return die
    fg = np.isin(mask, (cv2.GC_FGD, cv2.GC_PR_FGD)).astype(np.uint8) * 255
    fg = cv2.morphologyEx(fg, cv2.MORPH_OPEN, _disc(3))
    n, labels, stats, _ = cv2.connectedComponentsWithStats(fg)
    if n < 2:
        return die
    biggest = 1 + int(np.argmax(stats[1:, cv2.CC_STAT_AREA]))
    out = np.zeros_like(die)
    out[y0:y1, x0:x1] = _filled((labels == biggest).astype(np.uint8) * 255)
    return out


def _trim(blob: np.ndarray, score: np.ndarray) -> np.ndarray:
    """``blob`` less its faint fringe: shadow cores and reflections score far below a die's body.

    The threshold follows the blob's own strength (a fraction of its upper quartile score), so
    a faint die (white on pale wood) keeps its whole body.
    """
    level = float(np.percentile(score[blob > 0], 75))
    t = float(np.clip(_REL * level, _FG, _FG_MAX))
    core = ((score > t) & (blob > 0)).astype(np.uint8) * 255
    core = cv2.morphologyEx(core, cv2.MORPH_OPEN, _disc(3))
    core = cv2.morphologyEx(core, cv2.MORPH_CLOSE, _disc(9))
    n, labels, stats, _ = cv2.connectedComponentsWithStats(core)
    if n < 2:
        return blob
    biggest = 1 + int(np.argmax(stats[1:, cv2.CC_STAT_AREA]))
    return _filled((labels == biggest).astype(np.uint8) * 255)


def _disc(size: int) -> np.ndarray:
    return cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (size, size))


def _filled(mask: np.ndarray) -> np.ndarray:
    cnts, _ = cv2.findContours(mask, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_SIMPLE)
    out = np.zeros_like(mask)
    cv2.drawContours(out, cnts, -1, 255, cv2.FILLED)
    return out


def _candidates(fg: np.ndarray) -> list[np.ndarray]:
    """Components of ``fg`` big enough to hold a die, holes filled, likeliest first (big, central)."""
    h, w = fg.shape
    n, labels, stats, cents = cv2.connectedComponentsWithStats(fg)
    ranked = []
    for i in range(1, n):
        bw, bh, area = (int(v) for v in stats[i, 2:])
        if max(bw, bh) < _MIN_SIDE * min(h, w):
            continue
        d = np.hypot((cents[i][0] - w / 2) / w, (cents[i][1] - h / 2) / h)
        ranked.append((area * float(np.exp(-((d / 0.35) ** 2))), i))
    ranked.sort(reverse=True)
    return [_filled((labels == i).astype(np.uint8) * 255) for _, i in ranked[:_TRIES]]


def _die_sized(die: np.ndarray) -> bool:
    """Whether mask ``die`` has a die's size and shape: a compact convex-ish body, not a streak or a sheet."""
    h, w = die.shape
    _, _, bw, bh = cv2.boundingRect(die)
    side, short = max(bw, bh), min(bw, bh)
    area = int(np.count_nonzero(die))
    return (
        _MIN_SIDE * min(h, w) <= side <= _MAX_SIDE * min(h, w)
        and short >= side / _MAX_ASPECT
        and area >= _MIN_FILL * bw * bh
    )


def find_die_box(image: np.ndarray) -> Box | None:
    """``(x, y, w, h)`` in photo px of the one die in BGR ``image``, or None when none is found."""
    return die_mask(image).box


def photo_prefix(image: str, die: str = "") -> str:
    """A photo's background prefix: its file name less the frame number (``d20_wood0132`` -> ``d20_wood``).

    Lurig's plain ``d4`` photos glue the kind to the frame (``d4000``); ``die`` keeps the kind whole.
    """
    stem = Path(image).stem
    if die and stem.startswith(die) and stem[len(die) :].isdigit():
        return die
    return re.sub(r"_?\d+$", "", stem) or stem


def _rows(folder: Path) -> list[dict]:
    lines = (folder / "manifest.jsonl").read_text().splitlines()
    return [json.loads(line) for line in lines if line.strip()]


def boxes_for(folder: Path, *, refresh: bool = False, cache_dir: Path | None = None) -> dict[str, Box | None]:
    """The die's box in each photo of ``folder``, keyed by the manifest's ``image``.

    A photo whose die is not found, or that cannot be read, maps to None. Answers are cached as
    ``<cache_dir>/<folder name>.json`` (default ``runs/single_die_boxes/``) and recomputed when
    :data:`VERSION` or the manifest's photos change, or ``refresh`` is set.
    """
    folder = Path(folder)
    rows = _rows(folder)
    images = [row["image"] for row in rows]
    cache = (CACHE_DIR if cache_dir is None else Path(cache_dir)) / f"{folder.name}.json"
    if not refresh and cache.is_file():
        try:
            saved = json.loads(cache.read_text())
        except (OSError, ValueError):
            saved = {}
        boxes = saved.get("boxes") if isinstance(saved, dict) else None
        if isinstance(boxes, dict) and saved.get("version") == VERSION and set(boxes) == set(images):
            return {k: (tuple(v) if v is not None else None) for k, v in boxes.items()}
    out: dict[str, Box | None] = {}
    for rel in images:
        image = cv2.imread(str(folder / rel), cv2.IMREAD_COLOR)
        try:
            box = find_die_box(image) if image is not None else None
        except ValueError:
            box = None
        out[rel] = None if box is None else tuple(round(float(v), 1) for v in box)
    cache.parent.mkdir(parents=True, exist_ok=True)
    tmp = cache.with_name(cache.name + ".tmp")
    tmp.write_text(json.dumps({"version": VERSION, "boxes": out}, indent=0))
    tmp.replace(cache)
    return out


def main(argv: Sequence[str] | None = None) -> int:
    """CLI: compute (or read) the boxes of each dataset folder and print box / None counts per background."""
    ap = argparse.ArgumentParser(
        prog="python -m dicetower.vision.training.single_die_box",
        description="Find and cache the die's box in single-die photos.",
    )
    ap.add_argument("folders", nargs="+", type=Path, help="dataset folders (with manifest.jsonl)")
    ap.add_argument("--refresh", action="store_true", help="recompute even where a cache exists")
    args = ap.parse_args(argv)
    cv2.setNumThreads(1)
    for folder in args.folders:
        if not (folder / "manifest.jsonl").is_file():
            print(f"{folder}: no manifest.jsonl", file=sys.stderr)
            return 2
        t0 = time.perf_counter()
        boxes = boxes_for(folder, refresh=args.refresh)
        dt = time.perf_counter() - t0
        found: Counter[str] = Counter()
        missing: Counter[str] = Counter()
        for row in _rows(folder):
            p = photo_prefix(row["image"], row["dice"][0].get("die", ""))
            (found if boxes.get(row["image"]) is not None else missing)[p] += 1
        print(f"{folder.name}: {sum(found.values())} boxes, {sum(missing.values())} None ({dt:.1f} s)")
        for p in sorted(found.keys() | missing.keys()):
            print(f"  {p:<20} {found[p]:>5} box {missing[p]:>5} None")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
