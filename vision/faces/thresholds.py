"""Per-face acceptance thresholds: how sure the face reader must be before a face counts.

One acceptance rule, :func:`taken`, serves the trainer's calibration (``vision/training/d6/train.py``),
its sweep (``d6.rank --reject-rates``) and a tower's own calibration (``dicetower calibrate``,
:mod:`dicetower.vision.eval.calibrate`): a die's answer is its most likely class, taken when that class
is a face whose threshold the probability reaches. The runtime
(:meth:`dicetower.vision.faces.pips.D6Reader.decide`) applies the same rule to one die at a time in
plain floats, since it runs per die on every frame; ``tests/vision/test_calibrate.py`` checks
that eval with a calibrated card counts what calibrate counted.

Why one threshold per face at an equal reject rate (:func:`thresholds_at`): a reader that
rejects 6s more often than 1s biases every roll, so each face gives up the same share of its
right answers. Why the rate is chosen by a price (:func:`choose_thresholds`): a wrong face
silently changes a game, a rejected die only costs a re-roll.

numpy only: the tower calibrates itself without the training stack.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

__all__ = [
    "MARGIN",
    "MAX_REJECT",
    "RATE_STEPS",
    "WRONG_COST",
    "choose_reject_rate",
    "choose_thresholds",
    "in_gap",
    "outcome_counts",
    "taken",
    "thresholds_at",
]

#: One confidently wrong face is priced as this many re-rolls.
WRONG_COST = 30.0
#: Highest reject rate the price may choose: a tower that re-rolls more than one die in ten by
#: doubt alone is not usable either.
MAX_REJECT = 0.1
#: Reject rates tried from 0 to the cap.
RATE_STEPS = 121
#: A chosen threshold lies at most this far below the least sure answer it accepts (:func:`in_gap`).
#: The same network file gives probabilities that differ by about 1e-4 from one machine to
#: another (cv2.dnn picks its kernels by CPU: face 1's top-down threshold, cut on its least sure
#: right val die, came out 0.92582 on one machine and 0.92591 on another, BENCHMARKS.md), so a
#: threshold placed exactly on an answer accepts it on one machine and rejects it on another.
MARGIN = 1e-3


def thresholds_at(conf: np.ndarray, pred: np.ndarray, y: np.ndarray, r: float) -> dict[int, float]:
    """Per-face thresholds that reject the share ``r`` of each face's right answers.

    The threshold of face f is the r-quantile of the confidences of dice labelled f and read f;
    a face with no such die gets 0.5. ``d6.rank --reject-rates`` shows what each r would cost
    per dataset.
    """
    thr = {}
    for f in range(1, 7):
        c = conf[(y == f) & (pred == f)]
        thr[f] = float(np.quantile(c, r)) if len(c) else 0.5
    return thr


def in_gap(
    thr: dict[int, float], conf: np.ndarray, pred: np.ndarray, margin: float = MARGIN
) -> dict[int, float]:
    """``thr`` moved inside the gap around each face's cut, accepting and rejecting the same answers.

    Why: :func:`thresholds_at` at reject rate 0 returns the least sure right answer's own
    probability, so that die sits on the cut, and a drift of 1e-4 in how a machine computes it
    (:data:`MARGIN`) flips it. Each face's threshold goes to ``margin`` below the least sure answer
    it accepts, or to the middle of the gap when the most sure answer it rejects is nearer than
    twice that: every answer ``conf``/``pred`` holds is then at least ``min(margin, gap / 2)`` from
    the cut, and :func:`taken` decides each exactly as before.
    """
    conf, pred = np.asarray(conf, np.float64), np.asarray(pred)
    out = {}
    for f, t in thr.items():
        mine = conf[pred == f]
        above, below = mine[mine >= t], mine[mine < t]
        if not len(above):  # nothing accepted: no answer lies on the cut
            out[f] = t
            continue
        low = float(above.min())
        cut = low - margin
        if len(below):
            cut = max(cut, (low + float(below.max())) / 2.0)
        out[f] = cut
    return out


def taken(conf: np.ndarray, pred: np.ndarray, thr: dict[int, float]) -> np.ndarray:
    """Which answers ``thr`` accepts, as the runtime decides: a face whose threshold ``conf`` reaches.

    ``pred`` is each answer's most likely class and ``conf`` its probability; class 0 ("not a
    readable die") is never taken.
    """
    bar = np.array([thr.get(int(k), 2.0) if k >= 1 else 2.0 for k in pred], np.float64)
    return np.asarray(conf) >= bar


def outcome_counts(
    conf: np.ndarray, pred: np.ndarray, labels: np.ndarray, thr: dict[int, float]
) -> tuple[int, int, int]:
    """Right, wrong and rejected answers when ``thr`` decides (:func:`taken`)."""
    took = taken(conf, pred, thr)
    right = int((took & (np.asarray(pred) == np.asarray(labels))).sum())
    wrong = int(took.sum()) - right
    return right, wrong, len(took) - right - wrong


def choose_thresholds(
    probs: np.ndarray,
    labels: np.ndarray,
    groups: np.ndarray | None = None,
    wrong_cost: float = WRONG_COST,
    max_reject: float = MAX_REJECT,
    negative_groups: tuple[int, ...] = (),
) -> tuple[dict[int, float], dict[str, Any]]:
    """Per-face thresholds with an equal reject rate r per face, r chosen by cost on val.

    ``probs`` are calibrated class probabilities ``(N, 7)`` and ``labels`` the labelled faces
    (0 = not a die); the answers are each row's most likely class, and the choice is
    :func:`choose_reject_rate`'s. ``negative_groups`` are groups of class-0 crops that must not
    be read as a face (other kinds of dice): each is one more group in the average, whose
    "wrong" is the share of its crops accepted as a face and whose rejections cost nothing
    (rejecting them is right).
    """
    all_groups = groups if groups is not None else np.zeros(len(labels), np.int64)
    dice = labels > 0
    neg = (labels == 0) & np.isin(all_groups, negative_groups)
    return choose_reject_rate(
        probs[dice].max(1),
        probs[dice].argmax(1),
        labels[dice],
        all_groups[dice],
        wrong_cost=wrong_cost,
        max_reject=max_reject,
        negatives=(probs[neg].max(1), probs[neg].argmax(1), all_groups[neg]),
    )


def choose_reject_rate(
    conf: np.ndarray,
    pred: np.ndarray,
    labels: np.ndarray,
    groups: np.ndarray | Sequence[int] | None = None,
    *,
    wrong_cost: float = WRONG_COST,
    max_reject: float = MAX_REJECT,
    negatives: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None,
) -> tuple[dict[int, float], dict[str, Any]]:
    """Thresholds at the reject rate r whose price is lowest, and what they did per group.

    Each die is one answer: ``pred`` its most likely class (0 = not a readable die), ``conf``
    that class's probability, ``labels`` its labelled face (1-6). For a reject rate r the
    threshold of face f is :func:`thresholds_at`: the r-quantile of the confidences of dice
    *labelled* f and read f, so each face loses the same share (no face is favoured). r
    minimises ``wrong_cost * confidently_wrong + rejected`` (both as shares) averaged over the
    groups (datasets, each counted equally): one wrong read is priced as ``wrong_cost``
    re-rolls. (A hard cap such as "0.3 % wrong" is not reachable on every dataset at a sane
    reject rate, and then one hard dataset would decide the rejections everywhere.) r is capped
    at ``max_reject``; of equal prices the lowest r wins.

    ``negatives`` = ``(conf, pred, group)`` of crops that must not be read as a face: each of
    their groups is one more in the average, whose "wrong" is the share accepted as a face.
    """
    conf, pred, y = np.asarray(conf, np.float64), np.asarray(pred), np.asarray(labels)
    g = np.zeros(len(y), np.int64) if groups is None else np.asarray(groups)
    keys = [int(k) for k in np.unique(g)]
    none = np.zeros(0)
    neg_conf, neg_pred, neg_g = negatives if negatives is not None else (none, none, none)
    neg_keys = [int(k) for k in np.unique(neg_g)]
    best: tuple[float, float, dict[int, float], dict[int, tuple[float, float]]] | None = None
    for r in np.linspace(0.0, max_reject, RATE_STEPS):
        thr = thresholds_at(conf, pred, y, float(r))
        accepted = taken(conf, pred, thr)
        rates = {}
        for k in keys:
            sel = g == k
            rates[k] = (float(np.mean(accepted[sel] & (pred[sel] != y[sel]))), float(np.mean(~accepted[sel])))
        if neg_keys:
            read_as_face = taken(neg_conf, neg_pred, thr)
            for k in neg_keys:
                rates[k] = (float(np.mean(read_as_face[neg_g == k])), 0.0)
        cost = float(np.mean([wrong_cost * w + rej for w, rej in rates.values()]))
        if best is None or cost < best[0] - 1e-9:
            best = (cost, float(r), thr, rates)
    if best is None:
        raise ValueError("no answers to choose thresholds from")
    _cost, r, thr, rates = best
    # Off the answers, so another machine's arithmetic reads them the same (the rates stand).
    thr = in_gap(thr, np.concatenate([conf, neg_conf]), np.concatenate([pred, neg_pred]))
    stats = {
        "reject_rate_target": round(r, 4),
        "wrong_cost": wrong_cost,
        "val_wrong_by_group": {str(k): round(w, 4) for k, (w, _rej) in rates.items()},
        "val_rejected_by_group": {str(k): round(rej, 4) for k, (_w, rej) in rates.items()},
    }
    return thr, stats
