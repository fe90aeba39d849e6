"""Fit a taught model from a labelled folder: the tray, each die's body, and a reader for its faces.

For each taught die (:mod:`.teaching`), in the order its photos were rolled:

1. the latest :data:`HOLD_BACK` of its photos are held back; the rest are *fitted*;
2. each fitted crop is read by the general network of the die's kind (:mod:`.features`) at
   every :data:`TURN_STEP` degrees, and a head over the die's faces is fitted on those features
   (:mod:`.head`), pulled toward the general network's own answer by each of
   :data:`STRENGTHS`;
3. each head reads the held-back crops; the strength that reads most of them right with none
   wrong is kept, and the die's threshold is set just above the surest wrong answer there
   (never below :data:`MIN_THRESHOLD`);
4. the held-back right, wrong and unreadable counts, their 95 % intervals and the per-face
   reject rates go into the card.

The fit refuses, naming the die and the faces, when a face was named fewer than
:data:`MIN_PER_FACE` times, and when the held-back wrong rate could be over
:data:`MAX_WRONG` (its one-sided 95 % upper bound over every taught die's held-back crops).
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ..eval.intervals import binomial_bounds, binomial_upper
from ..faces.pips import crop_die
from ..imageio import ImageError, load_image_info
from ..kinds import Reader
from .body import learn_body
from .features import Backbone, TaughtModelError, backbone_for
from .head import Head, fit_head
from .model import CARD, SCHEMA, TaughtDieCard, network_file
from .onnxfile import write_taught_network
from .teaching import Example, TaughtDie, TeachingSet, hold_back_split, read_teaching_set
from .tray import derive_tray

__all__ = [
    "HOLD_BACK",
    "MAX_WRONG",
    "MIN_PER_FACE",
    "MIN_THRESHOLD",
    "STRENGTHS",
    "TURN_STEP",
    "FitError",
    "FitOptions",
    "FitResult",
    "fit_model",
]

#: Share of each die's latest photos held back to set its threshold and measure it.
HOLD_BACK = 0.3
#: Fewest times each face must have been named.
MIN_PER_FACE = 8
#: The most the held-back wrong rate may be (one-sided 95 % upper bound) for a model to be written.
MAX_WRONG = 0.01
#: Degrees between the turns each fitted crop is read at.
TURN_STEP = 30
#: The pulls toward the general answer tried; the held-back crops choose one per die.
STRENGTHS = (1e-3, 1e-2, 1e-1, 1.0)
#: No threshold is set below this.
MIN_THRESHOLD = 0.5
#: Above the surest wrong held-back answer by this much.
THRESHOLD_MARGIN = 0.01


class FitError(TaughtModelError, ValueError):
    """The folder cannot teach a model as asked; the message says what to do."""


@dataclass(frozen=True)
class FitOptions:
    """How to fit: the held-back share, the limits, and what to allow for photo sets."""

    hold_back: float = HOLD_BACK
    min_per_face: int = MIN_PER_FACE
    max_wrong: float = MAX_WRONG
    #: teach only the faces named (a photo set that shows some faces): the die then answers
    #: only those; a tower's teach folder shows every face and leaves this off
    seen_faces_only: bool = False
    tray: Path | None = None  #: an empty-tray photo to use instead of the folder's


@dataclass
class FitResult:
    """What a fit wrote and measured."""

    out: Path
    card: dict[str, Any]
    notes: list[str] = field(default_factory=list)
    seconds: float = 0.0


@dataclass
class _Crops:
    """One side of a die's examples as crops: the crops, their faces, box sides and lines."""

    crops: list[np.ndarray]
    faces: np.ndarray
    sides: list[float]
    lines: list[int]


def _crops(examples: list[Example], side: int, photos: dict[Path, Any]) -> _Crops:
    crops: list[np.ndarray] = []
    faces: list[int] = []
    sides: list[float] = []
    lines: list[int] = []
    for e in examples:
        loaded = photos.get(e.image)
        if loaded is None:
            continue
        frame, scale = loaded
        h, w = frame.shape[:2]
        box = (0.0, 0.0, float(w), float(h)) if e.box is None else tuple(v * scale for v in e.box)
        crops.append(crop_die(frame, box, size=side))  # type: ignore[arg-type]
        faces.append(e.face)
        sides.append(max(box[2], box[3]) / max(scale, 1e-6))
        lines.append(e.line)
    return _Crops(crops, np.array(faces, np.int64), sides, lines)


def _turned(crops: list[np.ndarray], side: int) -> list[np.ndarray]:
    box = (0.0, 0.0, float(side), float(side))
    out = []
    for c in crops:
        for a in range(0, 360, TURN_STEP):
            out.append(crop_die(c, box, size=side, angle=float(a)) if a else c)
    return out


