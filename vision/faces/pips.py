"""Read the up face of a located d6 from its crop (stage 2 of locate -> read -> report).

Why a small CNN and not blob counting: the dice in the tower and in the shared photos are
white-on-red, black-on-white, translucent and marbled, seen at any rotation and often obliquely,
so the pips of a side face show next to the top face. A tiny classifier trained on real crops
(:mod:`dicetower.vision.training.d6.train`) learns which pips belong to the top face; it runs
through ``cv2.dnn`` so the Pi needs no torch.

The model sees an ``INPUT`` x ``INPUT`` square around the die as four planes (:func:`to_blob`): the
crop projected on its axis of most colour contrast, standardised on its own (lighting and exposure
matter little), and its B, G, R planes standardised together (so red pips on a black die, which
every single grey projection loses, stay visible). It answers one of seven classes: 0 = "not a
readable die" (background, heavily cut or blurred), 1-6 = the face. A crop the first look is unsure
of is looked at again mirrored left to right, and the two looks' logits averaged
(:func:`looked_twice`). The softmax is temperature-scaled on the validation split and accepted only
above a per-face threshold chosen so that confidently wrong answers stay rare and every face is
rejected about equally often (a reader that rejects 6s more than 1s would bias the rolls it
reports). A die read with a face but unlike the training dice (far from the nearest of them,
answered weakly, or, seen from above, read as another face turned a quarter) is reported
``unfamiliar`` instead (:mod:`.familiar`): a die of a make the reader never saw.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import cv2
import numpy as np

from ..dnn import MAX_CARD_BYTES, load_onnx
from ..errors import VisionError
from ..files import read_bounded
from ..models import shipped_dir
from ..reading import UnreadableReason
from ..view import TOP_DOWN_TILT, View
from .familiar import Familiarity, FamiliarityError, load_familiarity, turned_disagrees

__all__ = [
    "CHANNELS",
    "COCKED_NOT_A_FACE",
    "CROP_MARGIN",
    "INPUT",
    "MIN_SIDE_PX",
    "NOT_A_DIE",
    "D6Reader",
    "FaceRead",
    "ReaderModelError",
    "blur_score",
    "contrast_grey",
    "crop_die",
    "crop_greys",
    "crop_transform",
    "die_square",
    "is_too_small",
    "looked_twice",
    "standardise",
    "to_blob",
    "warp_crop",
]

#: Side of the square the model reads, in pixels.
INPUT = 48
#: Input planes the model reads (:func:`to_blob`): contrast grey, then B, G, R.
CHANNELS = 4
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
#: A crop whose first look's softmax peak is under this is looked at again (:func:`looked_twice`);
#: a card's ``"second_look_below"`` sets its own.
SECOND_LOOK_BELOW = 0.9
#: What this reader reads: a card that says otherwise of any of these was made for another reader.
_CARD_FIXED: dict[str, Any] = {
    "channels": CHANNELS,
    "views": 2,
    "second_view": "mirror",
    "second_reader": None,
    "upright": False,
    "fit_turned": False,
}

#: Grey-level spread under which a crop is flat (nothing there), not blurred.
_FLAT_STD = 12.0

_MODEL = "d6_reader.onnx"
_META = "d6_reader.json"


class ReaderModelError(VisionError, RuntimeError):
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
    (``vision.faces.topface``): computed once per frame and handed to both (0.6 ms for 25 crops here).
    """
    out = np.empty((len(crops), INPUT, INPUT), np.float32)
    colour = [i for i, c in enumerate(crops) if c.ndim == 3]
    grey = [i for i, c in enumerate(crops) if c.ndim != 3]
    if grey:
        out[grey] = _resized(crops, grey).astype(np.float32)
    if colour:
        out[colour] = contrast_grey(_resized(crops, colour)[..., :3])
    return out


def to_blob(crops: list[np.ndarray] | np.ndarray, greys: np.ndarray | None = None) -> np.ndarray:
    """Stack crops into the model's ``(N, CHANNELS, INPUT, INPUT)`` float input, standardised per crop.

    Channel 0 is the crop projected by :func:`contrast_grey`, standardised on its own: lighting,
    exposure and die colour matter little to it. The B, G, R planes follow, standardised
    *together* (one mean and spread over all three), so colour relations survive: red pips on a
    black die have nearly the contrast-grey level of the body around them (the projection follows
    the crop's main colour axis, which the tray-vs-die contrast dominates), but the red plane shows
    them plainly. Grey crops repeat their level in B, G, R. ``greys`` is :func:`crop_greys` of
    ``crops`` when the caller has it already.
    """
    n = len(crops)
    out = np.empty((n, CHANNELS, INPUT, INPUT), np.float32)
    out[:, 0] = crop_greys(crops) if greys is None else greys
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


