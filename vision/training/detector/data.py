"""The detector's training data: labelled photos of the shared datasets, cached, and random batches.

Each sample is a photo with the boxes of its die bodies; :func:`make_batch` cuts random
squares at :data:`~dicetower.vision.detector.INPUT_SIZE`, recolours them and draws the
heatmap and box-size targets the network learns (:mod:`.model`).
"""

from __future__ import annotations

import json
import math
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import cv2
import numpy as np
from dicetower.vision.detector import INPUT_SIZE, STRIDE
from dicetower.vision.eval.splits import d20_split, d20_splits, split_of
from dicetower.vision.manifest import ManifestEntry, read_manifest
from dicetower.vision.training.single_die_box import boxes_for

__all__ = [
    "CACHE_PATH",
    "DATASETS",
    "DATASETS_DIR",
    "MATTEO_BODY_SCALE",
    "MODEL_PATH",
    "RUN_SIZE",
    "Sample",
    "load_split",
    "make_batch",
    "split_photos",
    "tight_box_of_single_die",
]

ROOT = Path(__file__).resolve().parents[3]
DATASETS_DIR = ROOT / ".." / "shared" / "datasets"
CACHE_PATH = Path(tempfile.gettempdir()) / "dicetower_detector_cache.npz"
MODEL_PATH = ROOT / "vision" / "models" / "detector.onnx"

#: The real datasets the detector learns from, with the sampling weight of each: the d6 sets,
#: and the whole-die photos of d20 (``rsandrini-d20``) and of every kind (``lurig-kinds``), so a
#: d20 or d10 is found as one die, not as its face-sized facets.
DATASETS = {
    "byler-d6": 0.24,
    "epanemu-dice3": 0.24,
    "matteop65-d6-wood": 0.16,
    "tomitomi3-gray-d6": 0.16,
    "rsandrini-d20": 0.12,
    "lurig-kinds": 0.08,
}
#: Datasets of one whole die per photo with no box in the manifest: the box is
#: :func:`~dicetower.vision.training.single_die_box.boxes_for`'s.
BOXED_BY_SEARCH = ("rsandrini-d20", "lurig-kinds")
#: matteop65's boxes cover the pip area only: the die body is about this much larger.
MATTEO_BODY_SCALE = 1.4
#: Photos are cached with their longest side at most this (the model sees <= 384 px).
CACHE_SIDE = 448
#: The square a new card tells the runtime to use: 320 px (BENCHMARKS.md: as good end to end on
#: val as 384, fewer false alarms, 0.64x time).
RUN_SIZE = 320


@dataclass
class Sample:
    image: np.ndarray  #: BGR uint8, longest side <= CACHE_SIDE
    boxes: np.ndarray  #: (n, 4) float32 x, y, w, h of die bodies in ``image`` pixels
    size_known: bool  #: False where boxes are guesses of the body (matteop65)


def tight_box_of_single_die(image: np.ndarray) -> tuple[float, float, float, float]:
    """Box of the one die in a no-box photo (tomitomi3: white die centred in a grey cup).

    The manifest says only "the whole photo is one die"; the detector needs the body's
    extent. Take the brightest central blob (Otsu) when it is die-shaped and near the
    centre; else (bright cup rims merge with it) a centred box of half the photo, which is
    the median tomitomi3 die.
    """
    h, w = image.shape[:2]
    fallback = (w / 4, h / 4, w / 2, h / 2)
    grey = cv2.GaussianBlur(cv2.cvtColor(image, cv2.COLOR_BGR2GRAY), (5, 5), 0)
    _, mask = cv2.threshold(grey, 0, 255, cv2.THRESH_BINARY + cv2.THRESH_OTSU)
    mask = cv2.morphologyEx(mask, cv2.MORPH_OPEN, np.ones((5, 5), np.uint8))
    n, _, stats, cents = cv2.connectedComponentsWithStats(mask)
    for i in range(1, min(n, 256)):
        x, y, bw, bh, area = (int(v) for v in stats[i])
        near = math.hypot(cents[i][0] - w / 2, cents[i][1] - h / 2) < 0.12 * max(w, h)
        sized = 0.35 * min(w, h) <= max(bw, bh) <= 0.7 * min(w, h) and max(bw, bh) < 1.4 * min(bw, bh)
        if near and sized and area > 0.5 * bw * bh:
            return (float(x), float(y), float(bw), float(bh))
    return fallback