def _load_photos(teaching: TeachingSet, log: Callable[[str], None]) -> dict[Path, Any]:
    photos: dict[Path, Any] = {}
    bad = 0
    for path in teaching.photos():
        try:
            info = load_image_info(path)
        except ImageError:
            bad += 1
            continue
        photos[path] = (info.frame, info.scale)
    if bad:
        log(f"skipped {bad} photos that could not be read")
    return photos


def _choose_threshold(conf: np.ndarray, right: np.ndarray) -> float:
    wrong = conf[~right]
    surest_wrong = float(wrong.max()) if len(wrong) else 0.0
    return min(1.0, max(MIN_THRESHOLD, surest_wrong + THRESHOLD_MARGIN))


def _figures(
    faces: tuple[int, ...], labels: np.ndarray, pred: np.ndarray, conf: np.ndarray, thr: float
) -> dict[str, Any]:
    """Held-back right, wrong, unreadable with 95 % intervals, and per-face reject rates."""
    n = len(labels)
    sure = conf >= thr
    right = int((sure & (pred == labels)).sum())
    wrong = int((sure & (pred != labels)).sum())
    lo, hi = binomial_bounds(right, n) if n else (0.0, 1.0)
    per_face: dict[str, Any] = {}
    rates = []
    for f in faces:
        m = labels == f
        k = int(m.sum())
        if k == 0:
            continue
        rejected = int((m & ~sure).sum())
        rate = rejected / k
        rates.append(max(rate, 0.01))
        per_face[str(f)] = {"crops": k, "rejected": rejected, "reject_rate": round(rate, 4)}
    return {
        "dice": n,
        "right": right,
        "wrong": wrong,
        "unreadable": n - right - wrong,
        "right_rate": round(right / n, 4) if n else None,
        "right_interval": [round(lo, 4), round(hi, 4)],
        "wrong_upper": round(binomial_upper(wrong, n), 4) if n else 1.0,
        "reject_ratio": round(max(rates) / min(rates), 2) if rates else None,
        "per_face": per_face,
    }


@dataclass
class _Fitted:
    die: TaughtDie
    reader: Reader
    head: Head
    threshold: float
    strength: float
    figures: dict[str, Any]
    body: Any
    fitted: int


def _fit_die(
    die: TaughtDie, faces: tuple[int, ...], net: Backbone, photos: dict[Path, Any], opts: FitOptions
) -> _Fitted:
    fitted_ex, held_ex = hold_back_split(die.examples, opts.hold_back)
    side = net.spec.side
    fit = _crops(fitted_ex, side, photos)
    held = _crops(held_ex, side, photos)
    if len(fit.crops) == 0 or len(held.crops) == 0:
        raise FitError(f"teach more rolls of the {die.id}: too few photos to fit and to hold back")
    turns = len(range(0, 360, TURN_STEP))
    x = net.features(_turned(fit.crops, side))
    y = np.repeat(fit.faces, turns)
    held_x = net.features(held.crops)
    prior = net.prior(die.kind, faces)
    best: tuple[int, float, Head, float] | None = None
    for strength in STRENGTHS:
        head = fit_head(x, y, faces, prior, strength=strength)
        p = head.probabilities(held_x)
        pred = np.array(faces)[p.argmax(axis=1)]
        conf = p.max(axis=1)
        thr = _choose_threshold(conf, pred == held.faces)
        right = int(((conf >= thr) & (pred == held.faces)).sum())
        if best is None or right >= best[0]:  # ties go to the stronger pull (nearer the general answer)
            best = (right, strength, head, thr)
    assert best is not None
    _right, strength, head, thr = best
    p = head.probabilities(held_x)
    figures = _figures(faces, held.faces, np.array(faces)[p.argmax(axis=1)], p.max(axis=1), thr)
    figures["fitted_crops"] = len(fit.crops)
    body = learn_body(fit.crops + held.crops, fit.sides + held.sides)
    return _Fitted(die, net.spec.reader, head, thr, strength, figures, body, len(fit.crops))


def _check_counts(die: TaughtDie, faces: tuple[int, ...], opts: FitOptions) -> None:
    counts = die.counts()
    short = [f for f in faces if counts.get(f, 0) < opts.min_per_face]
    if short:
        listed = " and ".join(", ".join(map(str, short)).rsplit(", ", 1)) if len(short) > 1 else str(short[0])
        word = "faces" if len(short) > 1 else "face"
        verb = "were" if len(short) > 1 else "was"
        raise FitError(
            f"teach more rolls of the {die.id}: {word} {listed} {verb} seen fewer than"
            f" {opts.min_per_face} times"
        )


