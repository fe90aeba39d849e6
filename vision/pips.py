"""Read the up face of a located d6 from its crop (stage 2 of locate -> read -> report).

Why a small CNN and not blob counting alone: the dice in the tower and in the shared photos are
white-on-red, black-on-white, translucent and marbled, seen at any rotation and often obliquely,
so the pips of a side face show next to the top face. A tiny classifier trained on real crops
(``vision/training/reader.py``) learns which pips belong to the top face; it runs through
``cv2.dnn`` so the Pi needs no torch. Classical pip counting (:func:`count_pips`) is kept as a
fallback when no model file is installed and as a second opinion for tests and debugging.

The model sees an ``INPUT`` x ``INPUT`` square around the die as four planes (:func:`to_blob`): the
crop projected on its axis of most colour contrast, standardised on its own (lighting and exposure
matter little), and its B, G, R planes standardised together (so red pips on a black die, which
every single grey projection loses, stay visible). It answers one of seven classes: 0 = "not a
readable die" (background, heavily cut or blurred), 1-6 = the face. A crop the first look is unsure
of is looked at again, turned a quarter or (a model card's ``"second_view": "mirror"``) mirrored
left to right, and the logits averaged (:func:`looked_twice`). The softmax is temperature-scaled on
the validation split and accepted only above a per-face threshold chosen so that confidently wrong
answers stay rare and every face is rejected about equally often (a reader that rejects 6s more than
1s would bias the rolls it reports). Models with one input plane (``"channels": 1`` in the metadata)
still load, and a model card with ``"upright": true`` gets its dice cut turned square to the crop
(:func:`upright_crops`).
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

import cv2
import numpy as np

from .dnn import load_onnx
from .reading import UnreadableReason
from .view import TOP_DOWN_TILT, View

__all__ = [
    "COCKED_NOT_A_FACE",
    "CROP_MARGIN",
    "INPUT",
    "MIN_SIDE_PX",
    "NOT_A_DIE",
    "SECOND_VIEWS",
    "D6Reader",
    "FaceRead",
    "ReaderModelError",
    "blur_score",
    "contrast_grey",
    "count_pips",
    "crop_die",
    "crop_greys",
    "crop_transform",
    "die_angles",
    "die_square",
    "is_too_small",
    "looked_twice",
    "scaled_box",
    "standardise",
    "to_blob",
    "turned_fit",
    "upright_crops",
    "upright_crops_mapped",
    "warp_crop",
    "with_views",
]

#: Side of the square the model reads, in pixels.
INPUT = 48
#: The crop is this many times the die box's longer side (the detector's box is imprecise).
CROP_MARGIN = 1.15
#: Dice whose box is shorter than this are ``too_small`` (a pip would be about 1 pixel).
MIN_SIDE_PX = 9.0
#: A die the reader will not read whose "not a readable die" probability is at least this is
#: reported ``cocked``: no face is squarely up. Measured (``tests/vision/test_pips_blob.py``):
#: about a third of rendered leaning dice reach it, flat rendered dice and real labelled dice of
#: the val split (a die with a face up) almost never (0-0.9 % per dataset).
COCKED_NOT_A_FACE = 0.3
#: At or above this "not a readable die" probability the crop is no die at all (bare tray, a
#: shadow): the frame reader drops it rather than report an unreadable die.
NOT_A_DIE = 0.9
#: Largest batch sent through the network at once (bounds memory for a crowded frame).
MAX_BATCH = 64

#: Grey-level spread under which a crop is flat (nothing there), not blurred.
_FLAT_STD = 12.0

_MODEL = "d6_reader.onnx"
_META = "d6_reader.json"


class ReaderModelError(RuntimeError):
    """The face-reader model or its metadata is missing or unusable."""


@dataclass(frozen=True)
class FaceRead:
    """The reader's answer for one crop: a face, or ``None`` with the reason why not."""

    face: int | None
    confidence: float
    reason: UnreadableReason | None = None
    probs: tuple[float, ...] = ()


def die_square(box: tuple[float, float, float, float] | list[float]) -> tuple[float, float, float]:
    """``(cx, cy, side)`` of the square crop for a ``[x, y, w, h]`` box."""
    x, y, w, h = (float(v) for v in box)
    return x + w / 2.0, y + h / 2.0, max(w, h) * CROP_MARGIN


