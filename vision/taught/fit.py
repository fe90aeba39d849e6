"""Fit a taught model from a labelled folder: the tray, each die's body, and a reader for its faces.

For each taught die (:mod:`.teaching`), in the order its photos were rolled:

1. the latest :data:`HOLD_BACK` of its photos are held back; the rest are *fitted*;
2. each fitted crop is read by each general network the die's kind may use (:mod:`.features`),
   turned every way it may land (:mod:`.samples`), and a head over the die's faces is fitted
   on those features (:mod:`.head`), pulled toward the general network's own answer by each
   of :data:`STRENGTHS`;
3. each head reads the held-back crops as reading will; the network and strength that read
   most of them right with none wrong are kept, and the die's threshold is set just above the
   surest wrong answer there (never below :data:`MIN_THRESHOLD`);
4. the held-back right, wrong and unreadable counts, their 95 % intervals and the per-face
   reject rates go into the card;
5. for a numeral die the general reader reads, the general answer is asked about the held-back
   dice the head left unreadable (:mod:`.fallback`); the die falls back on it when it read some
   of them right and none wrong.

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
from .body import learn_body
from .card import CARD, SCHEMA, TaughtDieCard, network_file, seal_card
from .fallback import GeneralAnswer, can_fall_back, held_back_fallback
from .features import NETWORKS, Backbone, Network, TaughtModelError, networks_for
from .head import Head, fit_head
from .model import TaughtModel
from .onnxfile import write_taught_network
from .photos import check_tray, load_teach_photos
from .samples import Sample, SampleCache, example_box
from .teaching import TaughtDie, hold_back_split, read_teaching_set
from .telling import IDENTITY_NETWORK, fit_telling
from .tray import derive_tray

__all__ = [
    "HOLD_BACK",
    "MAX_WRONG",
    "MIN_PER_FACE",
    "MIN_THRESHOLD",
    "STRENGTHS",
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
#: The pulls toward the general answer tried; the held-back crops choose one per die.
STRENGTHS = (1e-3, 1e-2, 1e-1, 1.0)
#: No threshold is set below this.
MIN_THRESHOLD = 0.95
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
    network: Network
    head: Head
    threshold: float
    strength: float
    figures: dict[str, Any]
    body: Any
    fallback: bool = False


def _held_back_right(head: Head, held: Sample) -> tuple[int, float]:
    """Held-back dice read right at the threshold the held-back crops set, and that threshold."""
    p = head.probabilities(held.features)
    pred = np.array(head.faces)[p.argmax(axis=1)]
    conf = p.max(axis=1)
    thr = _choose_threshold(conf, pred == held.labels)
    return int(((conf >= thr) & (pred == held.labels)).sum()), thr


def _fit_die(
    die: TaughtDie,
    faces: tuple[int, ...],
    samples: SampleCache,
    opts: FitOptions,
) -> _Fitted:
    """The die's best head: every network of its kind, every strength, judged on the held-back rolls."""
    fitted_ex, _held_ex = hold_back_split(die.examples, opts.hold_back)
    best: tuple[int, Network, float, Head, float, Sample] | None = None
    body_source: Sample | None = None
    for network in networks_for(die.kind):
        net = samples.nets[network]
        fit, held = (
            samples.get(die, faces, network, fitted=True),
            samples.get(die, faces, network, fitted=False),
        )
        if fit.examples == 0 or held.examples == 0:
            raise FitError(f"teach more rolls of the {die.id}: too few photos to fit and to hold back")
        prior = net.prior(die.kind, faces)
        for strength in STRENGTHS:
            head = fit_head(fit.features, fit.labels, faces, prior, strength=strength)
            right, thr = _held_back_right(head, held)
            # ties go to the earlier network and the stronger pull (nearer the general answer)
            if best is None or right > best[0] or (right == best[0] and network is best[1]):
                best = (right, network, strength, head, thr, held)
        body_source = body_source or Sample(
            fit.features, fit.labels, fit.crops + held.crops, fit.sides + held.sides, 0
        )
    assert best is not None and body_source is not None
    _right, network, strength, head, thr, held = best
    p = head.probabilities(held.features)
    figures = _figures(faces, held.labels, np.array(faces)[p.argmax(axis=1)], p.max(axis=1), thr)
    figures["fitted_photos"] = len({e.line for e in fitted_ex})
    body = learn_body(body_source.crops, body_source.sides)
    return _Fitted(die, network, head, thr, strength, figures, body)


def _general_answer() -> GeneralAnswer | None:
    """The shipped general numeral reader, or None when its models are not installed."""
    from ..reader import open_reader

    general = open_reader(None, numerals=True)
    if general.numerals is None or general.glyphs is None:
        return None
    return GeneralAnswer(general.numerals, general.glyphs)


