"""A taught die's last layer: a softmax over its faces, fitted on its own crops' features.

The fit minimises the cross-entropy of the named crops plus ``strength`` times the squared
distance of the weights from the general network's own rows for those faces (the *prior*,
:meth:`~.features.Backbone.prior`). Why held near the prior rather than near zero: with a dozen
crops of a face, a free head follows whatever else those crops share (the light of one
evening, a scratch on the tray); held near the general answer, it moves only as far as the
crops show it must (skovy-d6-crops, a set the general network never saw: 91 % of later crops
right with the general rows alone, 94 % with the taught head).

Plain numpy, full batch, Adam steps with a fixed count: no torch on the tower, the same numbers
on every machine. Features are standardised first (their mean and spread over the die's crops),
and the standardisation is folded back into the weights, so reading is one matrix product.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["FIT_STEPS", "Head", "fit_head", "softmax"]

#: Adam steps of one fit (full batch): enough for the loss to settle on a die's few thousand rows.
FIT_STEPS = 300
#: Adam's step size, on standardised features.
STEP = 0.01


def softmax(z: np.ndarray) -> np.ndarray:
    """Row-wise softmax of logits ``(N, K)``."""
    z = z - z.max(axis=1, keepdims=True)
    e = np.exp(z)
    return e / e.sum(axis=1, keepdims=True)


@dataclass(frozen=True)
class Head:
    """``logits = features @ weights.T + bias`` for the die's ``faces`` (in that order)."""

    faces: tuple[int, ...]
    weights: np.ndarray  #: ``(len(faces), D)`` float32
    bias: np.ndarray  #: ``(len(faces),)`` float32

    def probabilities(self, features: np.ndarray) -> np.ndarray:
        """``(N, len(faces))`` probabilities of ``(N, D)`` features."""
        return softmax(features.astype(np.float32) @ self.weights.T + self.bias)


def fit_head(
    features: np.ndarray,
    labels: np.ndarray,
    faces: tuple[int, ...],
    prior: tuple[np.ndarray, np.ndarray],
    *,
    strength: float = 1e-3,
    steps: int = FIT_STEPS,
) -> Head:
    """The head over ``faces`` that reads ``features`` (``(N, D)``) as ``labels`` (faces, ``(N,)``).

    ``prior`` is the general network's ``(weights, bias)`` for ``faces`` in raw feature units;
    ``strength`` weighs the pull toward it (per weight, on standardised features).
    """
    x = np.asarray(features, np.float32)
    index = {f: i for i, f in enumerate(faces)}
    y = np.array([index[int(v)] for v in labels], np.int64)
    mean = x.mean(axis=0)
    spread = x.std(axis=0) + 1e-3
    xs = (x - mean) / spread
    # the prior in standardised units: w_s = w * spread, b_s = b + w . mean
    w0 = prior[0].astype(np.float32) * spread
    b0 = prior[1].astype(np.float32) + prior[0].astype(np.float32) @ mean
    w, b = w0.copy(), b0.copy()
    onehot = np.zeros((len(y), len(faces)), np.float32)
    onehot[np.arange(len(y)), y] = 1.0
    m_w, v_w = np.zeros_like(w), np.zeros_like(w)
    m_b, v_b = np.zeros_like(b), np.zeros_like(b)
    beta1, beta2, eps = 0.9, 0.999, 1e-8
    n = max(len(y), 1)
    for t in range(1, steps + 1):
        p = softmax(xs @ w.T + b)
        d = (p - onehot) / n
        g_w = d.T @ xs + 2.0 * strength * (w - w0)
        g_b = d.sum(axis=0)
        m_w = beta1 * m_w + (1 - beta1) * g_w
        v_w = beta2 * v_w + (1 - beta2) * g_w * g_w
        m_b = beta1 * m_b + (1 - beta1) * g_b
        v_b = beta2 * v_b + (1 - beta2) * g_b * g_b
        scale = STEP * np.sqrt(1 - beta2**t) / (1 - beta1**t)
        w -= scale * m_w / (np.sqrt(v_w) + eps)
        b -= scale * m_b / (np.sqrt(v_b) + eps)
    # fold the standardisation back: logits = ((x - mean) / spread) @ w.T + b
    weights = (w / spread).astype(np.float32)
    bias = (b - weights @ mean).astype(np.float32)
    return Head(tuple(int(f) for f in faces), weights, bias)
