"""Train the d6 face reader (``vision/models/d6_reader.onnx``) on the shared datasets' train split.

Run (the v3s reader shipped in sessions 3-17, now ``vision/training/candidates/s10``, and the
start of the shipped one's chain, below: 55 minutes from scratch, stopped by the 200-epoch cap
before its learning rate had annealed, then 25 minutes more from those weights with ``--init``;
one torch thread each, two runs sharing the two cores). ``--hard-negatives`` mines the false alarms of
the pipeline shipped at the time (v3 reader, detector r6), cached under ``--work``::

    nice .venv/bin/python -m dicetower.vision.training.reader --datasets ../shared/datasets \
        --out /tmp/reader --arch v3s --max-minutes 80 --hard-negatives --views 2 \
        --second-look-below 0.9 --seed 5 --tag v3s --threads 1
    nice .venv/bin/python -m dicetower.vision.training.reader --out /tmp/reader --arch v3s \
        --max-minutes 25 --epochs 1000 --init /tmp/dicetower-reader/model_v3s.pt --hard-negatives \
        --views 2 --second-look-below 0.9 --seed 6 --tag v3sa --threads 1

(``--views 2 --second-look-below 0.9`` are the defaults now, spelled out as the model card
says them; ``--calibrate-only --init model_v3sa.pt --arch v3s --hard-negatives --seed 6``
reproduces that reader's thresholds exactly.)

Options kept to reproduce experiments that did not ship (BENCHMARKS.md, session 5): ``--augment
FIELD=VALUE`` (milder distortions), ``--upright`` (dice cut turned square to the crop,
:func:`dicetower.vision.pips.upright_crops`; the model card says so and the runtime follows it)
and ``--fit-turned`` (those crops also shrunk to the turned die).

Faster shapes by distillation (session 6): ``--arch v3ss`` / ``v3sl`` are v3s with its max-pools
folded into strides (0.64x / 0.74-0.78x its time), ``v3sw`` widens v3ss's two last stages
(:func:`widen_state` keeps the starting answers). They start from a trained state dict with
``--init`` and learn from a teacher's soft answers as well as the labels with ``--teacher
STATE.pt --teacher-arch v3s [--distill WEIGHT TEMPERATURE]`` (:func:`distill_loss`)::

    nice .venv/bin/python -m dicetower.vision.training.reader --out /tmp/rss --arch v3ss \
        --init /tmp/dicetower-reader/model_v3sa.pt --teacher /tmp/dicetower-reader/model_v3sa.pt \
        --hard-negatives --seed 31 --tag v3ss_d --max-minutes 65 --epochs 1000 --threads 1

(The epoch cap no longer cuts a schedule short: the learning rate now anneals by whichever
budget ends first.)

Oblique photos (session 7; no shipped model uses it yet, see BENCHMARKS.md): a die photographed at
an angle shows its top face *and* a side face, and the label is the top face, which an upright
camera puts in the upper part of the picture. Turning those crops every way hides which face that
is, so ``--oblique NAME`` bounds the turn of a dataset's crops (``--oblique-turn``, degrees;
:func:`turn_limits`) and ``--second-view mirror`` makes the runtime's second look a left-right
mirror instead of a quarter turn (model card ``"second_view"``)::

    nice .venv/bin/python -m dicetower.vision.training.reader --out /tmp/robl_a --arch v3s \
        --init /tmp/dicetower-reader/model_v3sa.pt --hard-negatives --seed 41 --tag obl_a \
        --max-minutes 50 --epochs 1000 --threads 1 --second-view mirror \
        --oblique epanemu-dice3 --oblique matteop65-d6-wood --oblique-turn 25

Other dice (session 8; no shipped model uses it yet, see BENCHMARKS.md): the detector proposes
patches of a d20 and the reader can read such a patch as a d6 "1". ``--other-dice`` adds every
proposal on the photos of :data:`OTHER_DICE` (train and val only) as class 0 and prices a val
one read as a face like a wrong face in calibration; with ``--teacher`` the student takes the
label, not the teacher's answer, on those crops. Judge the result with ``dicetower eval --split
val --models /tmp/rg1``::

    nice .venv/bin/python -m dicetower.vision.training.reader --out /tmp/rg1 --arch v3s \
        --init /tmp/dicetower-reader/model_v3sa.pt --teacher /tmp/dicetower-reader/model_v3sa.pt \
        --teacher-arch v3s --hard-negatives --other-dice --seed 61 --tag oth_g1 \
        --max-minutes 38 --epochs 1000 --threads 1

The shipped reader itself can be the starting point on a fresh machine, where ``--work`` is
empty: ``--init`` (and ``--teacher``, ``--second-reader``) also take an exported ``.onnx`` of the
named ``--arch`` (:func:`state_from_onnx` unfolds its batch norms). ``--calibrate-only --init
vision/training/candidates/s10/d6_reader.onnx --arch v3s --hard-negatives --seed 6`` gives that
reader's card's temperature and thresholds to the last digit (the shipped one's: below).

A second reader (session 11, see BENCHMARKS.md): a deeper network (``v4d``, ``v4r``: 1.5-1.9x
v3s's time, too slow for every crop of a crowded photo) trained on its own, then calibrated with
the first one as a pair: it reads only the crops the first is unsure of (``--second-view
reader``), and the two networks' logits are averaged. It is exported beside the first as
:data:`SECOND_READER_FILE`, and the card names it (``"second_reader"``)::

    nice .venv/bin/python -m dicetower.vision.training.reader --out /tmp/r4d --arch v4d \
        --max-minutes 118 --epochs 1000 --hard-negatives --seed 81 --tag v4d --threads 1
    .venv/bin/python -m dicetower.vision.training.reader --calibrate-only --out /tmp/pair4d \
        --init vision/training/candidates/s10/d6_reader.onnx --arch v3s --second-view reader \
        --second-reader /tmp/dicetower-reader/model_v4d.pt --second-arch v4d --hard-negatives --seed 6

Corrected labels (session 14): ``--errata vision/training/errata`` trains and calibrates on the
labels a person corrected (:mod:`dicetower.vision.errata`; each list gets its own cache file,
:func:`cache_name`). The shipped reader predates the list and was trained on the published labels.

A learning curve (session 15, see BENCHMARKS.md): ``--train-share byler-d6=0.5`` trains on a seeded
share of a dataset's train crops (:func:`thin_train`), so the same recipe at 25, 50 and 100 % says
whether that dataset is short of photos. Marbled dice (session 15): ``--synth 600 --synth-marbled
0.6`` draws 60 % of the rendered dice with pale swirls under their pips (``SceneStyle.marbled``);
each share gets its own synth cache file::

    nice .venv/bin/python -m dicetower.vision.training.reader --out /tmp/s15/L50 --arch v3s \
        --max-minutes 40 --epochs 1000 --hard-negatives --seed 151 --tag lc_L50 --threads 1 \
        --train-share byler-d6=0.5
    nice .venv/bin/python -m dicetower.vision.training.reader --out /tmp/s15/M --arch v3s \
        --init vision/training/candidates/s10/d6_reader.onnx --max-minutes 45 --epochs 1000 --hard-negatives \
        --synth 600 --synth-marbled 0.6 --seed 161 --tag mc_M --threads 1

The reader shipped in session 18 (session 17's R4b, now ``vision/training/candidates/s18``) is
four runs chained, each ``--init`` the one before: the M command above plus ``--other-dice``, 25
minutes, seed 162 (session 15's M2); 80 minutes more with ``--errata vision/training/errata``,
seed 172 (R2); 45 minutes more adding ``--oblique epanemu-dice3 --oblique matteop65-d6-wood
--oblique-turn 10 --second-view mirror``, seed 173 (R3); and R3's last stage run 75 minutes more,
seed 176.

The shipped reader (session 19) is a weight soup (:mod:`dicetower.vision.training.soup`) of R4b
and two 75-minute runs of R4b's last stage from R4b's own state, seed 191: one with
``--augment p_motion=0.2`` (MB, below) and one without (MC). Its card comes back to the last
digit from the shipped file itself (checked in session 19, as for R4b before it)::

    .venv/bin/python -m dicetower.vision.training.reader --calibrate-only --init \
        vision/models/d6_reader.onnx --arch v3s --hard-negatives --synth 600 --synth-marbled 0.6 \
        --other-dice --errata vision/training/errata --oblique epanemu-dice3 --oblique \
        matteop65-d6-wood --oblique-turn 10 --second-view mirror --seed 176 --out /tmp/card

The reader shipped before those (sessions 3-17, the first command's chain above) is kept in
``vision/training/candidates/s10``.

Turned crops framed as the runtime frames them (session 18): ``--turn-geometry`` makes each
turned training and calibration crop as large as the runtime would cut that die turned so
(:func:`turned_side`); the card says ``"turn_geometry": true``. The runtime is the same either way.

Smeared dice (session 19): ``--augment p_motion=0.2`` smears a fifth of the training crops
along a line 2-10 input pixels long (``motion=LO,HI``; :func:`motion_kernels`), keeping their
label: a die still rocking, or a webcam's long exposure, smears a face a person still reads
(most of matteop65's rejected train dice). Off by default, so earlier recipes draw the same
random numbers; the card's ``"augment"`` says when it was on. Session 19's MB is R4b's last stage
from R4b's state with it added, 75 minutes, seed 191 (``--tag s19_MB``; MC, its control, is the
same without it). Alone, neither passed its val gate, and MB read no more of matteop65's train
dice than MC (818 and 819 of 841): the smears did not help as hoped. Their soup with R4b ships.

Dice seen at an angle (session 21): ``--synth-oblique N`` adds N rendered dice photographed
25-75 degrees above the table (:func:`build_oblique_cache`, :mod:`dicetower.vision.synth.oblique`):
a cube in perspective, top face labelled, its side faces a real die's. Train only, their own
group (:data:`OBLIQUE_GROUP`), weighted as a helper like the top-down renders, and turned no
more than ``--oblique-turn`` (so it needs ``--oblique``). Session 21's O1 and O2 are the shipped
reader's last stage from its own state with ``--augment p_motion=0.2 --synth-oblique 4000``,
75 minutes, seeds 211 and 212 (``--tag s21_O1``, ``s21_O2``); O3 and O4 go on from O1's state
45 minutes with the camera lower, ``--synth-oblique-elevation 15,50`` (default 25,75), seeds 213
and 214. Each elevation range has its own cache file.

``--out`` defaults to the repo's ``vision/models``: point it elsewhere while experimenting and
copy the pair (``d6_reader.onnx`` + ``.json``) in once the val figures (``dicetower eval --split
val --models OUT``) say it is better.

Steps, each cached under ``--work`` (default ``/tmp/dicetower-reader``) so a rerun is cheap:

1. ``cache``: for every labelled d6 a *context* square (2.5 x the die, 112 px, colour) is cut
   from the photo and stored with its face and split (:func:`split_of`); background squares
   from the same photos become class 0. Photos are read once; nothing is written to the repo.
2. ``train``: a 7-class CNN (0 = not a readable die, 1-6, :func:`make_model`; v3 reads the
   contrast-grey plane and the B, G, R planes, see :func:`dicetower.vision.pips.to_blob`) on random crops of
   the train contexts: any rotation, flips, box shift +-15 %, scale 0.85-1.3 (the detector is
   imprecise), random grey mix of the colour channels, inversion (white-on-red is black-on-white
   inverted), blur, down-sampling, noise; class 0 also gets heavily cut or blurred dice. The
   crops are made a batch at a time (:func:`augment_batch`, torch ``grid_sample``); measured on
   the shared two-core machine the per-sample loop (:func:`augment`, kept as the reference) cost
   ~0.5 ms a crop against ~2-5 ms for the v1 network's forward + backward, so the speed-up of
   training (~160 -> ~800 crops/s) comes mostly from the v2 network, which trains faster.
3. ``calibrate``: temperature scaling on val crops made by the runtime crop function and read
   as the runtime reads them (a second look at unsure crops, ``--views``/``--second-look-below``), then
   per-face thresholds chosen so every face is rejected at the same rate and confidently wrong
   answers stay under the target; exported with ``torch.onnx.export(dynamo=True)`` (opset 18).

Why matteop65 boxes are enlarged: they outline the top face's pips, not the die; the die side is
estimated from the pip area (a lone 1-pip is about half the pip area of the other faces).
"""