def split_photos(name: str, split: str) -> Iterator[tuple[str, ManifestEntry, np.ndarray]]:
    """``(relative path, entry, BGR photo)`` of each readable photo of dataset ``name`` in ``split``."""
    folder = DATASETS_DIR / name
    for entry in read_manifest(folder):
        rel = entry.image.relative_to(folder.resolve()).as_posix()
        if split_of(name, rel) != split:
            continue
        image = cv2.imread(str(entry.image), cv2.IMREAD_COLOR)
        if image is not None:
            yield rel, entry, image


def _searched_photos(name: str, split: str) -> Iterator[tuple[np.ndarray, list[tuple[float, ...]]]]:
    """``(BGR photo, [box])`` of the one-die photos of ``name`` in ``split``, boxed by search.

    Their manifests carry no box (and ``lurig-kinds`` no face), so rows are read as plain JSON;
    ``rsandrini-d20`` is split by whole video (``splits.d20_splits``): its neighbouring frames
    are near-duplicates.
    """
    folder = DATASETS_DIR / name
    rows = [json.loads(line) for line in (folder / "manifest.jsonl").read_text().splitlines() if line.strip()]
    boxes = boxes_for(folder)
    videos = (
        d20_splits((r["image"], int(r["dice"][0]["face"])) for r in rows) if name == "rsandrini-d20" else None
    )
    for r in rows:
        rel = r["image"]
        if videos is not None:
            if d20_split(videos, rel, int(r["dice"][0]["face"])) != split:
                continue
        elif split_of(name, rel) != split:
            continue
        box = boxes.get(rel)
        image = cv2.imread(str(folder / rel), cv2.IMREAD_COLOR) if box is not None else None
        if image is not None:  # no die found or no photo: better no sample than a wrong box
            yield image, [tuple(box)]


def _load_dataset(name: str, split: str) -> list[Sample]:
    out: list[Sample] = []
    if name in BOXED_BY_SEARCH:
        photos = _searched_photos(name, split)
    else:
        photos = ((image, [d.box for d in entry.dice]) for _rel, entry, image in split_photos(name, split))
    for image, labelled in photos:
        h, w = image.shape[:2]
        boxes = []
        for box in labelled:
            if box is None:
                boxes.append(tight_box_of_single_die(image))
            else:
                boxes.append(box)
        arr = np.array(boxes, np.float32).reshape(-1, 4)
        known = not name.startswith("matteop65")
        if not known:
            cx, cy = arr[:, 0] + arr[:, 2] / 2, arr[:, 1] + arr[:, 3] / 2
            side = np.maximum(arr[:, 2], arr[:, 3]) * MATTEO_BODY_SCALE
            arr = np.stack([cx - side / 2, cy - side / 2, side, side], 1).astype(np.float32)
        scale = min(1.0, CACHE_SIDE / max(h, w))
        if scale < 1.0:
            image = cv2.resize(image, (round(w * scale), round(h * scale)), interpolation=cv2.INTER_AREA)
            arr = arr * scale
        out.append(Sample(image, arr, known))
    return out