def crop_transform(
    box: tuple[float, float, float, float] | list[float], size: int = INPUT, angle: float = 0.0
) -> np.ndarray:
    """The 2 x 3 affine map from frame pixels to :func:`crop_die`'s crop of ``box`` (for mapping back)."""
    cx, cy, side = die_square(box)
    side = max(side, 1.0)
    m = cv2.getRotationMatrix2D((cx, cy), angle, size / side)
    m[0, 2] += size / 2.0 - cx
    m[1, 2] += size / 2.0 - cy
    return m


def crop_die(
    frame: np.ndarray,
    box: tuple[float, float, float, float] | list[float],
    *,
    size: int = INPUT,
    angle: float = 0.0,
) -> np.ndarray:
    """The ``size`` x ``size`` square around ``box`` (rotated by ``angle`` degrees), as in the frame.

    One warp does crop, scale and rotation; borders replicate so a die at the frame edge does
    not get a black bar the model never saw in training.
    """
    return warp_crop(frame, crop_transform(box, size, angle), size)


def warp_crop(frame: np.ndarray, m: np.ndarray, size: int = INPUT) -> np.ndarray:
    """The ``size`` x ``size`` crop that frame-to-crop map ``m`` cuts (:func:`crop_transform`)."""
    return cv2.warpAffine(frame, m, (size, size), flags=cv2.INTER_AREA, borderMode=cv2.BORDER_REPLICATE)


def die_angles(grey: np.ndarray) -> np.ndarray:
    """The angle (degrees, in [-45, 45)) by which each die in ``grey`` ``(N, S, S)`` is turned.

    A die's outline repeats every quarter turn, so the gradient directions of a crop, taken
    four times over (``(gx + i gy)^4``), add up along the die's edges. Two choices keep the pips
    from steering it (measured on drawn dice of every face, colour and turn: the worst error
    fell from a wrong quarter to 1.7 degrees): votes are weighted by the gradient's size, not its
    square (black pips on a white die are the crop's strongest edges), and by a ring where a die
    square to, or turned against, its crop has its outline, not the middle where its pips are.
    Passing the result to :func:`crop_die` as ``angle`` turns the die square to the crop
    (:func:`upright_crops`).
    """
    g = np.asarray(grey, np.float32)
    n, s = g.shape[0], g.shape[-1]
    # Scharr derivatives (slices, so a whole batch is a few array passes): plain differences
    # lean every slanted edge toward the axes and so under- or over-turn the die.
    dx = g[:, :, 2:] - g[:, :, :-2]
    dy = g[:, 2:, :] - g[:, :-2, :]
    gx = 3.0 * (dx[:, :-2] + dx[:, 2:]) + 10.0 * dx[:, 1:-1]
    gy = 3.0 * (dy[:, :, :-2] + dy[:, :, 2:]) + 10.0 * dy[:, :, 1:-1]
    re, im = _quarter_votes(gx.reshape(n, -1), gy.reshape(n, -1))
    ring = _ring(s).reshape(-1)
    return np.degrees(np.arctan2(im @ ring, re @ ring) / 4.0).astype(np.float32)