def looked_twice(
    forward: Callable[[np.ndarray], np.ndarray],
    blob: np.ndarray,
    gate: float,
    forward_again: Callable[[np.ndarray], np.ndarray] | None = None,
) -> np.ndarray:
    """Logits ``(N, 7)`` of ``blob``, with a second look at the crops a first look is unsure of.

    The first look is one pass; a crop whose plain softmax peak is under ``gate`` is read again
    mirrored left to right and its logits become the mean of the two looks. Why mirrored: a
    mirrored face shows the same count and keeps the top of the picture on top, and for a die
    photographed at an angle the top face is the upper face in the picture (a quarter turn would
    hide which face that is). Standardisation does not depend on orientation, so mirroring the
    finished blob is exact. Sure crops (most of them) cost one pass, so a crowded frame pays for
    the second look only where it matters. ``forward`` maps a ``(M, C, H, W)`` blob to ``(M, 7)``
    logits: ``cv2.dnn`` at run time, torch in calibration, so both use this one function and the
    thresholds stay true. ``forward_again`` (default ``forward``) runs the second look: the
    runtime gives it a network of its own, see :class:`D6Reader`.
    """
    logits = np.asarray(forward(blob), np.float32).reshape(-1, 7)
    if not len(logits):
        return logits
    z = logits - logits.max(axis=1, keepdims=True)
    peak = 1.0 / np.exp(z).sum(axis=1)
    unsure = np.flatnonzero(peak < gate)
    if len(unsure):
        mirrored = np.ascontiguousarray(blob[unsure][..., ::-1])
        again = forward if forward_again is None else forward_again
        extra = np.asarray(again(mirrored), np.float32).reshape(len(unsure), 7)
        logits[unsure] = (logits[unsure] + extra) / 2.0
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