def load_split(split: str = "train", names: tuple[str, ...] = tuple(DATASETS)) -> dict[str, list[Sample]]:
    """Decoded, downscaled photos of ``split`` per dataset, cached in /tmp (never the repo)."""
    cache = CACHE_PATH.with_name(f"{CACHE_PATH.stem}_{split}_{'-'.join(sorted(names))}.npz")
    if cache.exists():
        z = np.load(cache, allow_pickle=False)
        result: dict[str, list[Sample]] = {}
        meta = json.loads(str(z["meta"]))
        for name, items in meta.items():
            result[name] = [Sample(z[f"im{k}"], z[f"bx{k}"], known) for k, known in items]
        return result
    result = {name: _load_dataset(name, split) for name in names}
    arrays: dict[str, np.ndarray] = {}
    meta_out: dict[str, list[tuple[int, bool]]] = {}
    k = 0
    for name, samples in result.items():
        meta_out[name] = []
        for s in samples:
            arrays[f"im{k}"], arrays[f"bx{k}"] = s.image, s.boxes
            meta_out[name].append((k, s.size_known))
            k += 1
    np.savez(cache, meta=np.array(json.dumps(meta_out)), **arrays)
    return result


# ----------------------------------------------------------------------------- augmentation


def _render(sample: Sample, out: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Warp one photo into an ``out`` x ``out`` canvas at a random die size, angle and place."""
    img, boxes = sample.image, sample.boxes
    h, w = img.shape[:2]
    med = float(np.median(np.maximum(boxes[:, 2], boxes[:, 3]))) if len(boxes) else 40.0
    # Die size in model pixels: log-uniform 9..110 (tiny dice to one die filling a photo).
    target = math.exp(rng.uniform(math.log(9), math.log(110 if out >= 200 else 60)))
    s = target / max(med, 1.0)
    # Don't blow a photo up so far that only a corner of it is visible, nor shrink a real
    # photo into a stamp on a flat border (mosaics supply the many-small-dice scenes).
    s = min(s, 3.0 * out / max(h, w))
    if max(h, w) > 300:
        s = max(s, 0.8 * out / max(h, w))
    quarter = int(rng.integers(4))
    angle = quarter * 90.0 + (rng.normal(0, 8) if rng.random() < 0.3 else 0.0)
    m = cv2.getRotationMatrix2D((w / 2, h / 2), angle, s)
    if rng.random() < 0.5:  # horizontal flip about the photo centre
        m = np.array([[-1, 0, w], [0, 1, 0]], np.float64) @ np.vstack([m, [0, 0, 1]])
        m = m[:2]
    # Place the photo centre (or a labelled die) somewhere in the canvas.
    if len(boxes) and rng.random() < 0.5:
        b = boxes[rng.integers(len(boxes))]
        anchor = np.array([b[0] + b[2] / 2, b[1] + b[3] / 2, 1.0])
    else:
        anchor = np.array([w / 2, h / 2, 1.0])
    pa = m @ anchor
    m[:, 2] += rng.uniform(0.2 * out, 0.8 * out, 2) - pa
    border = tuple(int(v) for v in rng.integers(0, 256, 3))
    canvas = cv2.warpAffine(
        img, m, (out, out), flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_CONSTANT, borderValue=border
    )
    if len(boxes):
        cx = boxes[:, 0] + boxes[:, 2] / 2
        cy = boxes[:, 1] + boxes[:, 3] / 2
        pts = np.stack([cx, cy, np.ones_like(cx)], 1) @ m.T
        rot = quarter % 2 == 1
        bw = (boxes[:, 3] if rot else boxes[:, 2]) * s
        bh = (boxes[:, 2] if rot else boxes[:, 3]) * s
        new = np.stack([pts[:, 0], pts[:, 1], bw, bh], 1).astype(np.float32)  # centre form
    else:
        new = np.zeros((0, 4), np.float32)
    return canvas, new


def _colour(img: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    out = img.astype(np.float32)
    if rng.random() < 0.5:
        out = out[:, :, rng.permutation(3)]
    if rng.random() < 0.1:
        g = out.mean(2, keepdims=True)
        out = np.repeat(g, 3, 2)
    out = out * rng.uniform(0.6, 1.4) + rng.uniform(-40, 40)
    out = out * rng.uniform(0.85, 1.15, 3)[None, None, :]
    if rng.random() < 0.25:
        k = int(rng.choice([3, 5]))
        out = cv2.GaussianBlur(out, (k, k), 0)
    if rng.random() < 0.25:
        out = out + rng.normal(0, rng.uniform(2, 12), out.shape)
    return np.clip(out, 0, 255).astype(np.uint8)


def _one(
    data: dict[str, list[Sample]], rng: np.random.Generator, out: int
) -> tuple[np.ndarray, np.ndarray, bool]:
    names = [n for n in DATASETS if data.get(n)]
    p = np.array([DATASETS[n] for n in names])
    name = names[rng.choice(len(names), p=p / p.sum())]
    sample = data[name][rng.integers(len(data[name]))]
    img, boxes = _render(sample, out, rng)
    return img, boxes, sample.size_known


def make_batch(
    data: dict[str, list[Sample]], rng: np.random.Generator, batch: int, size: int = INPUT_SIZE
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Images (B,3,S,S) float32 in 0..1, heatmaps (B,1,S/4,S/4), regression targets and masks."""
    cells = size // STRIDE
    xs = np.zeros((batch, 3, size, size), np.float32)
    heat = np.zeros((batch, 1, cells, cells), np.float32)
    reg = np.zeros((batch, 4, cells, cells), np.float32)  # dx, dy, log w, log h
    mask = np.zeros((batch, 2, cells, cells), np.float32)  # offset mask, size mask
    yy, xx = np.mgrid[0:cells, 0:cells].astype(np.float32)
    for i in range(batch):
        if rng.random() < 0.3:  # 2x2 mosaic: more small dice and more scenes per step
            half = size // 2
            img = np.zeros((size, size, 3), np.uint8)
            parts = []
            for q in range(4):
                sub, bx, known = _one(data, rng, half)
                oy, ox = (q // 2) * half, (q % 2) * half
                img[oy : oy + half, ox : ox + half] = sub
                keep = (bx[:, 0] >= 0) & (bx[:, 0] < half) & (bx[:, 1] >= 0) & (bx[:, 1] < half)
                bx = bx[keep]
                bx[:, 0] += ox
                bx[:, 1] += oy
                parts.append((bx, known))
        else:
            img, bx, known = _one(data, rng, size)
            keep = (bx[:, 0] >= 0) & (bx[:, 0] < size) & (bx[:, 1] >= 0) & (bx[:, 1] < size)
            parts = [(bx[keep], known)]
        img = _colour(img, rng)
        xs[i] = img.transpose(2, 0, 1).astype(np.float32) / 255.0
        for bx, known in parts:
            for cx, cy, bw, bh in bx[:64]:
                gx, gy = cx / STRIDE, cy / STRIDE
                ix, iy = int(gx), int(gy)
                if not (0 <= ix < cells and 0 <= iy < cells):
                    continue
                sigma = max(0.6, 0.12 * min(bw, bh) / STRIDE)
                g = np.exp(-((xx - gx + 0.5) ** 2 + (yy - gy + 0.5) ** 2) / (2 * sigma * sigma))
                np.maximum(heat[i, 0], g, out=heat[i, 0])
                heat[i, 0, iy, ix] = 1.0
                reg[i, 0, iy, ix] = gx - ix
                reg[i, 1, iy, ix] = gy - iy
                reg[i, 2, iy, ix] = math.log(max(bw, 1.0) / STRIDE)
                reg[i, 3, iy, ix] = math.log(max(bh, 1.0) / STRIDE)
                mask[i, 0, iy, ix] = 1.0
                mask[i, 1, iy, ix] = 1.0 if known else 0.0
    return xs, heat, reg, mask


# ----------------------------------------------------------------------------- model