def fit_model(
    folder: str | Path,
    out: str | Path,
    options: FitOptions | None = None,
    *,
    log: Callable[[str], None] = lambda _msg: None,
    command: str = "",
) -> FitResult:
    """Fit a taught model on ``folder``'s named dice and write it to ``out`` (see module docstring).

    The linear algebra runs on one BLAS thread: a threaded BLAS sums in an order that changes from
    run to run, and a die's threshold (just above its surest wrong held-back answer) can follow the
    last digit; one thread gives the same model from the same folder on every run, and on a
    two-core machine it is faster too (the network's own threads are busy beside it).
    """
    with _one_blas_thread():
        return _fit_model(folder, out, options, log, command)


@contextmanager
def _one_blas_thread() -> Iterator[None]:
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:  # without it the fit runs, with the BLAS's own threads
        yield
        return
    with threadpool_limits(limits=1, user_api="blas"):
        yield


def _fit_model(
    folder: str | Path,
    out: str | Path,
    options: FitOptions | None,
    log: Callable[[str], None],
    command: str,
) -> FitResult:
    opts = options or FitOptions()
    t0 = time.perf_counter()
    teaching = read_teaching_set(folder)
    notes = list(teaching.notes)
    for note in notes:
        log(note)
    if not teaching.dice:
        raise FitError(
            f"{folder}: no named die of a kind the tower can be taught (d6, d8, d10, d10t, d12, d20)"
        )
    die_faces: dict[str, tuple[int, ...]] = {}
    for die in teaching.dice:
        counts = die.counts()
        if opts.seen_faces_only:
            faces = tuple(f for f in die.faces if counts.get(f, 0) > 0)
            if len(faces) < 2:
                raise FitError(f"{die.id}: only one face named; a reader needs at least two")
            _check_counts(die, faces, opts)
        else:
            faces = die.faces
            _check_counts(die, faces, opts)
        die_faces[die.id] = faces
    photos = _load_photos(teaching, log)
    nets: dict[str, Backbone] = {}
    fitted: list[_Fitted] = []
    for die in teaching.dice:
        spec = backbone_for(die.kind)
        net = nets.setdefault(spec.model, Backbone(spec))
        log(f"fitting the {die.id} ({len(die.examples)} crops)")
        fitted.append(_fit_die(die, die_faces[die.id], net, photos, opts))
    dice_held = sum(f.figures["dice"] for f in fitted)
    wrong_held = sum(f.figures["wrong"] for f in fitted)
    right_held = sum(f.figures["right"] for f in fitted)
    wrong_upper = binomial_upper(wrong_held, dice_held) if dice_held else 1.0
    if wrong_upper > opts.max_wrong:
        raise FitError(
            f"the held-back wrong rate could be {wrong_upper:.1%} ({wrong_held} wrong of {dice_held}"
            f" held-back dice), over {opts.max_wrong:.1%}: teach more rolls, so more are held back"
        )
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    cards: list[TaughtDieCard] = []
    for reader in (Reader.PIPS, Reader.NUMERALS):
        mine = [f for f in fitted if f.reader is reader]
        if not mine:
            continue
        row = 0
        for f in mine:
            n = len(f.head.faces)
            cards.append(
                TaughtDieCard(
                    f.die.id,
                    f.die.kind,
                    f.die.colour,
                    reader,
                    f.head.faces,
                    (row, row + n),
                    f.threshold,
                    f.body,
                    {**f.figures, "strength": f.strength},
                )
            )
            row += n
        net = next(n for n in nets.values() if n.spec.reader is reader)
        weights = np.vstack([f.head.weights for f in mine])
        bias = np.concatenate([f.head.bias for f in mine])
        write_taught_network(net.path, out / network_file(reader), weights, bias)
    tray_note = derive_tray(teaching, out / "tray.png", opts.tray)
    notes.append(tray_note)
    log(tray_note)
    lo, hi = binomial_bounds(right_held, dice_held) if dice_held else (0.0, 1.0)
    seconds = time.perf_counter() - t0
    card = {
        "schema": SCHEMA,
        "what": "a reader taught on one tower's own dice: the general networks' features, a head per die",
        "command": command,
        "folder": str(Path(folder)),
        "photos": teaching.lines,
        "held_back_share": opts.hold_back,
        "seen_faces_only": opts.seen_faces_only,
        "held_back": {
            "dice": dice_held,
            "right": right_held,
            "wrong": wrong_held,
            "unreadable": dice_held - right_held - wrong_held,
            "right_interval": [round(lo, 4), round(hi, 4)],
            "wrong_upper": round(wrong_upper, 4),
        },
        "networks": {
            spec.reader.value: {"model": spec.model, "sha256": _sha256(net.path)}
            for spec, net in ((n.spec, n) for n in nets.values())
        },
        "fit_seconds": round(seconds, 1),
        "notes": notes,
        "dice": [c.to_json() for c in cards],
    }
    tmp = out / f".{CARD}.tmp"
    tmp.write_text(json.dumps(card, indent=2) + "\n", encoding="utf-8")
    tmp.replace(out / CARD)
    return FitResult(out, card, notes, seconds)


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()