from __future__ import annotations

import argparse
import dataclasses
import hashlib
import json
import math
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import cv2
import numpy as np

from ..errata import ErrataError, apply_errata, errata_for, read_errata
from ..manifest import LabelledDie, ManifestEntry, read_manifest
from ..pips import (
    CROP_MARGIN,
    INPUT,
    SECOND_VIEWS,
    blur_score,
    contrast_grey,
    crop_die,
    die_angles,
    looked_twice,
    scaled_box,
    standardise,
    to_blob,
    turned_fit,
    upright_crops,
)
from ..splits import split_of
from ..thresholds import choose_thresholds
from .onnx_weights import onnx_initializers
from .read_renders import elevation_band

__all__ = [
    "ARCHS",
    "CHANNELS",
    "D6_DATASETS",
    "OBLIQUE_GROUP",
    "OTHER_DICE",
    "OTHER_GROUP",
    "Augment",
    "Distill",
    "augment",
    "augment_batch",
    "build_cache",
    "build_hard_negatives",
    "build_oblique_cache",
    "build_other_dice_negatives",
    "build_synth_cache",
    "cache_name",
    "distill_loss",
    "enlarged_box",
    "exact_crops",
    "false_alarms",
    "main",
    "make_model",
    "motion_kernels",
    "parse_augment",
    "photo_turns",
    "thin_train",
    "training_box",
    "turn_limits",
    "turned_side",
    "widen_state",
]

D6_DATASETS = ("byler-d6", "epanemu-dice3", "matteop65-d6-wood", "tomitomi3-gray-d6")
CTX = 112  #: context square side in the cache
CTX_FACTOR = 2.5  #: context side / die side
SPLIT_ID = {"train": 0, "val": 1, "test": 2}
MAX_PHOTOS = 20_000  #: per dataset; bounds the cache build
#: Datasets of other kinds of dice. Whatever the pipeline proposes on their photos is class 0
#: for the d6 reader ("no d6 face here"), never a face (:func:`build_other_dice_negatives`).
OTHER_DICE = ("rsandrini-d20",)
#: The second reader's file beside ``d6_reader.onnx`` (``--second-reader``; the card names it).
SECOND_READER_FILE = "d6_reader_second.onnx"
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
    (:func:`_tomitomi_box`), a pip-area box is enlarged (:func:`enlarged_box`)."""
    box = die.box if die.box is not None else _tomitomi_box(img)
    return enlarged_box(dataset, box, die.face)


def _tomitomi_box(img: np.ndarray) -> tuple[float, float, float, float]:
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
    ``errata_dir``: labels a person corrected (:mod:`dicetower.vision.errata`) replace the
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
    grey screw heads beside the tray, table grain); those became "unreadable" dice in every
    photo, a false alarm the tower would answer by re-rolling. Proposals the current reader
    reads as a face with p >= 0.5 are left out: they may be real dice the labels skipped
    (byler leaves dice outside the tray unlabelled).
    """
    if (done := _cached(out)) is not None:
        return done
    from ..locate import locate_dice
    from ..pips import D6Reader

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
    like a face), and the shipped reader read 19 of rsandrini-d20's 214 test photos as a d6
    showing 1, up to p 0.97: a tower with a d20 among its dice would report a d6 face that
    is not there. Until numerals are read, "unreadable" is the honest answer for such a
    patch. Train and val photos only: the test photos stay for measuring exactly this.
    """
    if (done := _cached(out)) is not None:
        return done
    from ..locate import locate_dice
    from ..pips import D6Reader

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
        from ..synth import SceneStyle, render_scene
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
    camera instead of the foreshortened top (session 20, BENCHMARKS.md); the real photos hold
    a few hundred such dice. :func:`~dicetower.vision.synth.oblique.render_oblique` draws the
    whole cube in perspective, so every foreshortening of the top is shown with real side
    faces beside it. Their crops keep their up (:func:`turn_limits`). ``elevation`` is the
    camera's range above the table, degrees (``ObliqueStyle.elevation``).
    """
    if (done := _cached(out)) is not None:
        return done
    try:
        from ..synth.oblique import ObliqueStyle, render_oblique
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


# --------------------------------------------------------------------------- augmentation