def _decide_fallback(
    f: _Fitted, faces: tuple[int, ...], samples: SampleCache, opts: FitOptions, answer: GeneralAnswer
) -> None:
    """Ask the general answer about the held-back dice ``f``'s head left unreadable; record it."""
    _fitted, held_ex = hold_back_split(f.die.examples, opts.hold_back)
    held_ex = [e for e in held_ex if e.image in samples.photos]
    held = samples.get(f.die, faces, f.network, fitted=False)
    if len(held.labels) != len(held_ex):  # one row per held-back example, as reading reads it
        raise TaughtModelError(f"{f.die.id}: held-back rows do not match its examples")
    conf = f.head.probabilities(held.features).max(axis=1)
    unsure = []
    for row in np.flatnonzero(conf < f.threshold):
        e = held_ex[int(row)]
        frame, scale = samples.photos[e.image]
        unsure.append((frame, example_box(e, frame, scale), e.face))
    figures = held_back_fallback(answer, f.die.kind, faces, unsure)
    f.figures["fallback"] = figures
    f.fallback = bool(figures["used"])


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
    if opts.tray is not None:
        check_tray(opts.tray)  # a tray asked for that cannot be read stops the fit before it starts
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
    photos = load_teach_photos(teaching, log)
    wanted = {n for die in teaching.dice for n in networks_for(die.kind)}
    if len(teaching.dice) > 1:
        wanted.add(IDENTITY_NETWORK)
    nets = {n: Backbone(NETWORKS[n]) for n in wanted}
    samples = SampleCache(nets, photos, opts.hold_back)
    fitted: list[_Fitted] = []
    for die in teaching.dice:
        log(f"fitting the {die.id} ({len(die.examples)} crops)")
        fitted.append(_fit_die(die, die_faces[die.id], samples, opts))
    answer = _general_answer() if any(can_fall_back(f.die.kind) for f in fitted) else None
    for f in fitted:
        if answer is not None and can_fall_back(f.die.kind):
            _decide_fallback(f, die_faces[f.die.id], samples, opts, answer)
    telling = fit_telling(teaching.dice, die_faces, samples) if len(teaching.dice) > 1 else None
    if telling is not None:
        log(f"telling the dice apart: {telling.figures['right']} of {telling.figures['dice']} held-back dice")
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
    for stale in (
        *(network_file(n) for n in Network),
        "tray.png",
        CARD,
    ):  # a model replaced leaves none of its files
        (out / stale).unlink(missing_ok=True)
    cards: list[TaughtDieCard] = []
    for network in Network:
        mine = [f for f in fitted if f.network is network]
        if not mine:
            continue
        net = nets[network]
        row = len(net.bias)  # the general rows come first: reading a glyph die turns on them
        for f in mine:
            n = len(f.head.faces)
            cards.append(
                TaughtDieCard(
                    f.die.id,
                    f.die.kind,
                    f.die.colour,
                    network,
                    f.head.faces,
                    (row, row + n),
                    f.threshold,
                    f.body,
                    {**f.figures, "strength": f.strength},
                    f.fallback,
                )
            )
            row += n
        heads = [f.head for f in mine]
        if telling is not None and network is IDENTITY_NETWORK:
            telling.rows = (row, row + len(telling.ids))
            heads.append(telling.head)
        weights = np.vstack([net.weights, *(h.weights for h in heads)])
        bias = np.concatenate([net.bias, *(h.bias for h in heads)])
        write_taught_network(net.path, out / network_file(network), weights, bias)
    if telling is not None and telling.rows == (0, 0):  # no die is read by its network: a file of its own
        net = nets[IDENTITY_NETWORK]
        telling.rows = (len(net.bias), len(net.bias) + len(telling.ids))
        weights = np.vstack([net.weights, telling.head.weights])
        bias = np.concatenate([net.bias, telling.head.bias])
        write_taught_network(net.path, out / network_file(IDENTITY_NETWORK), weights, bias)
    tray_note = derive_tray(teaching, out / "tray.png", opts.tray)
    notes.append(tray_note)
    log(tray_note)
    lo, hi = binomial_bounds(right_held, dice_held) if dice_held else (0.0, 1.0)
    fell_back = sum(f.figures["fallback"]["right"] for f in fitted if f.fallback)
    lo_fb, hi_fb = binomial_bounds(right_held + fell_back, dice_held) if dice_held else (0.0, 1.0)
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
        # the same dice read as the model reads them: heads, and the general answer where chosen
        "held_back_read": {
            "dice": dice_held,
            "right": right_held + fell_back,
            "wrong": wrong_held,
            "unreadable": dice_held - right_held - fell_back - wrong_held,
            "right_interval": [round(lo_fb, 4), round(hi_fb, 4)],
            "wrong_upper": round(wrong_upper, 4),
        },
        "networks": {
            n.value: {"model": net.spec.model, "sha256": _sha256(net.path)} for n, net in nets.items()
        },
        "fit_seconds": round(seconds, 1),
        "notes": notes,
        "dice": [c.to_json() for c in cards],
        "telling": None if telling is None else telling.to_json(),
    }
    card = seal_card(card, out)  # every file written above hashed, and the card itself
    tmp = out / f".{CARD}.tmp"
    tmp.write_text(json.dumps(card, indent=2) + "\n", encoding="utf-8")
    tmp.replace(out / CARD)
    TaughtModel(out)  # the model is loaded as reading will load it: what the fit writes, the load accepts
    return FitResult(out, card, notes, seconds)


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()