class D6Reader:
    """The d6 face reader: an ONNX classifier run through ``cv2.dnn``, loaded once and reused.

    ``model_dir`` holds ``d6_reader.onnx`` and ``d6_reader.json`` (temperature, per-face
    thresholds, blur limit); by default the ones shipped in ``dicetower/vision/models``. With a
    ``d6_familiar.npz`` beside them (:mod:`.familiar`) a die unlike the training dice is
    ``unfamiliar``; :attr:`check_familiar` turns that check off (to measure what it does).
    Example::

        reader = D6Reader()
        reads = reader.read_crops(reader.crops(frame, boxes))
    """

    def __init__(self, model_dir: str | Path | None = None) -> None:
        folder = Path(model_dir) if model_dir is not None else shipped_dir()
        model, meta = folder / _MODEL, folder / _META
        if not model.is_file() or not meta.is_file():
            raise ReaderModelError(
                f"{folder}: missing {_MODEL} or {_META} (train with vision/training/d6/train.py)"
            )
        try:
            self.meta: dict[str, Any] = json.loads(read_bounded(meta, MAX_CARD_BYTES).decode("utf-8"))
        except OSError as exc:
            raise ReaderModelError(f"{meta}: cannot read: {exc.strerror or exc}") from None
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
        self.second_look_below = float(self.meta.get("second_look_below", SECOND_LOOK_BELOW))
        for key, wanted in _CARD_FIXED.items():
            if key in self.meta and self.meta[key] != wanted:
                raise ReaderModelError(
                    f"{meta}: {key} is {self.meta[key]!r}; this reader reads only cards with {key} {wanted!r}"
                )
        self._net = self._load(model)
        # The second look gets a network of its own, a second copy of the first (0.3 MB). Why:
        # cv2.dnn re-allocates a net's buffers whenever its batch size changes, and one net
        # alternating between a frame's 26 crops and its 9 unsure ones pays that twice a frame
        # (3.4 ms of 15 on a 25-dice photo, on one core). A tower rolls the same number of dice
        # each time, so each copy keeps its shape from frame to frame.
        self._net_again = self._load(model)
        self._model_path = model
        self.familiar: Familiarity | None = None
        #: Report dice unlike the training dice ``unfamiliar`` (needs :attr:`familiar`).
        self.check_familiar = False
        self._outputs: list[str] = []
        self.use_familiarity(load_familiarity(folder))

    def use_familiarity(self, familiar: Familiarity | None) -> None:
        """Judge dice by ``familiar`` from now on (None: by nothing), and check it on.

        The network is then asked for ``[logits, features]`` by name (OpenCV 4's ``forward()``
        without a name answers the last layer, which in a network with a features output is
        the features); a network without the output the statistics read is refused.
        """
        names = [str(n) for n in self._net.getUnconnectedOutLayersNames()]
        if familiar is None:
            self.familiar, self.check_familiar, self._outputs = None, False, names[:1]
            return
        wanted = familiar.output
        if wanted not in names:
            raise FamiliarityError(
                f"{self._model_path}: has no output {wanted!r} that the familiarity statistics read"
                f" (outputs: {', '.join(names)})"
            )
        logits = [n for n in names if n != wanted][:1]
        self.familiar, self.check_familiar = familiar, True
        self._outputs = [*logits, wanted] if logits else [wanted]

    @staticmethod
    def _load(path: Path) -> Any:
        try:
            return load_onnx(path)
        except cv2.error as exc:
            raise ReaderModelError(f"{path}: cv2.dnn cannot load it: {exc}") from None

    def crops(self, frame: np.ndarray, boxes: list[tuple[float, float, float, float]]) -> list[np.ndarray]:
        """The crops of ``boxes`` (:func:`crop_die`), as the model is trained to read them."""
        return self.crops_mapped(frame, boxes)[0]

    def crops_mapped(
        self, frame: np.ndarray, boxes: list[tuple[float, float, float, float]]
    ) -> tuple[list[np.ndarray], list[np.ndarray]]:
        """:meth:`crops` and each crop's frame-to-crop map, to place what is found in a crop."""
        maps = [crop_transform(b) for b in boxes]
        return [crop_die(frame, b) for b in boxes], maps

    def _forward(self, blob: np.ndarray) -> np.ndarray:
        return self._forward_features(blob)[0]

    def _forward_features(self, blob: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Logits and the familiarity check's features (the logits when it reads those)."""
        self._net.setInput(blob)
        outs = self._net.forward(self._outputs)
        logits = np.asarray(outs[0], np.float32)
        return logits, (np.asarray(outs[-1], np.float32).reshape(len(logits), -1))

    def _forward_again(self, blob: np.ndarray) -> np.ndarray:
        self._net_again.setInput(blob)
        return np.asarray(self._net_again.forward(self._outputs[:1])[0], np.float32)

    def probabilities(self, crops: list[np.ndarray], greys: np.ndarray | None = None) -> np.ndarray:
        """Calibrated class probabilities ``(N, 7)`` (class 0 = not a readable die).

        ``greys``: :func:`crop_greys` of ``crops``, when the caller needs them too.
        """
        return self.scored(crops, greys)[0]

    def scored(
        self, crops: list[np.ndarray], greys: np.ndarray | None = None
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """:meth:`probabilities`, each crop's first-look features ``(N, D)`` and its
        temperature-scaled logits ``(N, 7)``: what the familiarity check reads (:mod:`.familiar`).

        The features are the network output the familiarity statistics name, else its logits.
        """
        if not crops:
            empty = np.zeros((0, 7), np.float32)
            return empty, empty, empty
        outs, feats = [], []

        def first(blob: np.ndarray) -> np.ndarray:
            logits, features = self._forward_features(blob)
            feats.append(features)
            return logits

        for start in range(0, len(crops), MAX_BATCH):
            part = None if greys is None else greys[start : start + MAX_BATCH]
            blob = to_blob(crops[start : start + MAX_BATCH], part)
            outs.append(looked_twice(first, blob, self.second_look_below, self._forward_again))
        scaled = np.concatenate(outs) / self.temperature
        z = scaled - scaled.max(axis=1, keepdims=True)
        e = np.exp(z)
        return e / e.sum(axis=1, keepdims=True), np.concatenate(feats), scaled

    def thresholds_for(self, view: View | None) -> dict[int, float]:
        """The thresholds a frame seen this way is read with (the card's own when it has none)."""
        return self.view_thresholds.get(view, self.thresholds)  # type: ignore[arg-type]

    @contextmanager
    def thresholds_at_zero(self) -> Iterator[None]:
        """Every face taken at any probability, whatever the view and however unfamiliar the die,
        until the block ends.

        Why: calibration and ``d6.compare --zero-thresholds`` need each die's most likely
        class (``dicetower calibrate`` fits thresholds on the owner's own dice, which may well be
        unfamiliar); the card's thresholds and the check are put back even when reading fails.
        """
        saved = self.thresholds, self.view_thresholds, self.check_familiar
        self.thresholds, self.view_thresholds = dict.fromkeys(range(1, 7), 0.0), {}
        self.check_familiar = False
        try:
            yield
        finally:
            self.thresholds, self.view_thresholds, self.check_familiar = saved

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
        probs, features, scaled = self.scored(crops, greys)
        thr = self.thresholds_for(view)
        reads = [self.decide(probs[i], crops[i], thr) for i in range(len(crops))]
        if self.familiar is None or not self.check_familiar or not reads:
            return reads
        # Only a die read with a face is judged: an unsure one keeps the reason it is unsure.
        far = self.familiar.unfamiliar(features, scaled)
        if view is View.TOP_DOWN:  # seen from above, a quarter turn must read the same face
            idx = [i for i, r in enumerate(reads) if r.face and not far[i]]
            for start in range(0, len(idx), MAX_BATCH):
                part = idx[start : start + MAX_BATCH]
                blob = to_blob([crops[i] for i in part], None if greys is None else greys[part])
                faces = [int(reads[i].face or 0) for i in part]
                far[part] |= turned_disagrees(self._forward_again, blob, faces)
        return [
            FaceRead(None, r.confidence, UnreadableReason.UNFAMILIAR, r.probs) if far[i] and r.face else r
            for i, r in enumerate(reads)
        ]


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
