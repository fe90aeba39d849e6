"""Fit a taught model from a labelled folder: the tray, each die's body, and a reader for its faces.

For each taught die (:mod:`.teaching`), in the order its photos were rolled:

1. photos without boxes are located, or taken as crops when the folder is of crops (:mod:`.located`);
2. the latest :data:`HOLD_BACK` of the folder's photos (whole photos, every die alike) are held
   back; the rest are *fitted*;
3. each fitted crop is read by each general network the die's kind may use (:mod:`.features`),
   turned every way it may land (:mod:`.samples`), and a head over the die's faces is fitted
   on those features (:mod:`.head`), pulled toward the general network's own answer by each
   of :data:`STRENGTHS`; the network and strength that read most held-back crops right are kept;
4. the held-back photos are read end to end with the model, by the reader ``dicetower eval
   --taught``, ``roll`` and ``serve`` use (:mod:`.heldback`): each die's threshold, and whether
   it falls back on the general answer (:mod:`.fallback`), are chosen on that read, and the
   card's figures are that read's, a die not found counted as not right. The held-back photos
   are written beside the model (``MODEL/held-back``), so ``dicetower eval MODEL/held-back
   --taught MODEL`` prints the card's counts;
5. beside each head, a small network is trained on the die's own fitted crops (its *fitted
   reader*, :mod:`.fitted_choice`; it needs torch, and without it each die keeps its head), the
   held-back dice are read with it too, and each die keeps the reader that reads more of them
   right with none wrong; the card says which, with both readers' figures.

The fit refuses, naming the die and the faces, when a face was named fewer than
:data:`MIN_PER_FACE` times, and when the held-back wrong rate could be over
:data:`MAX_WRONG` (its one-sided 95 % upper bound over every taught die's held-back dice).
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ..eval.intervals import binomial_bounds, binomial_upper
from ..manifest import read_manifest
from .body import learn_body
from .card import CARD, SCHEMA, TaughtDieCard, model_files_in, network_file, seal_card
from .fallback import GeneralAnswer, needs_answer
from .features import NETWORKS, Backbone, Network, TaughtModelError, networks_for
from .fitted_choice import attach_fitted, choose_readers, train_fitted
from .head import Head, fit_head, project
from .heldback import (
    HELD_BACK_DIR,
    MIN_THRESHOLD,
    THRESHOLD_MARGIN,
    read_held_back,
    write_held_back,
)
from .located import InputForm, Locate, locate_examples
from .memory import return_freed_memory
from .model import TaughtModel
from .onnxfile import write_taught_network
from .photo_checks import check_tray, checked_photos
from .photo_store import PhotoStore
from .samples import Sample, SampleCache
from .teaching import TaughtDie, TeachingSet, held_back_line, read_teaching_set, split_at
from .telling import IDENTITY_NETWORK, Telling, fit_telling
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
    #: each image without a box is one die's crop (:mod:`.located`); else such images are
    #: crops only when crop-sized, and photos otherwise, each die located
    crops: bool = False
    #: train a fitted face reader per die beside its head (:mod:`.fitted_choice`; needs torch).
    #: Off unless asked: on the real sets it beat the head on one (byler-d6) and multiplies the
    #: fit's time (docs/teach.md, "A face reader fitted on the die's own crops")
    fitted_readers: bool = False


@dataclass
class FitResult:
    """What a fit wrote and measured."""

    out: Path
    card: dict[str, Any]
    notes: list[str] = field(default_factory=list)
    seconds: float = 0.0


def _load_photos(teaching: TeachingSet, log: Callable[[str], None]) -> PhotoStore:
    photos = PhotoStore(checked_photos(teaching))  # every header checked before a photo is decoded
    if photos.bad:
        log(f"skipped {photos.bad} photos that could not be read")
    return photos


def _choose_threshold(conf: np.ndarray, right: np.ndarray) -> float:
    wrong = conf[~right]
    surest_wrong = float(wrong.max()) if len(wrong) else 0.0
    return min(1.0, max(MIN_THRESHOLD, surest_wrong + THRESHOLD_MARGIN))


@dataclass
class _Fitted:
    die: TaughtDie
    network: Network
    head: Head
    threshold: float
    strength: float
    figures: dict[str, Any]
    body: Any


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
    fitted_ex, _held_ex = split_at(die.examples, samples.cut)
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
        projection = project(fit.features)  # one projection serves every strength
        for strength in STRENGTHS:
            head = fit_head(fit.features, fit.labels, faces, prior, strength=strength, projection=projection)
            right, thr = _held_back_right(head, held)
            # ties go to the earlier network and the stronger pull (nearer the general answer)
            if best is None or right > best[0] or (right == best[0] and network is best[1]):
                best = (right, network, strength, head, thr, held)
        body_source = body_source or Sample(
            fit.features, fit.labels, fit.crops + held.crops, fit.sides + held.sides, 0
        )
    assert best is not None and body_source is not None
    _right, network, strength, head, thr, _held = best
    figures = {"fitted_photos": len({e.line for e in fitted_ex})}
    body = learn_body(body_source.crops, body_source.sides)
    return _Fitted(die, network, head, thr, strength, figures, body)


def _general_answer() -> GeneralAnswer | None:
    """The shipped general numeral reader, or None when its models are not installed."""
    from ..reader import open_reader

    general = open_reader(None, numerals=True)
    if general.numerals is None or general.glyphs is None:
        return None
    return GeneralAnswer(general.numerals, general.glyphs)


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


def _locator() -> Locate:
    """The general reader that locates dice (numeral kinds on), as a ``(frame, tray) -> Reading``."""
    from ..reader import open_reader

    return open_reader(None, numerals=True).read


def _counts(n: int, right: int, wrong: int, extra: dict[str, Any]) -> dict[str, Any]:
    lo, hi = binomial_bounds(right, n) if n else (0.0, 1.0)
    return {
        "dice": n,
        "right": right,
        "wrong": wrong,
        "unreadable": n - right - wrong,
        **extra,
        "right_interval": [round(lo, 4), round(hi, 4)],
        "wrong_upper": round(binomial_upper(wrong, n), 4) if n else 1.0,
    }


def _write_networks(
    fitted: list[_Fitted], nets: dict[Network, Backbone], telling: Telling | None, out: Path
) -> list[TaughtDieCard]:
    """Write each network with its dice's heads (and the telling head) below its rows; the dice's cards."""
    cards: list[TaughtDieCard] = []
    for network in Network:
        mine = [f for f in fitted if f.network is network]
        if not mine:
            continue
        net = nets[network]
        row = len(net.bias)  # the general rows come first: reading a glyph die turns on them
        for f in mine:
            n = len(f.head.faces)
            figures = {**f.figures, "strength": f.strength}
            cards.append(
                TaughtDieCard(
                    f.die.id,
                    f.die.kind,
                    f.die.colour,
                    network,
                    f.head.faces,
                    (row, row + n),
                    0.0,
                    f.body,
                    figures,
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
    return cards


def _write_card(out: Path, card: dict[str, Any]) -> dict[str, Any]:
    """Write ``card`` sealed: every model file written in ``out`` hashed, and the card itself."""
    sealed = seal_card(card, out)
    tmp = out / f".{CARD}.tmp"
    tmp.write_text(json.dumps(sealed, indent=2) + "\n", encoding="utf-8")
    tmp.replace(out / CARD)
    return sealed


def _move_into(staging: Path, out: Path) -> None:
    """Replace ``out``'s model files with ``staging``'s (a model replaced leaves none of its files)."""
    out.mkdir(parents=True, exist_ok=True)
    for stale in (*model_files_in(out), CARD):
        (out / stale).unlink(missing_ok=True)
    if (out / HELD_BACK_DIR).is_dir():
        shutil.rmtree(out / HELD_BACK_DIR)
    for item in sorted(staging.iterdir(), key=lambda p: p.name == CARD):  # the card last
        os.replace(item, out / item.name)


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
    folder = Path(folder)
    teaching = read_teaching_set(folder)
    notes = list(teaching.notes)
    for note in notes:
        log(note)
    photos = _load_photos(teaching, log)
    form: InputForm = locate_examples(teaching, photos, crops=opts.crops, locate=_locator)
    if form.note():
        notes.append(str(form.note()))
        log(str(form.note()))
    teaching.dice = [d for d in teaching.dice if d.examples]
    if not teaching.dice:
        raise FitError(
            f"{folder}: no named die of a kind the tower can be taught (d6, d8, d10, d10t, d12, d20)"
            + (" whose photo could be located" if form.refused else "")
        )
    die_faces: dict[str, tuple[int, ...]] = {}
    for die in teaching.dice:
        counts = die.counts()
        if opts.seen_faces_only:
            faces = tuple(f for f in die.faces if counts.get(f, 0) > 0)
            if len(faces) < 2:
                raise FitError(f"{die.id}: only one face named; a reader needs at least two")
        else:
            faces = die.faces
        _check_counts(die, faces, opts)
        die_faces[die.id] = faces
    cut = held_back_line((e.line for d in teaching.dice for e in d.examples), opts.hold_back)
    wanted = {n for die in teaching.dice for n in networks_for(die.kind)}
    if len(teaching.dice) > 1:
        wanted.add(IDENTITY_NETWORK)
    nets = {n: Backbone(NETWORKS[n]) for n in wanted}
    samples = SampleCache(nets, photos, cut)
    fitted: list[_Fitted] = []
    for die in teaching.dice:
        log(f"fitting the {die.id} ({len(die.examples)} crops)")
        fitted.append(_fit_die(die, die_faces[die.id], samples, opts))
        samples.release(die, keep=(IDENTITY_NETWORK,) if len(teaching.dice) > 1 else ())
        return_freed_memory()
    telling = fit_telling(teaching.dice, die_faces, samples) if len(teaching.dice) > 1 else None
    if telling is not None:
        log(f"telling the dice apart: {telling.figures['right']} of {telling.figures['dice']} held-back dice")
    trained = train_fitted(teaching.dice, die_faces, photos, cut, log, skip=not opts.fitted_readers)
    del samples, photos  # the held-back photos are read again from disk, as eval reads them
    return_freed_memory()
    answer = _general_answer() if any(needs_answer(f.die.kind) for f in fitted) else None
    out = Path(out)
    staging = out.parent / f".{out.name}.fitting"
    if staging.exists():
        shutil.rmtree(staging)
    staging.mkdir(parents=True)
    try:
        cards = attach_fitted(trained, _write_networks(fitted, nets, telling, staging), staging)
        tray_note = derive_tray(teaching, staging / "tray.png", opts.tray)
        notes.append(tray_note)
        log(tray_note)
        held_entries = [e for e in read_manifest(folder, unnamed=True) if e.line >= cut]
        held_photos = write_held_back(held_entries, {d.id for d in teaching.dice}, staging / HELD_BACK_DIR)
        card: dict[str, Any] = {
            "schema": SCHEMA,
            "what": "a reader taught on one tower's own dice: a head per die on the general networks'"
            " features, or a network fitted on the die's own crops",
            "command": command,
            "folder": str(folder),
            "photos": teaching.lines,
            "input": form.to_json(),
            "held_back_share": opts.hold_back,
            "held_back_photos": {"folder": HELD_BACK_DIR, "photos": held_photos, "first_line": cut},
            "seen_faces_only": opts.seen_faces_only,
            "networks": {
                n.value: {"model": net.spec.model, "sha256": _sha256(net.path)} for n, net in nets.items()
            },
            "dice": [c.to_json() for c in cards],  # threshold 0 and no fallback: every head answers
            "telling": None if telling is None else telling.to_json(),
            "fitted_readers": trained.to_json(),
        }
        _write_card(staging, card)
        log(f"reading the {held_photos} held-back photos end to end")
        model = TaughtModel(staging, open_heads=True)
        reader, reads = read_held_back(staging / HELD_BACK_DIR, model)
        cal, cards = choose_readers(reader, reads, cards, answer, model)
        for c in cards:
            if "readers" in cal.per_die[c.id]:
                which = "fitted reader" if c.reader == "fitted" else "head"
                log(f"the {c.id} reads by its {which}: {cal.per_die[c.id]['readers']['why']}")
        totals = cal.report.totals
        dice_held, right_held, wrong_held = cal.report.dice, totals["correct"], totals["wrong"]
        wrong_upper = binomial_upper(wrong_held, dice_held) if dice_held else 1.0
        if wrong_upper > opts.max_wrong:
            raise FitError(
                f"the held-back wrong rate could be {wrong_upper:.1%} ({wrong_held} wrong of {dice_held}"
                f" held-back dice), over {opts.max_wrong:.1%}: teach more rolls, so more are held back"
            )
        final = []
        for c in cards:
            figures = {**c.figures, **cal.per_die[c.id]}
            fallback = bool(cal.fallback.get(c.id, {}).get("used", False))
            final.append(
                TaughtDieCard(
                    c.id,
                    c.kind,
                    c.colour,
                    c.network,
                    c.faces,
                    c.rows,
                    cal.thresholds[c.id],
                    c.body,
                    figures,
                    fallback,
                    c.reader,
                    c.fitted,
                )
            )
        held = _counts(
            dice_held,
            right_held,
            wrong_held,
            {
                "rejected": totals["rejected"],
                "missed": totals["missed"],
                "false_finds": cal.report.false_positives,
                "false_finds_read": cal.report.false_positives_read,
            },
        )
        seconds = time.perf_counter() - t0
        card.update(
            {
                # read end to end as the model reads: heads, the general answer where chosen, dice not
                # found counted as not right; held_back_read is the same read (kept for readers of the card)
                "held_back": held,
                "held_back_read": dict(held),
                "threshold_chosen_on": "the held-back photos read end to end",
                "fit_seconds": round(seconds, 1),
                "notes": notes,
                "dice": [c.to_json() for c in final],
            }
        )
        card = _write_card(staging, card)
        _move_into(staging, out)
        TaughtModel(out)  # loaded as reading will load it: what the fit writes, the load accepts
    finally:
        if staging.exists():
            shutil.rmtree(staging)
    return FitResult(out, card, notes, seconds)


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()