def _colour_jitter(bgr: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """White balance / exposure jitter, and sometimes swapped channels (new die colours)."""
    x = bgr.astype(np.float32)
    if rng.random() < 0.3:
        x = x[..., rng.permutation(3)]
    x = x * rng.uniform(0.75, 1.25, 3).astype(np.float32) + rng.uniform(-20, 20, 3).astype(np.float32)
    return np.clip(x, 0, 255)


def augment(ctx: np.ndarray, label: int, rng: np.random.Generator) -> tuple[np.ndarray, int]:
    """One random training crop (grey float ``INPUT`` x ``INPUT``) from a context square."""
    die_side = CTX / CTX_FACTOR
    scale = rng.uniform(0.85, 1.3) * CROP_MARGIN
    shift = rng.uniform(-0.15, 0.15, 2) * die_side
    if label > 0 and rng.random() < 0.12:
        # A badly cut die: most of it outside the crop -> "not a readable die".
        ang = rng.uniform(0, 2 * math.pi)
        shift = np.array([math.cos(ang), math.sin(ang)]) * die_side * rng.uniform(0.75, 1.0)
        label = 0
    side = die_side * scale
    angle = rng.uniform(0, 360)
    c = (CTX / 2 + shift[0], CTX / 2 + shift[1])
    m = cv2.getRotationMatrix2D(c, angle, INPUT / side)
    m[0, 2] += INPUT / 2 - c[0]
    m[1, 2] += INPUT / 2 - c[1]
    bgr = cv2.warpAffine(ctx, m, (INPUT, INPUT), flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_REFLECT)
    out = contrast_grey(_colour_jitter(bgr, rng)[None])[0]
    if rng.random() < 0.5:
        out = out[:, ::-1]
    if rng.random() < 0.25:
        small = int(rng.integers(22, 40))  # smaller loses the pips of a 6: label noise
        out = cv2.resize(cv2.resize(out, (small, small), interpolation=cv2.INTER_AREA), (INPUT, INPUT))
    if label > 0 and rng.random() < 0.05:
        out = cv2.GaussianBlur(out, (0, 0), rng.uniform(4.0, 6.0))
        label = 0
    elif rng.random() < 0.3:
        out = cv2.GaussianBlur(out, (0, 0), rng.uniform(0.3, 1.4))
    if rng.random() < 0.3:
        out = 255.0 - out
    gain = rng.uniform(0.6, 1.3)
    out = out * gain + rng.uniform(-30, 30)
    if rng.random() < 0.5:
        out = out + rng.normal(0, rng.uniform(1, 8), out.shape)
    return np.ascontiguousarray(out, dtype=np.float32), label


def _gauss_blur(x: Any, sigma: np.ndarray) -> Any:
    """Per-sample Gaussian blur of ``(N, C, H, W)`` (sigma 0: unchanged), one grouped conv per axis."""
    import torch
    import torch.nn.functional as F

    n, c = x.shape[:2]
    rad = max(1, math.ceil(3 * float(sigma.max())))
    t = torch.arange(-rad, rad + 1, dtype=torch.float32)
    s = torch.from_numpy(np.repeat(np.maximum(sigma, 1e-3), c).astype(np.float32))[:, None]
    k = torch.exp(-0.5 * (t[None] / s) ** 2)
    k = k / k.sum(1, keepdim=True)
    y = F.pad(x.reshape(1, n * c, *x.shape[2:]), (rad, rad, rad, rad), mode="reflect")
    y = F.conv2d(y, k[:, None, None, :], groups=n * c)
    y = F.conv2d(y, k[:, None, :, None], groups=n * c)
    return y.reshape(x.shape)


def motion_kernels(lengths: np.ndarray, angles: np.ndarray) -> np.ndarray:
    """Line kernels ``(N, K, K)``, each summing to 1: a smear ``lengths`` pixels long at ``angles``.

    Why: a die photographed while it still rocks, or by a webcam with a long exposure, is
    smeared along one direction, not blurred evenly; matteop65's rejected train dice are mostly
    such smears of faces a person reads at once (BENCHMARKS.md, session 19). Isotropic blur
    alone teaches the reader nothing about them. The line is drawn by splatting points every
    tenth of a pixel bilinearly, so a short or slanted smear keeps its length and weight.
    """
    lengths = np.asarray(lengths, np.float64)
    angles = np.asarray(angles, np.float64)
    k = 2 * math.ceil(float(lengths.max(initial=1.0)) / 2) + 3  # odd, with a pixel to spare
    out = np.zeros((len(lengths), k, k), np.float64)
    c = k // 2
    for i, (length, a) in enumerate(zip(lengths, angles, strict=True)):
        t = np.linspace(-length / 2, length / 2, max(2, int(length * 10) + 1))
        x, y = c + t * math.cos(a), c + t * math.sin(a)
        x0, y0 = np.floor(x).astype(int), np.floor(y).astype(int)
        fx, fy = x - x0, y - y0
        corners = ((0, 0, (1 - fx) * (1 - fy)), (1, 0, fx * (1 - fy)), (0, 1, (1 - fx) * fy), (1, 1, fx * fy))
        for dx, dy, w in corners:
            np.add.at(out[i], (y0 + dy, x0 + dx), w)
        out[i] /= out[i].sum()
    return out.astype(np.float32)


def _motion_blur(x: Any, kernels: np.ndarray) -> Any:
    """Each sample of ``(N, C, H, W)`` convolved with its own kernel (all channels alike)."""
    import torch
    import torch.nn.functional as F

    n, c = x.shape[:2]
    k = kernels.shape[-1]
    w = torch.from_numpy(np.repeat(kernels, c, axis=0))[:, None]  # (N*C, 1, K, K)
    y = F.pad(x.reshape(1, n * c, *x.shape[2:]), (k // 2,) * 4, mode="reflect")
    return F.conv2d(y, w, groups=n * c).reshape(x.shape)


@dataclass(frozen=True)
class Augment:
    """How hard :func:`augment_batch` distorts: probabilities and ranges, one place to tune."""

    scale: tuple[float, float] = (0.85, 1.3)  #: crop side / (CROP_MARGIN x die side)
    shift: float = 0.15  #: centre error, in die sides
    p_cut: float = 0.12  #: die mostly outside the crop -> class 0
    p_perm: float = 0.3  #: colour channels swapped
    p_mono: float = 0.1  #: colour planes made grey (4-channel input only)
    p_small: float = 0.25  #: down- and up-sampled
    small: tuple[int, int] = (22, 40)  #: side it is down-sampled to
    p_heavy: float = 0.05  #: blurred beyond reading -> class 0
    p_light: float = 0.3  #: mildly blurred
    p_invert: float = 0.3  #: negative (white-on-red ~ black-on-white)
    p_noise: float = 0.5  #: sensor noise
    #: Smeared along a line (a die still moving, or the camera: see :func:`motion_kernels`),
    #: label kept. Off by default, so every earlier recipe draws the same random numbers.
    p_motion: float = 0.0
    motion: tuple[float, float] = (2.0, 10.0)  #: smear length, input pixels


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


def parse_augment(items: list[str]) -> Augment:
    """``Augment`` with ``FIELD=VALUE`` overrides (``VALUE`` a number, or ``LO,HI`` for a range).

    Why a parser of its own: a run that changes how hard training distorts must say so on
    its command line and in its model card, and a typo must stop it before an hour of work.
    """
    fields = {f.name: f for f in dataclasses.fields(Augment)}
    changes: dict[str, Any] = {}
    for item in items:
        name, sep, value = item.partition("=")
        if not sep or name not in fields:
            raise ValueError(f"want FIELD=VALUE with FIELD one of {sorted(fields)}, got {item!r}")
        default = getattr(Augment(), name)
        try:
            parts = tuple(float(v) for v in value.split(","))
        except ValueError:
            raise ValueError(f"{item!r}: not a number") from None
        if isinstance(default, tuple):
            if len(parts) != 2 or parts[0] > parts[1]:
                raise ValueError(f"{item!r}: {name} wants LO,HI with LO <= HI")
            if name == "small":
                if not (parts[0] >= 4 and parts[1] <= INPUT):
                    raise ValueError(f"{item!r}: small wants sides in 4..{INPUT}")
                # rng.integers excludes its upper end: keep the range non-empty
                parts = (int(parts[0]), max(int(parts[1]), int(parts[0]) + 1))
            elif parts[0] <= 0:
                raise ValueError(f"{item!r}: {name} must be positive")
            elif name == "motion" and parts[1] > INPUT / 2:
                raise ValueError(f"{item!r}: a smear over {INPUT // 2} px hides any face")
            changes[name] = parts
        else:
            if len(parts) != 1:
                raise ValueError(f"{item!r}: {name} wants one number")
            lo, hi = (0.0, 0.5) if name == "shift" else (0.0, 1.0)
            if not lo <= parts[0] <= hi:
                raise ValueError(f"{item!r}: {name} must lie in [{lo}, {hi}]")
            changes[name] = parts[0]
    return dataclasses.replace(Augment(), **changes)


def augment_batch(
    ctx: np.ndarray,
    labels: np.ndarray,
    rng: np.random.Generator,
    channels: int = 1,
    aug: Augment = Augment(),
    *,
    upright: bool = False,
    fit: bool = False,
    max_turn: np.ndarray | None = None,
    photo_turn: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """:func:`augment` for a whole batch at once: standardised ``(N, channels, INPUT, INPUT)``, labels.

    ``max_turn`` (radians, one per crop; ``None``: any turn) bounds how far each crop is turned:
    a die photographed at an angle by an upright camera shows its top face as the upper face of
    the picture, which a crop turned upside down would hide (:func:`turn_limits`).

    ``photo_turn`` (degrees, one per crop: each die's turn in its photo, :func:`photo_turns`)
    makes a turned crop as large as the runtime would cut that die turned so (:func:`turned_side`).

    The same distortions, vectorised (one ``grid_sample`` for shift/scale/rotation, array ops
    for colour, grouped convolutions for blur), so a batch costs a few array passes instead of
    a Python loop of small OpenCV calls.
    """
    import torch
    import torch.nn.functional as F

    n = len(labels)
    lab = labels.astype(np.int64).copy()
    die_side = CTX / CTX_FACTOR
    side = rng.uniform(*aug.scale, n) * CROP_MARGIN * die_side
    shift = rng.uniform(-aug.shift, aug.shift, (n, 2)) * die_side
    cut = (lab > 0) & (rng.random(n) < aug.p_cut)  # badly cut die -> "not a readable die"
    ang = rng.uniform(0, 2 * math.pi, n)
    rad = die_side * rng.uniform(0.75, 1.0, n)
    shift[cut] = (np.stack([np.cos(ang), np.sin(ang)], 1) * rad[:, None])[cut]
    lab[cut] = 0
    rot = rng.uniform(0, 2 * math.pi, n)
    if max_turn is not None:
        bounded = np.asarray(max_turn, np.float64) < math.pi
        rot = np.where(bounded, rng.uniform(-1.0, 1.0, n) * max_turn, rot)
    if photo_turn is not None:
        side = side * turned_side(np.asarray(photo_turn, np.float64), np.degrees(rot))
    x = torch.from_numpy(np.ascontiguousarray(ctx)).permute(0, 3, 1, 2).float()

    def sample(rot: np.ndarray, side: np.ndarray) -> Any:
        sc = side / CTX
        theta = np.zeros((n, 2, 3), np.float32)
        theta[:, 0, 0] = np.cos(rot) * sc
        theta[:, 0, 1] = -np.sin(rot) * sc
        theta[:, 1, 0] = np.sin(rot) * sc
        theta[:, 1, 1] = np.cos(rot) * sc
        theta[:, :, 2] = shift / (CTX / 2)
        grid = F.affine_grid(torch.from_numpy(theta), [n, 3, INPUT, INPUT], align_corners=False)
        return F.grid_sample(x, grid, mode="bilinear", padding_mode="reflection", align_corners=False)

    bgr = sample(rot, side)
    if upright:
        # As the runtime does (pips.upright_crops): estimate the die's turn on this crop, then
        # sample it again turned square, so training sees the same residual errors.
        luma = (bgr * torch.tensor([0.114, 0.587, 0.299])[None, :, None, None]).sum(1)
        turn = die_angles(luma.numpy())
        bgr = sample(rot + np.radians(turn), side * turned_fit(turn) if fit else side)
    # Colour: swapped channels sometimes (new die colours), white balance / exposure jitter.
    perm = np.argsort(rng.random((n, 3)), axis=1)
    perm[rng.random(n) >= aug.p_perm] = [0, 1, 2]
    bgr = torch.gather(bgr, 1, torch.from_numpy(perm)[:, :, None, None].expand(-1, -1, INPUT, INPUT))
    gain = torch.from_numpy(rng.uniform(0.75, 1.25, (n, 3, 1, 1)).astype(np.float32))
    bias = torch.from_numpy(rng.uniform(-20, 20, (n, 3, 1, 1)).astype(np.float32))
    bgr = (bgr * gain + bias).clamp(0, 255)
    g = torch.from_numpy(contrast_grey(bgr.permute(0, 2, 3, 1).numpy()))[:, None]
    if channels == 4:
        # Sometimes a grey photo (tomitomi3's kind, or a camera in mono mode): colour must help,
        # never be required.
        mono = torch.from_numpy(rng.random(n) < aug.p_mono)[:, None, None, None]
        luma = (bgr * torch.tensor([0.114, 0.587, 0.299])[None, :, None, None]).sum(1, keepdim=True)
        bgr = torch.where(mono, luma.expand(-1, 3, -1, -1), bgr)
        g = torch.cat([g, bgr], 1)
    flip = torch.from_numpy(rng.random(n) < 0.5)[:, None, None, None]
    g = torch.where(flip, g.flip(-1), g)
    small = rng.integers(*aug.small, n)
    small[rng.random(n) >= aug.p_small] = 0
    for sz in np.unique(small[small > 0]):  # at most 18 sizes
        sel = torch.from_numpy(np.flatnonzero(small == sz))
        lo = F.interpolate(g[sel], size=(int(sz), int(sz)), mode="area")
        g[sel] = F.interpolate(lo, size=(INPUT, INPUT), mode="bilinear", align_corners=False)
    if aug.p_motion > 0:  # only then: earlier recipes keep their random stream
        moving = np.flatnonzero(rng.random(n) < aug.p_motion)
        lengths = rng.uniform(*aug.motion, len(moving))
        angles = rng.uniform(0, math.pi, len(moving))
        if len(moving):
            sel = torch.from_numpy(moving)
            g[sel] = _motion_blur(g[sel], motion_kernels(lengths, angles))
    heavy = (lab > 0) & (rng.random(n) < aug.p_heavy)
    light = ~heavy & (rng.random(n) < aug.p_light)
    for mask, lo_s, hi_s in ((heavy, 4.0, 6.0), (light, 0.3, 1.4)):
        if mask.any():
            sel = torch.from_numpy(np.flatnonzero(mask))
            g[sel] = _gauss_blur(g[sel], rng.uniform(lo_s, hi_s, int(mask.sum())))
    lab[heavy] = 0
    inv = torch.from_numpy(rng.random(n) < aug.p_invert)[:, None, None, None]
    g = torch.where(inv, 255.0 - g, g)
    g = g * torch.from_numpy(rng.uniform(0.6, 1.3, (n, 1, 1, 1)).astype(np.float32))
    g = g + torch.from_numpy(rng.uniform(-30, 30, (n, 1, 1, 1)).astype(np.float32))
    noisy = (rng.random(n) < aug.p_noise) * rng.uniform(1, 8, n)
    c = g.shape[1]
    noise = rng.standard_normal((n, c, INPUT, INPUT)).astype(np.float32) * noisy[:, None, None, None]
    g = g + torch.from_numpy(noise.astype(np.float32))
    return standardise(g.numpy()), lab


def jitter_crop(
    ctx: np.ndarray,
    rng: np.random.Generator,
    *,
    upright: bool = False,
    fit: bool = False,
    max_turn: float = 180.0,
    photo_turn: float | None = None,
) -> np.ndarray:
    """A BGR crop of a context as an imprecise detector would frame it (geometry only).

    Calibration uses these next to the exact labelled crops, so the thresholds hold for
    detector boxes, not just for perfect ones. ``upright``: turned square as
    :func:`~dicetower.vision.pips.upright_crops` turns it. ``max_turn`` (degrees) bounds the
    turn as training bounded it for the crop's dataset (:func:`turn_limits`). ``photo_turn``:
    as for :func:`augment_batch`, the crop is as large as the turned die's upright box makes it.
    """
    die_side = CTX / CTX_FACTOR
    side = die_side * rng.uniform(0.9, 1.2) * CROP_MARGIN
    c = (CTX / 2 + rng.uniform(-0.1, 0.1) * die_side, CTX / 2 + rng.uniform(-0.1, 0.1) * die_side)
    angle = float(rng.uniform(0, 360)) if max_turn >= 180.0 else float(rng.uniform(-max_turn, max_turn))
    if photo_turn is not None:
        side *= float(turned_side(photo_turn, angle))
    die = side / CROP_MARGIN  # the box whose crop_die square is `side` across
    box = (c[0] - die / 2, c[1] - die / 2, die, die)
    crop = crop_die(ctx, box, angle=angle)
    if upright:
        grey = cv2.cvtColor(crop, cv2.COLOR_BGR2GRAY)[None]
        turn = float(die_angles(grey)[0])
        crop = crop_die(ctx, scaled_box(box, turned_fit(turn)) if fit else box, angle=angle + turn)
    return crop


def turned_side(photo_turn: float | np.ndarray, turn: float | np.ndarray) -> float | np.ndarray:
    """How much larger the runtime cuts a die turned by ``turn`` degrees more than it lies in its photo.

    Why: the runtime's crop is its box x ``CROP_MARGIN``, and a box is the upright outline of
    the die, so a die square to the frame fills its crop and one at 45 degrees only 0.7 of it.
    Training turns each labelled crop at random while keeping the labelled box's size, so a die
    lying square in its photo and turned 45 degrees had its corners cut off, and one turned
    square was shown small: the network saw few dice filling the crop square-on, the very crop
    the runtime cuts of every die that lands square to the camera. (Session 18's two runs with it
    did not pass their val gate, and still read a sharp-cornered drawn 5 square to its crop as a
    4, so it is an option, not the default: BENCHMARKS.md.) A die turned ``photo_turn`` in its photo (its
    box's side is the die's over :func:`~dicetower.vision.pips.turned_fit`) and then
    ``turn`` more lies at ``photo_turn - turn`` in the crop (both :func:`crop_die` and
    :func:`augment_batch` turn that way), so its box grows by this ratio.
    """
    return turned_fit(photo_turn) / turned_fit(np.asarray(photo_turn) - turn)


def photo_turns(crops: np.ndarray, chunk: int = 2048) -> np.ndarray:
    """Each labelled die's turn in its photo (degrees, :func:`die_angles` of its exact BGR crop)."""
    out = np.empty(len(crops), np.float32)
    for i in range(0, len(crops), chunk):
        part = crops[i : i + chunk].astype(np.float32)
        grey = part @ np.array([0.114, 0.587, 0.299], np.float32) if part.ndim == 4 else part
        out[i : i + chunk] = die_angles(grey)
    return out


def turn_limits(ds: np.ndarray, oblique: dict[str, float] | None) -> np.ndarray:
    """The largest turn (degrees) for crops of dataset indices ``ds``: 180 (any) unless oblique.

    Why: seen from above a die has no up, so training turns its crops every way. Seen at an
    angle (``epanemu-dice3``'s phone shots, ``matteop65-d6-wood``'s webcam) it shows its top
    face *and* a side face, and the label is the top one: the face in the upper part of the
    picture, because cameras are held upright. A crop turned upside down makes that a coin toss.
    """
    limits = np.full(len(ds), 180.0)
    for name, deg in (oblique or {}).items():
        limits[ds == D6_DATASETS.index(name)] = deg
    if oblique:  # rendered oblique dice have an up too: the most careful of the datasets' turns
        limits[ds == OBLIQUE_GROUP] = min(oblique.values())
    return limits


def exact_crops(data: dict[str, np.ndarray], idx: np.ndarray, upright: bool, fit: bool = False) -> np.ndarray:
    """The labelled crops ``idx`` as the runtime cuts them (turned square when ``upright``)."""
    if not upright:
        return data["crop"][idx]
    die_side = CTX / CTX_FACTOR
    box = ((CTX - die_side) / 2, (CTX - die_side) / 2, die_side, die_side)
    return np.stack([upright_crops(data["ctx"][i], [box], fit=fit)[0] for i in idx])


def _standardise(g: np.ndarray) -> np.ndarray:
    return (g - g.mean()) / (g.std() + 8.0)


# --------------------------------------------------------------------------- model


#: v1: 16-32-48-64 (first); v2: 16-32-64-96, early stride; v3: colour 24-48-64-128;
#: v3s: colour 20-40-48-96, two thirds of v3's time for the 30 ms budget of a 25-dice photo
ARCHS = ("v1", "v2", "v3", "v3s", "v3f", "v3ss", "v3sl", "v3sw", "v4d", "v4r")
#: Input channels per architecture (see :func:`dicetower.vision.pips.to_blob`).
CHANNELS = {"v1": 1, "v2": 1, **{arch: 4 for arch in ARCHS[2:]}}


def make_model(arch: str = "v2") -> Any:
    """The reader CNN. ``v2`` halves the resolution twice before its wide layers.

    Why v2: v1 underfits (train crops of epanemu are read only ~83 % right), but the reader's
    share of a 25-dice photo must stay near 10 ms on one core and cv2.dnn time follows the
    multiply-adds, most of which v1 spends on 32 channels at 24 x 24. v2 strides there instead
    of pooling and spends the saving on 64 / 96 channels at 12 x 12 / 6 x 6: 1.7 x the
    parameters at about the same inference time (and faster training).
    """
    import torch.nn as nn

    def blk(i: int, o: int, s: int = 1) -> nn.Module:
        return nn.Sequential(
            nn.Conv2d(i, o, 3, stride=s, padding=1, bias=False), nn.BatchNorm2d(o), nn.ReLU()
        )

    def head(width: int) -> list[nn.Module]:
        # Unpacked into each Sequential, so layer indices (and saved state dicts) stay as they were.
        return [nn.Flatten(), nn.Dropout(0.2), nn.Linear(width * 9, 7)]

    if arch == "v1":
        return nn.Sequential(
            blk(1, 16, 2),
            blk(16, 32),
            nn.MaxPool2d(2),
            blk(32, 48),
            nn.MaxPool2d(2),
            blk(48, 64),
            nn.MaxPool2d(2),
            *head(64),
        )
    if arch == "v3f":
        # v3f pools before the third stage, so both widening stages run at 6 x 6: 0.73 x v3s's
        # multiply-adds (the 12 x 12 stage held 46 % of them), the saving spent on width there.
        # Tried, not shipped: cv2.dnn ran it at 0.93 x v3s's time, and after 75 minutes it read
        # byler's val dice worse (BENCHMARKS.md). Kept so that result can be reproduced.
        return nn.Sequential(
            blk(CHANNELS[arch], 20, 2),
            blk(20, 40, 2),
            nn.MaxPool2d(2),
            blk(40, 56),
            blk(56, 96),
            nn.MaxPool2d(2),
            *head(96),
        )
    if arch == "v4d":
        # v4d: v3s deepened where its receptive field is built (a second convolution at 12 x 12
        # and at 6 x 6): 1.9x v3s's time in cv2.dnn (bench/reader_net.py). Too slow to read every
        # crop of a crowded photo, it is meant for the unsure ones only (a second reader).
        return nn.Sequential(
            blk(CHANNELS[arch], 24, 2),
            blk(24, 40, 2),
            blk(40, 48),
            blk(48, 48),
            nn.MaxPool2d(2),
            blk(48, 96),
            blk(96, 96),
            nn.MaxPool2d(2),
            *head(96),
        )
    if arch == "v4r":
        # v4r: v3s with a full-resolution first convolution before its strided stem, so a small
        # die's faint pips (red on smoke grey) are seen at the photo's own pixel pitch before
        # anything is subsampled: 1.7x v3s's time; like v4d, a second reader.
        return nn.Sequential(
            blk(CHANNELS[arch], 16, 1),
            blk(16, 24, 2),
            blk(24, 40, 2),
            blk(40, 48),
            nn.MaxPool2d(2),
            blk(48, 96),
            nn.MaxPool2d(2),
            *head(96),
        )
    if arch not in ("v2", "v3", "v3s", "v3ss", "v3sl", "v3sw"):
        raise ValueError(f"unknown reader architecture {arch!r} (known: {ARCHS})")
    # v2 and v3 share one shape: two strided stages, then two widening stages with pooling.
    # v3 reads colour (contrast grey + B, G, R): v2's errors were mostly red pips on dark
    # dice, which no single grey projection keeps. It is wider, as colour needs more filters.
    # v3s narrows v3 where its time goes (the 12 x 12 and 6 x 6 stages): 9.7 against 14.1 ms
    # for 25 crops in cv2.dnn on one core (bench/reader_net.py, BENCHMARKS.md).
    # v3ss and v3sl are v3s with its max-pools folded into the convolution before them as a
    # stride (both pools, or the last one). cv2.dnn on one core spends 0.9 of v3s's 8.4 ms for
    # 26 crops in the two pools and 1.9 ms in the 12 x 12 convolution the first pool follows;
    # a strided convolution computes only the kept positions: 0.64x (v3ss) and 0.74-0.78x (v3sl)
    # v3s's time (bench/reader_net.py). The pools' slots hold an Identity, so the layers keep
    # v3s's indices and shapes and a v3s state dict loads as their starting point (--init).
    # v3sw spends part of v3ss's saving on width where it is cheap, the two 6 x 6 / 3 x 3
    # stages (64, 128; the 24 x 24 stem decides the time): 0.72-0.74x v3s's time; it starts from a
    # v3ss state dict widened without changing its answers (widen_state).
    widths = {"v2": (16, 32, 64, 96), "v3": (24, 48, 64, 128), "v3sw": (20, 40, 64, 128)}
    w1, w2, w3, w4 = widths.get(arch, (20, 40, 48, 96))
    s3, s4 = {"v3ss": (2, 2), "v3sl": (1, 2), "v3sw": (2, 2)}.get(arch, (1, 1))
    return nn.Sequential(
        blk(CHANNELS[arch], w1, 2),
        blk(w1, w2, 2),
        blk(w2, w3, s3),
        nn.MaxPool2d(2) if s3 == 1 else nn.Identity(),
        blk(w3, w4, s4),
        nn.MaxPool2d(2) if s4 == 1 else nn.Identity(),
        *head(w4),
    )


def widen_state(small: dict[str, Any], wide: dict[str, Any]) -> dict[str, Any]:
    """``small``'s weights placed in a wider network of the same layers, its answers unchanged.

    Net2WiderNet (Chen et al. 2016) without the noise: each tensor of ``wide`` (a fresh
    network's state, so the new channels keep their random start) takes ``small``'s values in
    its leading slice, and every weight *reading* a new channel starts at zero, so the new
    channels compute but feed nothing until training finds a use for them. The classifier reads
    the flattened last stage channel by channel (``channel * cells + cell``), so its new
    columns are those of the new channels at every cell. Equal shapes copy straight through.
    """
    out = {}
    for key, w in wide.items():
        s = small[key]
        if s.shape == w.shape:
            out[key] = s.clone()
            continue
        if s.dim() != w.dim() or any(a > b for a, b in zip(s.shape, w.shape, strict=True)):
            raise ValueError(f"{key}: cannot widen {tuple(s.shape)} to {tuple(w.shape)}")
        t = w.clone()
        if s.dim() == 2 and s.shape[0] == w.shape[0]:  # the classifier over flattened cells
            cells = s.shape[1] // small[_first_conv_before(small, key)].shape[0]
            t = t.reshape(w.shape[0], -1, cells)
            t.zero_()
            t[:, : s.shape[1] // cells] = s.reshape(s.shape[0], -1, cells)
            out[key] = t.reshape(w.shape)
            continue
        if s.dim() >= 2:
            t[:, s.shape[1] :] = 0.0  # weights reading channels the small net lacks
        t[tuple(slice(0, n) for n in s.shape)] = s
        out[key] = t
    return out


def _first_conv_before(state: dict[str, Any], key: str) -> str:
    """Key of the last convolution weight listed before ``key`` (whose channels ``key`` reads)."""
    keys = list(state)
    convs = [k for k in keys[: keys.index(key)] if k.endswith(".weight") and state[k].dim() == 4]
    return convs[-1]


@dataclass(frozen=True)
class Distill:
    """How a student mixes its teacher's answer with the label (:func:`distill_loss`)."""

    weight: float = 0.7  #: share of the loss that follows the teacher
    temperature: float = 2.0  #: softens both answers so the runner-up faces carry weight


def distill_loss(student: Any, teacher: Any, labels: Any, hard_loss: Any, d: Distill) -> Any:
    """``(1 - w) * hard_loss + w * T^2 * KL(teacher_T || student_T)`` (Hinton et al. 2015).

    Why distil rather than only fine-tune: the faster shapes change the function the copied
    weights compute, and the teacher's soft answer (how much a crop looks like a 5 as well as
    a 6; which crops are no die) holds what it learned about the noisy labels, so the student
    does not relearn those from scratch. ``T^2`` keeps the soft term's gradients on the
    hard term's scale whatever the temperature.
    """
    import torch.nn.functional as F

    t = d.temperature
    soft = F.kl_div(
        F.log_softmax(student / t, dim=1),
        F.log_softmax(teacher / t, dim=1),
        log_target=True,
        reduction="batchmean",
    )
    return (1.0 - d.weight) * hard_loss(student, labels) + d.weight * t * t * soft


def _label_where(teacher_logits: Any, labels: Any, mask: Any, margin: float = 12.0) -> Any:
    """The teacher's logits with the rows under ``mask`` replaced by their label (one-hot x margin).

    Why: a student distilled from the shipped reader keeps its answers on the d6 crops, but on
    crops of other dice (``--other-dice``) the teacher is the very thing being corrected (it
    reads a d20's numeral as a 1), so there the student learns the label alone (learning
    without forgetting, Li & Hoiem 2016). At the default temperature 2 a margin of 12 puts
    ~0.99 on the label.
    """
    import torch.nn.functional as F

    if not bool(mask.any()):
        return teacher_logits
    out = teacher_logits.clone()
    out[mask] = F.one_hot(labels[mask], teacher_logits.shape[1]).to(out.dtype) * margin
    return out


def _batches(n: int, bs: int, rng: np.random.Generator) -> list[np.ndarray]:
    idx = rng.permutation(n)
    return [idx[i : i + bs] for i in range(0, n, bs)]


def train(
    data: dict[str, np.ndarray],
    epochs: int,
    seed: int,
    log: Any,
    max_minutes: float,
    init: Path | None = None,
    arch: str = "v2",
    aug: Augment = Augment(),
    dataset_weight: dict[str, float] | None = None,
    upright: bool = False,
    fit: bool = False,
    teacher: Any = None,
    distill: Distill | None = None,
    oblique: dict[str, float] | None = None,
    turn_geometry: bool = False,
) -> Any:
    """Train on random crops of the train contexts for ``max_minutes`` (optionally from ``init``).

    ``dataset_weight`` multiplies a dataset's share of the sampled crops (by name), for
    leaning a run on the dataset the reader still underfits. ``teacher`` (a trained reader
    network) turns the run into distillation (:func:`distill_loss`): a cheaper network learns
    the teacher's whole answer on each augmented crop, not only the label. ``oblique`` maps
    datasets photographed at an angle to the largest turn their crops get (:func:`turn_limits`).
    ``turn_geometry``: a turned crop is cut as large as the runtime would cut the turned die
    (:func:`turned_side`).
    """
    import torch

    torch.manual_seed(seed)
    rng = np.random.default_rng(seed)
    tr = np.flatnonzero(data["split"] == 0)
    faces = data["face"][tr]
    turns = np.radians(turn_limits(data["ds"][tr], oblique)) if oblique else None
    in_photo = photo_turns(data["crop"][tr]) if turn_geometry else None
    # Balance datasets a little: tomitomi3 (easy, 840 crops) should not dominate the hard ones.
    weights = np.ones(len(tr))
    for di in np.unique(data["ds"][tr]):
        sel = data["ds"][tr] == di
        weights[sel] = 1.0 / math.sqrt(sel.sum())
        if di == OTHER_GROUP:  # other kinds of dice: only ever class 0
            weights[sel] *= OTHER_DICE_WEIGHT
        elif di >= len(D6_DATASETS):  # rendered dice: a helper, not the evidence
            weights[sel] *= 0.5
        elif dataset_weight:
            weights[sel] *= dataset_weight.get(D6_DATASETS[di], 1.0)
    weights /= weights.sum()
    per_epoch = 8_000
    model = make_model(arch)
    max_lr = 3e-3
    if init is not None:
        # Continuing a run: start from its weights with a gentler peak learning rate.
        model.load_state_dict(widen_state(load_state(Path(init), arch), model.state_dict()))
        max_lr = 1e-3
    opt = torch.optim.AdamW(model.parameters(), lr=max_lr, weight_decay=1e-4)
    lossf = torch.nn.CrossEntropyLoss(label_smoothing=0.02)
    val = np.flatnonzero(data["split"] == 1)
    val_crops = exact_crops(data, val, upright, fit)
    budget = max_minutes * 60.0
    t0 = time.time()
    # The learning rate follows whichever budget runs out first, time or epochs (warm-up, then
    # cosine to zero): a run on a busy shared machine still anneals instead of stopping
    # mid-schedule, and so does one that reaches --epochs before its minutes are spent.
    per_batch = 1.0 / math.ceil(per_epoch / 128)
    for ep in range(epochs):
        if time.time() - t0 >= budget:
            log("time budget spent")
            break
        model.train()
        pick = rng.choice(len(tr), per_epoch, p=weights)
        is_other = data["ds"][tr[pick]] == OTHER_GROUP
        xs = np.empty((per_epoch, CHANNELS[arch], INPUT, INPUT), np.float32)
        ys = np.empty(per_epoch, np.int64)
        for j in range(0, per_epoch, 512):
            k = pick[j : j + 512]
            xs[j : j + len(k)], ys[j : j + len(k)] = augment_batch(
                data["ctx"][tr[k]],
                faces[k],
                rng,
                CHANNELS[arch],
                aug,
                upright=upright,
                fit=fit,
                max_turn=None if turns is None else turns[k],
                photo_turn=None if in_photo is None else in_photo[k],
            )
        tot, nb = 0.0, 0
        for bi, b in enumerate(_batches(per_epoch, 128, rng)):
            frac = min(max((time.time() - t0) / budget, (ep + bi * per_batch) / epochs), 1.0)
            lr = max_lr * (
                frac / 0.05 if frac < 0.05 else 0.5 * (1 + math.cos(math.pi * (frac - 0.05) / 0.95))
            )
            for grp in opt.param_groups:
                grp["lr"] = lr
            opt.zero_grad()
            xb, yb = torch.from_numpy(xs[b]), torch.from_numpy(ys[b])
            if teacher is None:
                loss = lossf(model(xb), yb)
            else:
                with torch.no_grad():
                    soft = teacher(xb)
                    soft = _label_where(soft, yb, torch.from_numpy(is_other[b]))
                loss = distill_loss(model(xb), soft, yb, lossf, distill or Distill())
            loss.backward()
            opt.step()
            tot += float(loss.detach())
            nb += 1
            if frac >= 1.0:
                break
        model.eval()
        right = _logits(model, val_crops, CHANNELS[arch]).argmax(1) == data["face"][val]
        per_ds = " ".join(
            f"{D6_DATASETS[d][:6]} {right[data['ds'][val] == d].mean():.3f}"
            for d in np.unique(data["ds"][val])
            if d < len(D6_DATASETS)
        )
        log(
            f"epoch {ep + 1} loss {tot / nb:.4f} val acc {right.mean():.4f} ({per_ds}) lr {lr:.5f} "
            f"({time.time() - t0:.0f}s)"
        )
    model.eval()
    return model


def _logits(
    model: Any,
    crops: np.ndarray,
    channels: int,
    views: int = 1,
    gate: float = 1.01,
    second_view: str = "quarter",
    second: Any = None,
) -> np.ndarray:
    """Logits as the runtime computes them (same blob, same second look, :func:`looked_twice`).

    ``second``: the second reader (``second_view="reader"``), which reads the unsure crops.
    """
    import torch

    def forward_with(net: Any) -> Any:
        def forward(blob: np.ndarray) -> np.ndarray:
            with torch.no_grad():
                return net(torch.from_numpy(np.ascontiguousarray(blob))).numpy()

        return forward

    again = None if second is None else forward_with(second)
    out = [
        looked_twice(
            forward_with(model), to_blob(list(crops[i : i + 512]), channels), views, gate, again, second_view
        )
        for i in range(0, len(crops), 512)
    ]
    return np.concatenate(out)


def _accuracy(model: Any, crops: np.ndarray, faces: np.ndarray, channels: int) -> float:
    model.eval()
    return float((_logits(model, crops, channels).argmax(1) == faces).mean())


# --------------------------------------------------------------------------- calibration


def _softmax(z: np.ndarray) -> np.ndarray:
    z = z - z.max(1, keepdims=True)
    e = np.exp(z)
    return e / e.sum(1, keepdims=True)


def fit_temperature(logits: np.ndarray, labels: np.ndarray) -> float:
    """The temperature minimising validation NLL (grid search: robust, no optimiser state)."""
    best = (float("inf"), 1.0)
    for t in np.exp(np.linspace(math.log(0.3), math.log(5.0), 120)):
        p = _softmax(logits / t)
        nll = -np.mean(np.log(p[np.arange(len(labels)), labels] + 1e-12))
        best = min(best, (nll, float(t)))
    return best[1]


def export(model: Any, path: Path, channels: int = 1) -> None:
    import torch

    x = torch.zeros(4, channels, INPUT, INPUT)
    torch.onnx.export(
        model,
        (x,),
        str(path),
        dynamo=True,
        opset_version=18,
        input_names=["x"],
        dynamic_shapes=({0: torch.export.Dim("n", min=1, max=256)},),
        external_data=False,
    )


def state_from_onnx(path: Path, arch: str) -> dict[str, Any]:
    """A torch state dict of ``arch`` that computes what the exported reader ``path`` computes.

    Why: training states live under ``--work`` in ``/tmp`` and are gone on a fresh machine,
    while the shipped ONNX file is in the repo. The export folds each batch norm into the
    convolution before it (a weight and a ``weight_bias``); here the convolution takes the
    folded weight and the norm becomes the identity plus that bias (mean 0, variance 1 - eps),
    so ``--init`` / ``--calibrate-only`` / a second reader's first stage can start from the
    shipped file itself. Raises ``ValueError`` when the file's tensors do not fit ``arch``.
    """
    import torch

    tensors = onnx_initializers(path)
    model = make_model(arch)
    state = model.state_dict()
    out: dict[str, Any] = {}
    for key, ref in state.items():
        layer, _, field = key.rpartition(".")
        if layer.endswith(".1"):  # a block's batch norm: identity plus the folded bias
            conv = layer[:-2] + ".0.weight"
            bias = tensors.get(conv + "_bias")
            if bias is None:
                raise ValueError(f"{path}: no folded bias {conv}_bias for {arch}")
            norm = module_of(model, layer)
            value = {
                "weight": np.ones(ref.shape, np.float32),
                "bias": bias,
                "running_mean": np.zeros(ref.shape, np.float32),
                "running_var": np.full(ref.shape, 1.0 - norm.eps, np.float32),
            }.get(field)
            out[key] = ref.clone() if value is None else torch.from_numpy(np.array(value, np.float32))
            continue
        if key not in tensors:
            raise ValueError(f"{path}: no tensor {key} for {arch}")
        out[key] = torch.from_numpy(np.array(tensors[key], np.float32))
        if tuple(out[key].shape) != tuple(ref.shape):
            raise ValueError(f"{path}: {key} is {tuple(out[key].shape)}, {arch} wants {tuple(ref.shape)}")
    return out


def load_state(path: Path, arch: str) -> dict[str, Any]:
    """A state dict from a torch ``.pt`` file or an exported ``.onnx`` reader (:func:`state_from_onnx`)."""
    import torch

    if path.suffix == ".onnx":
        return state_from_onnx(path, arch)
    return torch.load(path, weights_only=True)


def module_of(model: Any, dotted: str) -> Any:
    """The submodule at a state-dict prefix such as ``"2.1"``."""
    for part in dotted.split("."):
        model = model[int(part)] if part.isdigit() else getattr(model, part)
    return model


def _named_numbers(ap: argparse.ArgumentParser, flag: str, items: list[str], most: float) -> dict[str, float]:
    """``NAME=NUMBER`` options (a d6 dataset and a number in (0, ``most``]) as a dict; else a usage error."""
    out: dict[str, float] = {}
    for item in items:
        name, _, value = item.partition("=")
        try:
            out[name] = float(value)
        except ValueError:
            ap.error(f"{flag} wants NAME=NUMBER, got {item!r}")
        if name not in D6_DATASETS or not 0.0 < out[name] <= most:
            ap.error(f"{flag}: unknown dataset or number out of (0, {most:g}]: {item!r}")
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--datasets", type=Path, default=Path("../shared/datasets"))
    ap.add_argument("--work", type=Path, default=Path("/tmp/dicetower-reader"))
    ap.add_argument("--out", type=Path, default=Path(__file__).resolve().parents[1] / "models")
    ap.add_argument("--epochs", type=int, default=200)
    ap.add_argument("--max-minutes", type=float, default=15.0)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--tag", default="latest", help="name of the saved state dict under --work")
    ap.add_argument(
        "--init",
        type=Path,
        default=None,
        help="state dict to continue training from (or an exported .onnx reader of --arch, state_from_onnx)",
    )
    ap.add_argument(
        "--calibrate-only", action="store_true", help="skip training: calibrate and export --init"
    )
    ap.add_argument("--arch", choices=ARCHS, default="v3", help="network (see make_model)")
    # Defaults are the shipped reader's: on val, 2 looks calibrate like 4, and 1 look (or a gate
    # of 0.7-0.8) lets more of byler's dice through wrong (BENCHMARKS.md).
    ap.add_argument("--views", type=int, choices=(1, 2, 4), default=2, help="looks at an unsure crop")
    ap.add_argument(
        "--second-look-below", type=float, default=0.9, help="softmax peak under which a crop is re-read"
    )
    ap.add_argument(
        "--second-view",
        choices=SECOND_VIEWS,
        default="quarter",
        help="how an unsure crop is looked at again: turned a quarter, or mirrored (keeps up and down)",
    )
    ap.add_argument(
        "--second-reader",
        type=Path,
        default=None,
        help="with --second-view reader: a trained reader (state dict or .onnx of --second-arch) that"
        " reads the crops this one is unsure of; calibrated together, exported beside it",
    )
    ap.add_argument("--second-arch", choices=ARCHS, default="v4d", help="the second reader's network")
    ap.add_argument(
        "--oblique",
        action="append",
        default=[],
        metavar="NAME",
        help="a dataset photographed at an angle (repeatable): its crops are turned at most"
        " --oblique-turn degrees, so the top face stays the upper one; needs --second-view mirror",
    )
    ap.add_argument(
        "--oblique-turn", type=float, default=25.0, help="largest turn of an --oblique crop (degrees)"
    )
    ap.add_argument(
        "--upright",
        action="store_true",
        help="read dice turned square to the crop (pips.upright_crops), recorded in the model card",
    )
    ap.add_argument(
        "--turn-geometry",
        action="store_true",
        help="cut each turned training crop as large as the runtime cuts that die turned so "
        "(turned_side), recorded in the model card",
    )
    ap.add_argument(
        "--fit-turned",
        action="store_true",
        help="with --upright: shrink each crop to the turned die (upright_crops(fit=True))",
    )
    ap.add_argument(
        "--teacher",
        type=Path,
        default=None,
        help="distil from this trained reader state dict (its --teacher-arch) instead of labels alone",
    )
    ap.add_argument("--teacher-arch", choices=ARCHS, default="v3s", help="the teacher's network")
    ap.add_argument(
        "--distill",
        type=float,
        nargs=2,
        default=(Distill.weight, Distill.temperature),
        metavar=("WEIGHT", "TEMPERATURE"),
        help="share of the loss that follows the teacher (0-1) and the softening temperature (>0)",
    )
    ap.add_argument("--threads", type=int, default=2, help="torch threads (1 when the machine is shared)")
    ap.add_argument(
        "--errata",
        type=Path,
        default=None,
        help="train and calibrate on labels corrected by DIR/<dataset>.jsonl (vision/training/errata)",
    )
    ap.add_argument("--synth", type=int, default=250, help="rendered scenes added to train (0: none)")
    ap.add_argument(
        "--synth-oblique",
        type=int,
        default=0,
        help="rendered dice photographed at an angle added to train (0: none; build_oblique_cache)",
    )
    ap.add_argument(
        "--synth-oblique-elevation",
        type=elevation_band,
        default=(25.0, 75.0),
        metavar="LO,HI",
        help="the rendered camera's range above the table, degrees (default 25,75; 90 = straight down)",
    )
    ap.add_argument(
        "--synth-marbled",
        type=float,
        default=0.0,
        help="share (0-1) of the rendered dice drawn marbled (pale swirls under the pips)",
    )
    ap.add_argument(
        "--hard-negatives",
        action="store_true",
        help="add the shipped pipeline's false alarms as class 0 (build_hard_negatives)",
    )
    ap.add_argument(
        "--other-dice",
        action="store_true",
        help="add every proposal on photos of other dice (rsandrini-d20 train/val) as class 0, "
        "and price reading one as a face like a wrong face in calibration (build_other_dice_negatives)",
    )
    ap.add_argument(
        "--augment",
        action="append",
        default=[],
        metavar="FIELD=VALUE",
        help="override one Augment field (repeatable), e.g. p_small=0.1 or small=30,40",
    )
    ap.add_argument(
        "--dataset-weight",
        action="append",
        default=[],
        metavar="NAME=W",
        help="multiply a dataset's share of the training crops (repeatable), e.g. byler-d6=2",
    )
    ap.add_argument(
        "--train-share",
        action="append",
        default=[],
        metavar="NAME=SHARE",
        help="keep only this share (0-1] of a dataset's train crops (repeatable; a learning curve)",
    )
    args = ap.parse_args(argv)
    if args.fit_turned and not args.upright:
        ap.error("--fit-turned needs --upright")
    if not 0.0 <= args.synth_marbled <= 1.0 or (args.synth_marbled > 0 and args.synth <= 0):
        ap.error(f"--synth-marbled is a share in [0, 1] of --synth's rendered dice, got {args.synth_marbled}")
    if not 0 <= args.synth_oblique <= 50_000:
        ap.error(f"--synth-oblique is a number of rendered dice, 0-50000, got {args.synth_oblique}")
    if args.synth_oblique and not args.oblique:
        ap.error("--synth-oblique needs --oblique: rendered oblique dice keep their up only with it")
    for name in args.oblique:
        if name not in D6_DATASETS:
            ap.error(f"--oblique: unknown dataset {name!r} (one of {', '.join(D6_DATASETS)})")
    if args.oblique and args.second_view != "mirror":
        ap.error("--oblique needs --second-view mirror: a quarter-turned second look loses up and down")
    if args.oblique and args.upright:
        ap.error("--oblique and --upright both turn the crops: choose one")
    if args.turn_geometry and args.upright:
        ap.error("--turn-geometry sizes crops turned at random; --upright turns them square: choose one")
    if not 0.0 <= args.oblique_turn < 180.0:
        ap.error(f"--oblique-turn must lie in [0, 180), got {args.oblique_turn}")
    if args.second_view in ("mirror", "reader") and args.views == 4:
        ap.error(f"--second-view {args.second_view} gives two looks: use --views 1 or 2")
    if (args.second_view == "reader") != (args.second_reader is not None):
        ap.error("--second-view reader and --second-reader go together")
    if args.second_reader is not None and CHANNELS[args.second_arch] != CHANNELS[args.arch]:
        ap.error(f"--second-arch {args.second_arch} reads other input planes than --arch {args.arch}")
    oblique = {name: args.oblique_turn for name in args.oblique}
    weights = _named_numbers(ap, "--dataset-weight", args.dataset_weight, 100.0)
    shares = _named_numbers(ap, "--train-share", args.train_share, 1.0)
    try:
        aug = parse_augment(args.augment)
    except ValueError as exc:
        ap.error(f"--augment: {exc}")
    distill = Distill(*args.distill)
    if not (0.0 <= distill.weight <= 1.0 and 0.0 < distill.temperature <= 100.0):
        ap.error(f"--distill: weight must lie in [0, 1] and temperature in (0, 100], got {args.distill}")
    if args.teacher is None and tuple(args.distill) != (Distill.weight, Distill.temperature):
        ap.error("--distill needs --teacher (without one the run learns from labels alone)")
    if args.teacher is not None and CHANNELS[args.teacher_arch] != CHANNELS[args.arch]:
        ap.error(f"--teacher-arch {args.teacher_arch} reads other input planes than --arch {args.arch}")
    # Checked before the cache is built (minutes on a fresh --work), not when they are loaded.
    states = (
        ("--init", args.init, args.arch),
        ("--teacher", args.teacher, args.teacher_arch),
        ("--second-reader", args.second_reader, args.second_arch),
    )
    n_errata = 0
    if args.errata is not None:
        if not args.errata.is_dir():
            ap.error(f"--errata {args.errata}: no such folder (it holds <dataset>.jsonl files)")
        try:
            n_errata = sum(len(read_errata(path)) for path in sorted(args.errata.glob("*.jsonl")))
        except (ErrataError, OSError) as exc:
            ap.error(f"--errata: {exc}")
    for flag, path, _arch in states:
        if path is not None and not path.is_file():
            ap.error(f"{flag} {path}: no such state dict")
    import torch

    for flag, path, arch in states:  # an exported file that is not that network: say so now
        if path is not None and path.suffix == ".onnx":
            try:
                state_from_onnx(path, arch)
            except ValueError as exc:
                ap.error(f"{flag}: {exc}")

    torch.set_num_threads(args.threads)
    cv2.setNumThreads(1)
    args.work.mkdir(parents=True, exist_ok=True)
    logf = (args.work / "train.log").open("a", encoding="utf-8")

    def log(msg: str) -> None:
        print(msg, flush=True)
        logf.write(msg + "\n")
        logf.flush()

    data = build_cache(args.datasets, args.work / cache_name(args.errata), errata_dir=args.errata)
    if shares:
        data = thin_train(data, shares, args.seed)
        log(f"train share {shares}: {int((data['split'] == 0).sum())} train crops kept, all datasets")
    if args.synth > 0:
        name = f"synth{args.synth}" + (f"_marbled{args.synth_marbled:g}" if args.synth_marbled else "")
        synth = build_synth_cache(args.work / f"{name}.npz", args.synth, marbled=args.synth_marbled)
        if synth is not None:
            data = {k: np.concatenate([data[k], synth[k]]) for k in data}
    if args.synth_oblique > 0:
        lo, hi = args.synth_oblique_elevation
        oblique_dice = build_oblique_cache(
            args.work / f"synth_oblique{args.synth_oblique}_e{lo:g}-{hi:g}.npz",
            args.synth_oblique,
            elevation=(lo, hi),
        )
        if oblique_dice is not None:
            data = {k: np.concatenate([data[k], oblique_dice[k]]) for k in data}
            log(f"rendered oblique dice: {len(oblique_dice['face'])}")
    n_hard = 0
    if args.hard_negatives:
        hard = build_hard_negatives(args.datasets, args.work / "hard_negatives.npz")
        if hard is not None:
            n_hard = int((hard["split"] == 0).sum())
            log(f"hard negatives: {len(hard['face'])} (splits {np.bincount(hard['split'])})")
            data = {k: np.concatenate([data[k], hard[k]]) for k in data}
    n_other = 0
    if args.other_dice:
        other = build_other_dice_negatives(args.datasets, args.work / "other_dice.npz")
        if other is None:
            ap.error(f"--other-dice: none of {', '.join(OTHER_DICE)} under {args.datasets}")
        n_other = int((other["split"] == 0).sum())
        log(f"other dice (class 0): {len(other['face'])} (splits {np.bincount(other['split'])})")
        data = {k: np.concatenate([data[k], other[k]]) for k in data}
    log(f"cache: {len(data['face'])} crops, splits {np.bincount(data['split'])}")
    if args.calibrate_only:
        if args.init is None:
            ap.error("--calibrate-only needs --init")
        model = make_model(args.arch)
        model.load_state_dict(load_state(args.init, args.arch))
        model.eval()
    else:
        teacher = None
        if args.teacher is not None:
            teacher = make_model(args.teacher_arch)
            teacher.load_state_dict(load_state(args.teacher, args.teacher_arch))
            teacher.eval()
        model = train(
            data,
            args.epochs,
            args.seed,
            log,
            args.max_minutes,
            args.init,
            args.arch,
            aug=aug,
            dataset_weight=weights,
            upright=args.upright,
            fit=args.fit_turned,
            teacher=teacher,
            distill=distill,
            oblique=oblique,
            turn_geometry=args.turn_geometry,
        )
    if not args.calibrate_only:
        torch.save(model.state_dict(), args.work / f"model_{args.tag}.pt")
    val = np.flatnonzero(data["split"] == 1)
    rng = np.random.default_rng(args.seed + 7)
    limits = turn_limits(data["ds"][val], oblique)
    in_photo = photo_turns(data["crop"][val]) if args.turn_geometry else [None] * len(val)
    jittered = np.stack(
        [
            jitter_crop(
                data["ctx"][i], rng, upright=args.upright, fit=args.fit_turned, max_turn=lim, photo_turn=pt
            )
            for i, lim, pt in zip(val, limits, in_photo, strict=True)
        ]
    )
    cal_crops = np.concatenate([exact_crops(data, val, args.upright, args.fit_turned), jittered])
    cal_faces = np.concatenate([data["face"][val], data["face"][val]])
    second = None
    if args.second_reader is not None:
        second = make_model(args.second_arch)
        second.load_state_dict(load_state(args.second_reader, args.second_arch))
        second.eval()
    logits = _logits(
        model, cal_crops, CHANNELS[args.arch], args.views, args.second_look_below, args.second_view, second
    )
    t = fit_temperature(logits, cal_faces)
    probs = _softmax(logits / t)
    names = np.array([*D6_DATASETS, "synth", "other dice (class 0)", "synth oblique"])
    cal_groups = np.concatenate([data["ds"][val], data["ds"][val]])
    negative_groups = (OTHER_GROUP,) if args.other_dice else ()
    thr, stats = choose_thresholds(probs, cal_faces, cal_groups, negative_groups=negative_groups)
    stats["groups"] = {str(i): str(n) for i, n in enumerate(names)}
    # "blurred" names the reason of a rejection when the crop is blurrier than 99 % of the
    # validation dice that were read right; it never rejects a die on its own.
    ok = (probs.argmax(1) == cal_faces) & (cal_faces > 0)
    blur_min = float(np.quantile([blur_score(c) for c in cal_crops[ok]], 0.01)) if ok.any() else 0.0
    args.out.mkdir(parents=True, exist_ok=True)
    onnx_path = args.out / "d6_reader.onnx"
    export(model, onnx_path, CHANNELS[args.arch])
    if second is not None:
        export(second, args.out / SECOND_READER_FILE, CHANNELS[args.second_arch])
    meta = {
        "schema": "dicetower.d6_reader/1",
        "input": INPUT,
        "channels": CHANNELS[args.arch],
        "views": args.views,
        "second_look_below": args.second_look_below,
        "second_view": args.second_view,
        "second_reader": SECOND_READER_FILE if second is not None else None,
        "second_reader_arch": args.second_arch if second is not None else None,
        "second_reader_state": args.second_reader.name if args.second_reader is not None else None,
        "oblique": {"datasets": sorted(oblique), "turn": args.oblique_turn} if oblique else None,
        "upright": args.upright,
        "fit_turned": args.fit_turned,
        "turn_geometry": args.turn_geometry,
        "crop_margin": CROP_MARGIN,
        "classes": ["not_a_die", 1, 2, 3, 4, 5, 6],
        "temperature": round(t, 4),
        "thresholds": {str(k): round(v, 5) for k, v in thr.items()},
        "blur_min": round(blur_min, 5),
        "calibration": stats,
        "trained_on": [f"{d} (train split)" for d in D6_DATASETS],
        "errata": None if args.errata is None else {"folder": args.errata.name, "corrections": n_errata},
        "seed": args.seed,
        "arch": args.arch,
        "hard_negatives_in_train": n_hard,
        "other_dice_in_train": n_other,
        "minutes": None if args.calibrate_only else args.max_minutes,
        "init": args.init.name if args.init is not None else None,
        "dataset_weight": weights or None,
        "train_share": shares or None,
        "synth": {
            "scenes": args.synth,
            "marbled": args.synth_marbled,
            "oblique": args.synth_oblique,
            "oblique_elevation": list(args.synth_oblique_elevation),
        },
        "teacher": (
            None
            if args.teacher is None or args.calibrate_only
            else {"state": args.teacher.name, "arch": args.teacher_arch, **dataclasses.asdict(distill)}
        ),
        "augment": {k: v for k, v in dataclasses.asdict(aug).items() if v != getattr(Augment(), k)} or None,
    }
    (args.out / "d6_reader.json").write_text(json.dumps(meta, indent=2) + "\n", encoding="utf-8")
    log(f"temperature {t:.3f} thresholds {thr} {stats}")
    log(f"wrote {onnx_path} ({onnx_path.stat().st_size} bytes)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
