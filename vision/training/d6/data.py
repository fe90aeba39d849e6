"""The face reader's training data: labelled crops cut from the shared datasets, cached under ``--work``.

For every labelled d6 a *context* square (:data:`CTX_FACTOR` x the die, :data:`CTX` px, colour) is
cut from the photo and stored with its face, split (:func:`~dicetower.vision.eval.splits.split_of`) and
dataset; background squares from the same photos become class 0 ("not a readable die"). The
training crops are cut from the contexts at random (:mod:`.augment`), the calibration crops
as the runtime cuts them. Photos are read once; nothing is written to the repo. Beside the
labelled dice: the pipeline's false alarms (:func:`build_hard_negatives`), whatever it proposes on
photos of other dice (:func:`build_other_dice_negatives`), and rendered dice seen from above
(:func:`build_synth_cache`) and at an angle (:func:`build_oblique_cache`), each its own group.

Why matteop65 boxes are enlarged (:func:`enlarged_box`): they outline the top face's pips, not the
die; the die side is estimated from the pip area (a lone 1-pip is about half the pip area of the
other faces).
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import cv2
import numpy as np

from ...eval.errata import apply_errata, errata_for
from ...eval.splits import split_of
from ...faces.pips import INPUT, crop_die
from ...manifest import LabelledDie, ManifestEntry, read_manifest

__all__ = [
    "CTX",
    "CTX_FACTOR",
    "D6_DATASETS",
    "OBLIQUE_GROUP",
    "OTHER_DICE",
    "OTHER_DICE_WEIGHT",
    "OTHER_GROUP",
    "SPLIT_ID",
    "build_cache",
    "build_hard_negatives",
    "build_oblique_cache",
    "build_other_dice_negatives",
    "build_synth_cache",
    "cache_name",
    "enlarged_box",
    "false_alarms",
    "thin_train",
    "tomitomi_box",
    "training_box",
]

D6_DATASETS = ("byler-d6", "epanemu-dice3", "matteop65-d6-wood", "tomitomi3-gray-d6")
CTX = 112  #: context square side in the cache
CTX_FACTOR = 2.5  #: context side / die side
SPLIT_ID = {"train": 0, "val": 1, "test": 2}
MAX_PHOTOS = 20_000  #: per dataset; bounds the cache build
#: Datasets of other kinds of dice. Whatever the pipeline proposes on their photos is class 0
#: for the d6 reader ("no d6 face here"), never a face (:func:`build_other_dice_negatives`).
OTHER_DICE = ("rsandrini-d20",)
#: Their group id: after the d6 datasets and the rendered dice ("synth").
OTHER_GROUP = len(D6_DATASETS) + 1
#: Rendered dice seen at an angle (:func:`build_oblique_cache`): after the other dice.
OBLIQUE_GROUP = len(D6_DATASETS) + 2
#: Their share of the sampled training crops against a d6 dataset of the same size: enough to
#: learn "a numeral is not a pip", little enough not to starve the d6 faces of a fine-tune.
OTHER_DICE_WEIGHT = 0.25


def enlarged_box(dataset: str, box: tuple[float, float, float, float], face: int) -> tuple[float, ...]:
    """The whole-die box for a labelled box (only matteop65's pip-area boxes change)."""
    if not dataset.startswith("matteop65"):
        return box
    x, y, w, h = box
    s = max(w, h) * (2.7 if face == 1 else 1.45)
    cx, cy = x + w / 2, y + h / 2
    return (cx - s / 2, cy - s / 2, s, s)


def training_box(dataset: str, img: np.ndarray, die: LabelledDie) -> tuple[float, ...]:
    """The whole-die box training cuts for a labelled die: a no-box photo's one die is found
    (:func:`tomitomi_box`), a pip-area box is enlarged (:func:`enlarged_box`)."""
    box = die.box if die.box is not None else tomitomi_box(img)
    return enlarged_box(dataset, box, die.face)


def tomitomi_box(img: np.ndarray) -> tuple[float, float, float, float]:
    """The die in a tomitomi3 crop: the brightest die-sized window (a white die in a grey cup).

    All its dice are the same size (about 0.4 of the photo across, up to 0.55 with rotation),
    so only the centre is searched for; thresholds fail on its lighting gradients.
    """
    g = cv2.cvtColor(img, cv2.COLOR_BGR2GRAY) if img.ndim == 3 else img
    h, w = g.shape
    k = max(3, int(0.33 * min(h, w)) | 1)
    # Close the dark pips, then score a window by how much brighter it is than its surround.
    f = cv2.morphologyEx(g, cv2.MORPH_CLOSE, np.ones((11, 11), np.uint8)).astype(np.float32)
    m = cv2.blur(f, (k, k)) - cv2.blur(f, (2 * k + 1, 2 * k + 1))
    # The die is centred in the cup; the photo's bright corners are outside it.
    m[: int(0.3 * h), :] = m[int(0.7 * h) :, :] = 0
    m[:, : int(0.3 * w)] = m[:, int(0.7 * w) :] = 0
    cy, cx = np.unravel_index(int(np.argmax(m)), m.shape)
    s = 0.47 * min(h, w)
    return (cx - s / 2, cy - s / 2, s, s)


def _context(img: np.ndarray, cx: float, cy: float, side: float) -> np.ndarray:
    m = np.array([[CTX / (side * CTX_FACTOR), 0, 0], [0, CTX / (side * CTX_FACTOR), 0]], np.float64)
    m[0, 2] = CTX / 2 - cx * m[0, 0]
    m[1, 2] = CTX / 2 - cy * m[1, 1]
    return cv2.warpAffine(img, m, (CTX, CTX), flags=cv2.INTER_AREA, borderMode=cv2.BORDER_REPLICATE)


def _backgrounds(img: np.ndarray, boxes: list[tuple[float, ...]], rng: np.random.Generator, k: int) -> list:
    """Up to ``k`` die-sized squares of ``img`` that overlap no labelled die."""
    h, w = img.shape[:2]
    sides = [max(b[2], b[3]) for b in boxes] or [min(h, w) / 8]
    out = []
    for _ in range(k * 10):
        if len(out) >= k:
            break
        s = float(rng.choice(sides)) * rng.uniform(0.8, 1.5)
        cx, cy = rng.uniform(s / 2, w - s / 2), rng.uniform(s / 2, h - s / 2)
        clear = all(
            abs(cx - (b[0] + b[2] / 2)) > (s + b[2]) / 2 + 2
            or abs(cy - (b[1] + b[3] / 2)) > (s + b[3]) / 2 + 2
            for b in boxes
        )
        if clear:
            out.append(_context(img, cx, cy, s))
    return out


def _labelled_photos(
    datasets_root: Path, names: tuple[str, ...], errata_dir: Path | None = None
) -> Iterator[tuple[int, str, ManifestEntry, int]]:
    """``(dataset index, dataset, entry, split id)`` for each listed photo of the datasets present.

    The one walk over the shared datasets that every cache builds on: a missing dataset is
    skipped, each is bounded by :data:`MAX_PHOTOS`, and the split comes from :func:`split_of`.
    ``errata_dir``: labels a person corrected (:mod:`dicetower.vision.eval.errata`) replace the
    published ones, so a plainly wrong label does not teach the wrong face.
    """
    for di, name in enumerate(names):
        folder = datasets_root / name
        if not folder.is_dir():
            continue
        entries: Iterable[ManifestEntry] = read_manifest(folder)
        fixes = errata_for(folder, errata_dir) if errata_dir is not None else []
        if fixes:
            entries = apply_errata(list(entries), fixes)
        for pi, entry in enumerate(entries):
            if pi >= MAX_PHOTOS:
                break
            yield di, name, entry, SPLIT_ID[split_of(name, f"images/{entry.image.name}")]


def _cached(out: Path) -> dict[str, np.ndarray] | None:
    """The arrays a cache builder stored at ``out`` before, if any (the builds take minutes)."""
    if not out.is_file():
        return None
    with np.load(out) as z:
        return {k: z[k] for k in z.files}


def _store(out: Path, ctx: list, crop: list, face: Any, split: Any, ds: Any) -> dict[str, np.ndarray]:
    """Stack one builder's crops into the cache's arrays and save them at ``out``."""
    arrays = {
        "ctx": np.stack(ctx),
        "crop": np.stack(crop),
        "face": np.asarray(face, np.int64),
        "split": np.asarray(split, np.int64),
        "ds": np.asarray(ds, np.int64),
    }
    out.parent.mkdir(parents=True, exist_ok=True)
    np.savez(out, **arrays)
    return arrays


def build_cache(
    datasets_root: Path, out: Path, seed: int = 0, errata_dir: Path | None = None
) -> dict[str, np.ndarray]:
    """Cut and store every die's context (and background squares); returns the arrays.

    ``errata_dir`` corrects labels first (:func:`_labelled_photos`); give each errata its own
    ``out`` (:func:`cache_name`), since a cache is reused as it is.
    """
    if (done := _cached(out)) is not None:
        return done
    rng = np.random.default_rng(seed)
    ctx, face, split, dsid, crop, photo = [], [], [], [], [], []
    for di, name, entry, sp in _labelled_photos(datasets_root, D6_DATASETS, errata_dir):
        img = cv2.imread(str(entry.image), cv2.IMREAD_COLOR)
        if img is None:
            continue
        boxes = []
        for d in entry.dice:
            if d.die != "d6":
                continue
            box = training_box(name, img, d)
            boxes.append(box)  # kept out of the background squares either way
            if d.cocked:  # no top face to learn
                continue
            x, y, w, h = box
            ctx.append(_context(img, x + w / 2, y + h / 2, max(w, h)))
            crop.append(crop_die(img, box))
            face.append(d.face)
            split.append(sp)
            dsid.append(di)
            photo.append(len(photo))
        if entry.dice and entry.dice[0].box is not None:
            for c in _backgrounds(img, boxes, rng, 2):
                ctx.append(c)
                crop.append(
                    cv2.resize(
                        c[CTX // 2 - 24 : CTX // 2 + 24, CTX // 2 - 24 : CTX // 2 + 24], (INPUT, INPUT)
                    )
                )
                face.append(0)
                split.append(sp)
                dsid.append(di)
                photo.append(len(photo))
    return _store(out, ctx, crop, face, split, dsid)


def cache_name(errata_dir: Path | None) -> str:
    """The labelled-crop cache's file name: one per set of errata, so a changed list rebuilds it."""
    if errata_dir is None:
        return "cache.npz"
    digest = hashlib.sha1()
    for path in sorted(errata_dir.glob("*.jsonl")):
        digest.update(path.name.encode() + b"\0" + path.read_bytes())
    return f"cache_errata_{digest.hexdigest()[:10]}.npz"


def false_alarms(
    boxes: list[tuple[float, ...]], labels: list[tuple[float, ...]], probs: np.ndarray
) -> list[int]:
    """Indexes of proposed ``boxes`` that match no labelled box and are not read as a face.

    A proposal matches a label when its centre lies within half the label's side (the eval's
    match radius; unlike eval's one-to-one matching, a second proposal on the same die still
    counts as matched, so a doubled box on a real die never becomes a "no die" example). One
    the reader gives some face p >= 0.5 is kept out even so: it may be a real die the labels
    skipped, and teaching the reader that a die is "no die" would be worse than missing a
    false alarm.
    """
    out = []
    for i, b in enumerate(boxes):
        cx, cy = b[0] + b[2] / 2, b[1] + b[3] / 2
        matched = any(
            math.hypot(cx - (lb[0] + lb[2] / 2), cy - (lb[1] + lb[3] / 2)) <= 0.5 * max(lb[2], lb[3])
            for lb in labels
        )
        if not matched and float(np.max(probs[i][1:])) < 0.5:
            out.append(i)
    return out


def build_hard_negatives(datasets_root: Path, out: Path) -> dict[str, np.ndarray] | None:
    """Class-0 contexts where the shipped pipeline reports a die that no label has.

    Why: random background squares rarely hit what the detector mistakes for a die (byler's
    grey screw heads beside the tray, table grain); a reader that has not learnt them reports
    them as "unreadable" dice in every photo, a false alarm the tower answers by re-rolling.
    Proposals the shipped reader reads as a face with p >= 0.5 are left out: they may be real
    dice the labels skipped (byler leaves dice outside the tray unlabelled).
    """
    if (done := _cached(out)) is not None:
        return done
    from ...faces.pips import D6Reader
    from ...locate import locate_dice

    reader = D6Reader()
    ctx, crop, split, dsid = [], [], [], []
    for di, name, entry, sp in _labelled_photos(datasets_root, D6_DATASETS):
        if entry.dice and entry.dice[0].box is None:
            continue  # tomitomi3: one die fills each photo, nothing else to mistake
        img = cv2.imread(str(entry.image), cv2.IMREAD_COLOR)
        if img is None:
            continue
        labels = [enlarged_box(name, d.box, d.face) for d in entry.dice if d.box is not None]
        boxes = [c.box for c in locate_dice(img)]
        crops = reader.crops(img, boxes)
        probs = reader.probabilities(crops)
        for i in false_alarms(boxes, labels, probs):
            b = boxes[i]
            ctx.append(_context(img, b[0] + b[2] / 2, b[1] + b[3] / 2, max(b[2], b[3])))
            crop.append(crops[i])
            split.append(sp)
            dsid.append(di)
    if not ctx:
        return None
    return _store(out, ctx, crop, np.zeros(len(ctx)), split, dsid)


def build_other_dice_negatives(datasets_root: Path, out: Path) -> dict[str, np.ndarray] | None:
    """Class-0 contexts of every die the pipeline proposes on photos of other dice (d20s).

    Why: the detector proposes patches of a d20 (a numeral with the edges around it looks
    like a face), and a reader trained without them reads a d20 patch as a d6 showing 1 (19 of
    rsandrini-d20's 214 test photos, up to p 0.97): a tower with a d20 among its dice would
    report a d6 face that is not there. The d6 reader reads no numerals, so "unreadable" is the
    honest answer for such a patch. Train and val photos only: the test photos stay for
    measuring exactly this.
    """
    if (done := _cached(out)) is not None:
        return done
    from ...faces.pips import D6Reader
    from ...locate import locate_dice

    reader = D6Reader()
    ctx, crop, split = [], [], []
    for _di, _name, entry, sp in _labelled_photos(datasets_root, OTHER_DICE):
        if sp == SPLIT_ID["test"]:
            continue
        img = cv2.imread(str(entry.image), cv2.IMREAD_COLOR)
        if img is None:
            continue
        boxes = [c.box for c in locate_dice(img)]
        for b, c in zip(boxes, reader.crops(img, boxes), strict=True):
            ctx.append(_context(img, b[0] + b[2] / 2, b[1] + b[3] / 2, max(b[2], b[3])))
            crop.append(c)
            split.append(sp)
    if not ctx:
        return None
    return _store(out, ctx, crop, np.zeros(len(ctx)), split, np.full(len(ctx), OTHER_GROUP))


def build_synth_cache(
    out: Path, n_scenes: int, seed: int = 1, marbled: float = 0.0
) -> dict[str, np.ndarray] | None:
    """Contexts of rendered dice (train only): more body/pip colours, and cocked dice as class 0.

    Real photos stay the evidence; the renderer adds what they lack (leaning dice, a red wild
    die with yellow pips, ring pips). The empty-tray reference gives exact background squares.
    ``marbled`` is the share of dice drawn marbled (``SceneStyle.marbled``): pale swirls under
    the pips, the evidence byler's dark marbled dice are short of.
    """
    if (done := _cached(out)) is not None:
        return done
    try:
        from ...synth import SceneStyle, render_scene
    except ImportError:
        return None
    rng = np.random.default_rng(seed)
    ctx, crop, face = [], [], []
    for i in range(min(n_scenes, 5000)):
        style = SceneStyle(die_size=(float(rng.uniform(16, 30)), float(rng.uniform(40, 75))), marbled=marbled)
        n = int(rng.integers(3, 10))
        frame, reference, labels = render_scene(
            seed * 100_000 + i, n, style=style, cocked=int(rng.random() < 0.5)
        )
        for d in labels:
            if d.box is None:
                continue
            x, y, w, h = d.box
            for img, lab in ((frame, 0 if d.cocked else d.face), (reference, 0)):
                if lab == 0 and img is reference and rng.random() < 0.6:
                    continue
                ctx.append(_context(img, x + w / 2, y + h / 2, max(w, h)))
                crop.append(crop_die(img, d.box))
                face.append(lab)
    if not ctx:
        return None
    n = len(face)
    return _store(out, ctx, crop, face, np.zeros(n), np.full(n, len(D6_DATASETS)))


def build_oblique_cache(
    out: Path, n_dice: int, seed: int = 1, elevation: tuple[float, float] = (25.0, 75.0)
) -> dict[str, np.ndarray] | None:
    """Contexts of rendered dice photographed at an angle (train only), top face labelled.

    Why: on phone and webcam photos the reader often reads the large side face turned to the
    camera instead of the foreshortened top (BENCHMARKS.md); the real photos hold
    a few hundred such dice. :func:`~dicetower.vision.synth.oblique.render_oblique` draws the
    whole cube in perspective, so every foreshortening of the top is shown with real side
    faces beside it. Their crops keep their up (:func:`turn_limits`). ``elevation`` is the
    camera's range above the table, degrees (``ObliqueStyle.elevation``).
    """
    if (done := _cached(out)) is not None:
        return done
    try:
        from ...synth.oblique import ObliqueStyle, render_oblique
    except ImportError:
        return None
    style = ObliqueStyle(elevation=elevation)
    ctx, crop, face = [], [], []
    for i in range(min(n_dice, 50_000)):
        img, label = render_oblique(seed * 1_000_000 + i, style=style)
        x, y, w, h = label.box  # type: ignore[misc]
        ctx.append(_context(img, x + w / 2, y + h / 2, max(w, h)))
        crop.append(crop_die(img, label.box))  # type: ignore[arg-type]
        face.append(label.face)
    if not ctx:
        return None
    n = len(face)
    return _store(out, ctx, crop, face, np.zeros(n), np.full(n, OBLIQUE_GROUP))


def thin_train(data: dict[str, np.ndarray], shares: dict[str, float], seed: int) -> dict[str, np.ndarray]:
    """``data`` with only a seeded ``share`` of each named dataset's *train* crops kept.

    Why: a learning curve. Whether a dataset is short of photos or the reader of capacity is
    answered by training the same recipe on part of its train split and reading val: a score
    still climbing from half to all of the photos says more photos are the lever. Crops are
    kept or dropped one by one (the cache does not record which photo a crop came from), and
    with them the background squares cut from that dataset's photos; val and test are untouched.
    """
    keep = np.ones(len(data["face"]), bool)
    rng = np.random.default_rng(seed)
    for name, share in sorted(shares.items()):
        sel = np.flatnonzero((data["split"] == 0) & (data["ds"] == D6_DATASETS.index(name)))
        drop = rng.permutation(sel)[round(share * len(sel)) :]
        keep[drop] = False
    return {k: v[keep] for k, v in data.items()}