def _quarter_votes(gx: np.ndarray, gy: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``|g| e^{4i theta}`` per pixel as (real, imaginary) float32 planes.

    The gradient's direction four times over, weighted by its size; written out in real
    arithmetic (cos 4t and sin 4t from gx, gy) because complex numpy arrays are double
    precision and cost three times as much on a crowded frame.
    """
    xx, yy = gx * gx, gy * gy
    m2 = xx + yy + 1e-3
    d = xx - yy
    scale = 1.0 / (m2 * np.sqrt(m2))
    return (d * d - 4.0 * xx * yy) * scale, 4.0 * gx * gy * d * scale


@functools.lru_cache(maxsize=4)
def _ring(s: int) -> np.ndarray:
    """Weights of an ``(s - 2)`` square peaking 0.45 s from its centre (the die's outline)."""
    r = np.arange(1, s - 1, dtype=np.float32) - (s - 1) / 2.0
    rr = np.sqrt(r[:, None] ** 2 + r[None, :] ** 2)
    return np.exp(-((rr - 0.45 * s) ** 2) / (2.0 * (0.12 * s) ** 2)).astype(np.float32)


def upright_crops(
    frame: np.ndarray,
    boxes: list[tuple[float, float, float, float]] | list[list[float]],
    size: int = INPUT,
    *,
    fit: bool = False,
) -> list[np.ndarray]:
    """Crops of ``boxes`` turned so each die's edges run along the crop's (:func:`die_angles`).

    Why: a small network that must also learn every rotation spends its few filters on that;
    turned square, a die shows its face at one of four quarter turns. Each die costs a second
    warp from the frame (not a rotation of the first crop, whose corners would be empty).
    ``fit`` also shrinks the square by :func:`turned_fit`: a box is the upright outline of a
    turned die, so a die at 45 degrees would otherwise fill only 0.7 of its crop.
    """
    return upright_crops_mapped(frame, boxes, size, fit=fit)[0]


def upright_crops_mapped(
    frame: np.ndarray,
    boxes: list[tuple[float, float, float, float]] | list[list[float]],
    size: int = INPUT,
    *,
    fit: bool = False,
) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """:func:`upright_crops` and, per crop, its frame-to-crop map (:func:`crop_transform`)."""
    if not len(boxes):
        return [], []
    first = [crop_die(frame, b, size=size) for b in boxes]
    angles = die_angles(np.stack([_gray(c) for c in first])).tolist()
    if fit:
        boxes = [scaled_box(b, turned_fit(a)) for b, a in zip(boxes, angles, strict=True)]
    maps = [crop_transform(b, size, a) for b, a in zip(boxes, angles, strict=True)]
    return [warp_crop(frame, m, size) for m in maps], maps


def turned_fit(angle: float | np.ndarray) -> float | np.ndarray:
    """Side of a square turned by ``angle`` degrees over the side of its upright bounding box."""
    a = np.radians(angle)
    return 1.0 / (np.abs(np.cos(a)) + np.abs(np.sin(a)))


def scaled_box(
    box: tuple[float, float, float, float] | list[float], factor: float
) -> tuple[float, float, float, float]:
    """``box`` scaled by ``factor`` about its centre."""
    x, y, w, h = (float(v) for v in box)
    return (x + w * (1 - factor) / 2, y + h * (1 - factor) / 2, w * factor, h * factor)


def _gray(crop: np.ndarray) -> np.ndarray:
    if crop.ndim == 3:
        return cv2.cvtColor(crop, cv2.COLOR_BGR2GRAY)
    return crop


def contrast_grey(crops: np.ndarray) -> np.ndarray:
    """Project each BGR crop ``(N, H, W, 3)`` onto the colour axis of most contrast on its die.

    Why not plain grey: red pips on a blue die, or yellow on teal, have almost the same
    luminance, so ``cvtColor(BGR2GRAY)`` erases them. The first principal component of the
    crop's central colours (the top face: body and pips) keeps their difference whatever the
    colours are; its sign is fixed to agree with luminance, so black-on-white stays as it is.
    """
    n, h, w, _c = crops.shape
    x = crops.astype(np.float32)
    # Covariance from raw moments, both as batched matrix products: numpy's mean over the
    # pixel axis of an (N, P, 3) array is a slow strided reduction (4x the cost of all this).
    # Centring on 128 first keeps float32's cancellation error far below the 4.0 "flat" limit.
    centre = x[:, h // 4 : h - h // 4, w // 4 : w - w // 4].reshape(n, -1, 3) - 128.0
    m = centre.shape[1]
    mu = np.matmul(np.full((1, m), 1.0 / m, np.float32), centre)  # (N, 1, 3)
    cov = np.matmul(centre.transpose(0, 2, 1), centre) / m - np.matmul(mu.transpose(0, 2, 1), mu)
    cov += np.eye(3, dtype=np.float32) * 1e-3
    _vals, vecs = np.linalg.eigh(cov)
    v = vecs[:, :, -1]  # eigenvector of the largest eigenvalue, (N, 3)
    luma = np.array([0.114, 0.587, 0.299], np.float32)
    v = v * np.where((v @ luma) < 0, -1.0, 1.0)[:, None].astype(np.float32)
    # Keep grey crops (no colour contrast at all) on the plain luminance axis.
    flat = _vals[:, -1] < 4.0
    v[flat] = luma
    v = v / np.abs(v).sum(axis=1, keepdims=True)
    return np.matmul(x.reshape(n, h * w, 3), v[:, :, None]).reshape(n, h, w)


def _resized(crops: list[np.ndarray] | np.ndarray, idx: list[int]) -> np.ndarray:
    return np.stack(
        [
            crops[i]
            if crops[i].shape[:2] == (INPUT, INPUT)
            else cv2.resize(crops[i], (INPUT, INPUT), interpolation=cv2.INTER_AREA)
            for i in idx
        ]
    )


def crop_greys(crops: list[np.ndarray] | np.ndarray) -> np.ndarray:
    """Each crop as one ``(N, INPUT, INPUT)`` float32 plane: grey crops as they are, colour ones
    projected by :func:`contrast_grey`. The reader's channel 0, and what pips are found in
    (``vision.topface``): computed once per frame and handed to both (0.6 ms for 25 crops here).
    """
    out = np.empty((len(crops), INPUT, INPUT), np.float32)
    colour = [i for i, c in enumerate(crops) if c.ndim == 3]
    grey = [i for i, c in enumerate(crops) if c.ndim != 3]
    if grey:
        out[grey] = _resized(crops, grey).astype(np.float32)
    if colour:
        out[colour] = contrast_grey(_resized(crops, colour)[..., :3])
    return out


def to_blob(
    crops: list[np.ndarray] | np.ndarray, channels: int = 1, greys: np.ndarray | None = None
) -> np.ndarray:
    """Stack crops into the model's ``(N, channels, INPUT, INPUT)`` float input, standardised per crop.

    Channel 0 is the crop projected by :func:`contrast_grey`, standardised on its own: lighting,
    exposure and die colour matter little to it. With ``channels == 4`` the B, G, R planes
    follow, standardised *together* (one mean and spread over all three), so colour relations
    survive: red pips on a black die have nearly the contrast-grey level of the body around them
    (the projection follows the crop's main colour axis, which the tray-vs-die contrast
    dominates), but the red plane shows them plainly. Grey crops repeat their level in B, G, R.
    ``greys`` is :func:`crop_greys` of ``crops`` when the caller has it already.
    """
    if channels not in (1, 4):
        raise ValueError(f"reader input has 1 or 4 channels, not {channels}")
    n = len(crops)
    out = np.empty((n, channels, INPUT, INPUT), np.float32)
    out[:, 0] = crop_greys(crops) if greys is None else greys
    if channels == 4:
        colour = [i for i, c in enumerate(crops) if c.ndim == 3]
        grey = [i for i, c in enumerate(crops) if c.ndim != 3]
        if grey:
            out[grey, 1:] = out[grey, :1]
        if colour:
            out[colour, 1:] = _resized(crops, colour)[..., :3].transpose(0, 3, 1, 2)
    return standardise(out, in_place=True)


def standardise(x: np.ndarray, *, in_place: bool = False) -> np.ndarray:
    """Per-crop standardisation of a ``(N, C, H, W)`` blob (channel 0 alone, 1..3 together).

    Shared by the runtime and the training code so both feed the network the same numbers.
    ``in_place`` (float32 input only) writes into ``x``: the runtime builds a fresh blob per
    frame anyway, and each extra megabyte-sized temporary costs page faults on every frame
    (measured: ``to_blob`` of 26 crops took 3.5 ms against 1.3 ms for its parts).
    """
    n = x.shape[0]
    out = x if in_place and x.dtype == np.float32 else np.array(x, dtype=np.float32, copy=True)
    for sl in (slice(0, 1), slice(1, x.shape[1])):
        part = out[:, sl]
        if part.shape[1] == 0:
            continue
        flat = part.reshape(n, -1)
        mean = flat.mean(axis=1)[:, None, None, None]
        std = flat.std(axis=1)[:, None, None, None]
        part -= mean
        part /= std + 8.0
    return out


#: How an unsure crop is looked at again: turned a quarter (any view of a die seen from above is
#: a valid view), or mirrored left to right (a mirrored face shows the same count, and the top of
#: the picture stays the top: the only second look for a reader of dice photographed at an angle,
#: whose top face is the upper face in the picture), or read as it is by a second, larger network
#: (the model card's ``"second_reader"``: too slow to read every crop of a crowded photo, it reads
#: only the crops the first network is unsure of, and two networks trained apart err apart).
SECOND_VIEWS = ("quarter", "mirror", "reader")


def with_views(blob: np.ndarray, views: int, second_view: str = "quarter") -> np.ndarray:
    """``blob`` followed by its other looks: ``(views * N, C, H, W)``.

    Why: the reader is trained at every rotation, so the same die turned by 90 degrees is an
    equally valid look; averaging the logits of two or four looks steadies the answer on the
    dice a single look is unsure of (measured in BENCHMARKS.md). Standardisation does not
    depend on orientation, so rotating (or mirroring) the finished blob is exact.
    ``second_view="mirror"`` (two looks only) mirrors left to right instead of turning, for a
    reader that must keep up and down; ``"reader"`` (two looks only) repeats the blob as it is,
    for a second network to read (see :data:`SECOND_VIEWS`).
    """
    if views not in (1, 2, 4):
        raise ValueError(f"views must be 1, 2 or 4, not {views}")
    if second_view not in SECOND_VIEWS:
        raise ValueError(f"second_view must be one of {SECOND_VIEWS}, not {second_view!r}")
    if second_view in ("mirror", "reader"):
        if views == 4:
            raise ValueError(f"a {second_view} second look gives two views, not 4")
        return np.concatenate([blob, blob[..., ::-1] if second_view == "mirror" else blob][:views])
    return np.concatenate([np.rot90(blob, r, axes=(2, 3)) for r in range(views)])


def looked_twice(
    forward: Callable[[np.ndarray], np.ndarray],
    blob: np.ndarray,
    views: int,
    gate: float,
    forward_again: Callable[[np.ndarray], np.ndarray] | None = None,
    second_view: str = "quarter",
) -> np.ndarray:
    """Logits ``(N, 7)`` of ``blob``, with a second look at the crops a first look is unsure of.

    The first look is one pass; a crop whose plain softmax peak is under ``gate`` is read again at its
    other quarter turns (or mirrored, ``second_view``) and its logits become the mean of all
    ``views`` looks. Sure crops (most of them) cost one pass, so a crowded frame pays for the extra
    looks only where they matter. ``forward`` maps a ``(M, C, H, W)`` blob to ``(M, 7)`` logits:
    ``cv2.dnn`` at run time, torch in calibration, so both use this one function and the thresholds
    stay true. ``forward_again`` (default ``forward``) runs the extra looks: the runtime gives them a
    network of their own, see :class:`D6Reader`.
    """
    logits = np.asarray(forward(blob), np.float32).reshape(-1, 7)
    if views == 1 or not len(logits):
        return logits
    z = logits - logits.max(axis=1, keepdims=True)
    peak = 1.0 / np.exp(z).sum(axis=1)
    unsure = np.flatnonzero(peak < gate)
    if len(unsure):
        more = np.ascontiguousarray(with_views(blob[unsure], views, second_view)[len(unsure) :])
        again = forward if forward_again is None else forward_again
        extra = np.asarray(again(more), np.float32).reshape(views - 1, len(unsure), 7)
        logits[unsure] = (logits[unsure] + extra.sum(axis=0)) / views
    return logits


def blur_score(crop: np.ndarray) -> float:
    """Sharpness of a crop: variance of its Laplacian over its own contrast (scale free).

    Dividing by the crop's variance keeps a dim or low-contrast die from counting as blurred.
    Spreads come from ``cv2.meanStdDev`` (double precision, one pass): numpy's ``var`` on a
    48 x 48 crop costs ~20 us of call overhead, paid for each rejected die of every frame.
    """
    g = _gray(crop)
    lap = cv2.Laplacian(g, cv2.CV_32F, ksize=3)
    lap_sd = float(cv2.meanStdDev(lap)[1][0, 0])
    return lap_sd * lap_sd / (_spread(g) ** 2 + 25.0)


def _spread(grey: np.ndarray) -> float:
    """Standard deviation of a grey crop's pixels (``cv2.meanStdDev``: ~4 against ~20 us in numpy)."""
    return float(cv2.meanStdDev(grey)[1][0, 0])


def count_pips(crop: np.ndarray) -> int | None:
    """Classical second opinion: count the pips in the crop's central top face, or ``None``.

    Pips are the blobs that differ most from the face colour: both dark-on-light and
    light-on-dark are tried and the count whose blobs have the most uniform size wins. Blobs are
    kept only inside the middle of the crop, where the top face of a top-down die lies, so the
    pips of a side face seen at an angle are mostly excluded. It is less robust than the model.
    """
    g = _gray(crop)
    g = cv2.resize(g, (96, 96), interpolation=cv2.INTER_LINEAR)
    g = cv2.GaussianBlur(g, (3, 3), 0)
    best: tuple[float, int] | None = None
    for img in (g, 255 - g):
        _t, bw = cv2.threshold(img, 0, 255, cv2.THRESH_BINARY_INV + cv2.THRESH_OTSU)
        n, _lab, stats, cents = cv2.connectedComponentsWithStats(bw, connectivity=8)
        areas = []
        for i in range(1, min(n, 200)):
            _x, _y, w, h, a = stats[i]
            cx, cy = cents[i]
            if not (14 <= cx <= 82 and 14 <= cy <= 82):
                continue
            if a < 12 or a > 500 or max(w, h) > 2.2 * min(w, h):
                continue
            fill = a / float(w * h)
            if fill < 0.5:
                continue
            areas.append(float(a))
        if not 1 <= len(areas) <= 6:
            continue
        spread = float(np.std(areas) / (np.mean(areas) + 1e-6))
        if spread < 0.35 and (best is None or spread < best[0]):
            best = (spread, len(areas))
    return None if best is None else best[1]


def _default_model_dir() -> Path:
    return Path(str(resources.files("dicetower.vision") / "models"))


class D6Reader:
    """The d6 face reader: an ONNX classifier run through ``cv2.dnn``, loaded once and reused.

    ``model_dir`` holds ``d6_reader.onnx`` and ``d6_reader.json`` (temperature, per-face
    thresholds, blur limit); by default the ones shipped in ``dicetower/vision/models``.
    Example::

        reader = D6Reader()
        reads = reader.read_crops(reader.crops(frame, boxes))
    """

    def __init__(self, model_dir: str | Path | None = None) -> None:
        folder = Path(model_dir) if model_dir is not None else _default_model_dir()
        model, meta = folder / _MODEL, folder / _META
        if not model.is_file() or not meta.is_file():
            raise ReaderModelError(
                f"{folder}: missing {_MODEL} or {_META} (train with vision/training/reader.py)"
            )
        try:
            self.meta: dict[str, Any] = json.loads(meta.read_text(encoding="utf-8"))
        except ValueError as exc:
            raise ReaderModelError(f"{meta}: bad metadata: {exc}") from None
        if int(self.meta.get("input", INPUT)) != INPUT:
            raise ReaderModelError(f"{meta}: model input {self.meta.get('input')} != {INPUT}")
        self.temperature = float(self.meta.get("temperature", 1.0))
        thr = self.meta.get("thresholds", {})
        self.thresholds = {f: float(thr.get(str(f), 0.5)) for f in range(1, 7)}
        #: Thresholds for frames of one view (:mod:`dicetower.vision.view`); other frames use
        #: :attr:`thresholds`. Empty unless the card has a ``"view"`` block.
        self.view_thresholds, self.top_down_tilt = _view_block(self.meta.get("view"), meta)
        self.blur_min = float(self.meta.get("blur_min", 0.0))
        self.channels = int(self.meta.get("channels", 1))
        self.views = int(self.meta.get("views", 1))
        self.second_look_below = float(self.meta.get("second_look_below", 1.01))
        #: How an unsure crop is looked at again (:data:`SECOND_VIEWS`); older cards turn it.
        self.second_view = self.meta.get("second_view", "quarter")
        if self.second_view not in SECOND_VIEWS or (self.second_view != "quarter" and self.views == 4):
            raise ReaderModelError(
                f"{meta}: second_view must be one of {SECOND_VIEWS} (mirror and reader with 1 or 2"
                f" views), got {self.second_view!r} with {self.views} views"
            )
        second = self._second_reader_file(folder, meta)
        #: The model was trained on dice turned square to the crop (:func:`upright_crops`) ...
        self.upright = self.meta.get("upright", False)
        #: ... and its crops shrunk to the turned die (``upright_crops(fit=True)``).
        self.fit_turned = self.meta.get("fit_turned", False)
        if not isinstance(self.upright, bool) or not isinstance(self.fit_turned, bool):
            raise ReaderModelError(f"{meta}: upright and fit_turned must be true or false")
        if self.fit_turned and not self.upright:
            raise ReaderModelError(f"{meta}: fit_turned needs upright")
        if self.channels not in (1, 4) or self.views not in (1, 2, 4):
            raise ReaderModelError(
                f"{meta}: channels must be 1 or 4 and views 1, 2 or 4 (got {self.channels}, {self.views})"
            )
        self._net = self._load(model)
        # The extra looks get a network of their own: the second reader, or else a second copy of
        # the first (0.3 MB). Why a copy: cv2.dnn re-allocates a net's buffers whenever its
        # batch size changes, and one net alternating between a frame's 26 crops and its 9
        # unsure ones paid that twice a frame: 3.4 ms of 15 on a 25-dice photo (one-off timing
        # on one core here). A tower rolls the same number of dice each time, so each copy
        # keeps its shape from frame to frame.
        self._net_again = self._load(second or model)

    def _second_reader_file(self, folder: Path, meta: Path) -> Path | None:
        """The card's ``"second_reader"``: an ONNX file beside the card, needed by ``"reader"`` looks."""
        name = self.meta.get("second_reader")
        if self.second_view != "reader":
            if name is not None:
                raise ReaderModelError(f'{meta}: second_reader needs second_view "reader"')
            return None
        if self.views != 2:
            raise ReaderModelError(f"{meta}: a second reader gives 2 views, not {self.views}")
        if not isinstance(name, str) or Path(name).name != name or not name.endswith(".onnx"):
            raise ReaderModelError(f"{meta}: second_reader must name an .onnx file beside it, got {name!r}")
        if not (folder / name).is_file():
            raise ReaderModelError(f"{folder}: missing {name}, the card's second reader")
        return folder / name

    @staticmethod
    def _load(path: Path) -> Any:
        try:
            return load_onnx(path)
        except cv2.error as exc:
            raise ReaderModelError(f"{path}: cv2.dnn cannot load it: {exc}") from None

    def crops(self, frame: np.ndarray, boxes: list[tuple[float, float, float, float]]) -> list[np.ndarray]:
        """The crops of ``boxes`` cut as this model was trained to read them."""
        return self.crops_mapped(frame, boxes)[0]

    def crops_mapped(
        self, frame: np.ndarray, boxes: list[tuple[float, float, float, float]]
    ) -> tuple[list[np.ndarray], list[np.ndarray]]:
        """:meth:`crops` and each crop's frame-to-crop map, to place what is found in a crop."""
        if self.upright:
            return upright_crops_mapped(frame, boxes, fit=self.fit_turned)
        maps = [crop_transform(b) for b in boxes]
        return [crop_die(frame, b) for b in boxes], maps

    def _forward(self, blob: np.ndarray) -> np.ndarray:
        self._net.setInput(blob)
        return np.asarray(self._net.forward(), np.float32)

    def _forward_again(self, blob: np.ndarray) -> np.ndarray:
        self._net_again.setInput(blob)
        return np.asarray(self._net_again.forward(), np.float32)

    def probabilities(self, crops: list[np.ndarray], greys: np.ndarray | None = None) -> np.ndarray:
        """Calibrated class probabilities ``(N, 7)`` (class 0 = not a readable die).

        ``greys``: :func:`crop_greys` of ``crops``, when the caller needs them too.
        """
        if not crops:
            return np.zeros((0, 7), np.float32)
        outs = []
        for start in range(0, len(crops), MAX_BATCH):
            part = None if greys is None else greys[start : start + MAX_BATCH]
            blob = to_blob(crops[start : start + MAX_BATCH], self.channels, part)
            outs.append(
                looked_twice(
                    self._forward,
                    blob,
                    self.views,
                    self.second_look_below,
                    self._forward_again,
                    self.second_view,
                )
            )
        logits = np.concatenate(outs) / self.temperature
        logits -= logits.max(axis=1, keepdims=True)
        e = np.exp(logits)
        return e / e.sum(axis=1, keepdims=True)

    def thresholds_for(self, view: View | None) -> dict[int, float]:
        """The thresholds a frame seen this way is read with (the card's own when it has none)."""
        return self.view_thresholds.get(view, self.thresholds)  # type: ignore[arg-type]

    @contextmanager
    def thresholds_at_zero(self) -> Iterator[None]:
        """Every face taken at any probability, whatever the view, until the block ends.

        Why: calibration and ``compare_models --zero-thresholds`` need each die's most likely
        class; the card's thresholds are put back even when reading fails.
        """
        saved = self.thresholds, self.view_thresholds
        self.thresholds, self.view_thresholds = dict.fromkeys(range(1, 7), 0.0), {}
        try:
            yield
        finally:
            self.thresholds, self.view_thresholds = saved

    def decide(
        self, probs: np.ndarray, crop: np.ndarray, thresholds: dict[int, float] | None = None
    ) -> FaceRead:
        """Turn one crop's calibrated probabilities into a face or an unreadable reason.

        ``thresholds``: the frame's (:meth:`thresholds_for`); the card's own by default.
        """
        thr = self.thresholds if thresholds is None else thresholds
        values = probs.tolist()  # plain floats: numpy scalar indexing costs more than the rule
        k = max(range(len(values)), key=values.__getitem__)
        conf = values[k]
        p = tuple(round(v, 4) for v in values)
        if k >= 1 and conf >= thr[k]:
            return FaceRead(k, conf, None, p)
        best_face = max(range(1, len(values)), key=values.__getitem__)
        face_conf = values[best_face]
        reason = UnreadableReason.LOW_CONFIDENCE
        # A flat crop (no die at all) is not "blurred": only one with contrast but no edges is.
        grey = _gray(crop)  # converted once: blur_score takes the grey crop as it is
        if _spread(grey) > _FLAT_STD and blur_score(grey) < self.blur_min:
            reason = UnreadableReason.BLURRED
        elif COCKED_NOT_A_FACE <= float(probs[0]) < NOT_A_DIE:
            reason = UnreadableReason.COCKED
        return FaceRead(None, face_conf, reason, p)

    def read_crops(
        self, crops: list[np.ndarray], greys: np.ndarray | None = None, view: View | None = None
    ) -> list[FaceRead]:
        """Read a batch of crops (as made by :meth:`crops`; ``greys`` as for :meth:`probabilities`).

        ``view``: how the camera saw the frame they come from, which chooses the thresholds.
        """
        probs = self.probabilities(crops, greys)
        thr = self.thresholds_for(view)
        return [self.decide(probs[i], crops[i], thr) for i in range(len(crops))]


def _view_block(block: Any, meta: Path) -> tuple[dict[View, dict[int, float]], float]:
    """A card's ``"view"`` block: ``{"tilt_cut": T, "thresholds": {VIEW: {"1": p, ...}}, ...}``.

    Refused unless every named view is known and gives all six faces a probability in [0, 1]:
    a half-written block would read some frames with the 0.5 default.
    """
    if block is None:
        return {}, TOP_DOWN_TILT
    if not isinstance(block, dict) or not isinstance(block.get("thresholds"), dict):
        raise ReaderModelError(f'{meta}: "view" must be an object with "thresholds" per view')
    cut = block.get("tilt_cut", TOP_DOWN_TILT)
    if not isinstance(cut, int | float) or not 0.0 < float(cut) < 1.0:
        raise ReaderModelError(f'{meta}: "view" tilt_cut must be a number between 0 and 1, got {cut!r}')
    out: dict[View, dict[int, float]] = {}
    for name, thr in block["thresholds"].items():
        if name not in View.__members__.values():
            raise ReaderModelError(f"{meta}: unknown view {name!r} (known: {', '.join(View)})")
        faces = thr if isinstance(thr, dict) else {}
        values = [faces.get(str(f)) for f in range(1, 7)]
        if not all(isinstance(v, int | float) and 0.0 <= float(v) <= 1.0 for v in values):
            raise ReaderModelError(f"{meta}: view {name!r} needs a threshold in [0, 1] for each face 1-6")
        out[View(name)] = {f: float(v) for f, v in zip(range(1, 7), values, strict=True)}  # type: ignore[arg-type]
    return out, float(cut)


def is_too_small(box: tuple[float, float, float, float] | list[float]) -> bool:
    """True when the die is too few pixels across to resolve its pips."""
    return max(float(box[2]), float(box[3])) < MIN_SIDE_PX
