"""A taught die's last layer: a softmax over its faces, fitted on its own crops' features.

The head is the general network's own rows for those faces (the *prior*,
:meth:`~.features.Backbone.prior`) plus a correction the die's named crops teach. Why held near
the prior rather than fitted freely: with a dozen crops of a face, a free head follows whatever
else those crops share (the light of one evening, a scratch on the tray); held near the general
answer, it moves only as far as the crops show it must (skovy-d6-crops, a set the general
network never saw: 91 % of later crops right with the general rows alone, 94 % with the head).

The correction lives in the :data:`RANK` directions along which the die's crops vary most (the
leading principal components of their standardised features): the crops cannot teach a
direction they do not vary along, and a head of ``faces x RANK`` weights fits in seconds where
one over every feature took minutes. The fit minimises the named crops' cross-entropy plus
``strength`` times the correction's squared size: plain numpy, full batch, a fixed number of
Adam steps, so the same numbers on every machine and no torch on the tower. The correction is
folded back into one ``faces x features`` matrix, so reading is one matrix product.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["CHUNK_ROWS", "FIT_STEPS", "RANK", "Head", "Projection", "fit_head", "project", "softmax"]

#: Adam steps of one fit (full batch): enough for the loss to settle on a die's few thousand rows.
FIT_STEPS = 300
#: Adam's step size, on standardised, projected features.
STEP = 0.01
#: Directions the correction may use (fewer when the die has fewer crops).
RANK = 128
#: The principal directions are found on at most this many rows (a random subset; seeded).
SVD_ROWS = 4000


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


#: Rows standardised and projected at once (bounds the memory a fit adds to its features).
CHUNK_ROWS = 1024


@dataclass(frozen=True)
class Projection:
    """Features standardised and projected on their leading directions: what every head fitted on
    the same features shares, so a die's heads at each pull toward the prior reuse one projection."""

    mean: np.ndarray  #: ``(D,)``
    spread: np.ndarray  #: ``(D,)``, the standard deviation plus a floor
    basis: np.ndarray  #: ``(D, r)`` orthonormal
    z: np.ndarray  #: ``(N, r)`` the standardised rows on the basis


def _directions(rows: np.ndarray, rank: int) -> np.ndarray:
    """``(D, r)`` orthonormal leading principal directions of standardised ``rows``.

    A randomised SVD (a random sketch, two power steps): the leading directions of a few
    thousand rows of thousands of features in a second, where a full SVD takes a minute.
    """
    rng = np.random.default_rng(0)
    r = max(1, min(rank, len(rows) - 1, rows.shape[1]))
    k = min(r + 10, min(rows.shape))
    sketch = rows.T @ (rows @ rng.standard_normal((rows.shape[1], k)).astype(np.float32))  # (D, k)
    for _ in range(2):
        q, _ = np.linalg.qr(sketch)
        sketch = rows.T @ (rows @ q)
    q, _ = np.linalg.qr(sketch)  # (D, k): spans the leading directions
    _u, _s, vt = np.linalg.svd(rows @ q, full_matrices=False)
    return (q @ vt.T[:, :r]).astype(np.float32)


def project(features: np.ndarray, rank: int = RANK) -> Projection:
    """``features`` (``(N, D)``) standardised and projected on their ``rank`` leading directions.

    Why in chunks: a die's features are the fit's largest arrays (thousands of rows of thousands
    of features); standardising them whole would hold two more copies. The directions are found
    on at most :data:`SVD_ROWS` rows (a seeded random subset).
    """
    x = np.asarray(features)
    if x.dtype not in (np.float16, np.float32):
        x = x.astype(np.float32)
    n = len(x)
    mean = x.mean(axis=0, dtype=np.float64).astype(np.float32)
    var = np.zeros(x.shape[1], np.float64)
    for start in range(0, n, CHUNK_ROWS):
        d = x[start : start + CHUNK_ROWS].astype(np.float32) - mean
        var += (d * d).sum(axis=0, dtype=np.float64)
    spread = (np.sqrt(var / max(n, 1)) + 1e-3).astype(np.float32)
    pick = np.arange(n)
    if n > SVD_ROWS:
        pick = np.sort(np.random.default_rng(0).choice(n, SVD_ROWS, replace=False))
    rows = x[pick].astype(np.float32, copy=False)  # a copy already: standardised in place
    rows -= mean
    rows /= spread
    basis = _directions(rows, rank)  # (D, r)
    del rows
    z = np.empty((n, basis.shape[1]), np.float32)
    for start in range(0, n, CHUNK_ROWS):
        z[start : start + CHUNK_ROWS] = (
            (x[start : start + CHUNK_ROWS].astype(np.float32) - mean) / spread
        ) @ basis
    return Projection(mean, spread, basis, z)


def fit_head(
    features: np.ndarray,
    labels: np.ndarray,
    faces: tuple[int, ...],
    prior: tuple[np.ndarray, np.ndarray],
    *,
    strength: float = 1e-2,
    steps: int = FIT_STEPS,
    rank: int = RANK,
    projection: Projection | None = None,
) -> Head:
    """The head over ``faces`` that reads ``features`` (``(N, D)``) as ``labels`` (faces, ``(N,)``).

    ``prior`` is the general network's ``(weights, bias)`` for ``faces`` in raw feature units;
    ``strength`` weighs the correction's squared size against the crops' cross-entropy.
    ``projection`` is :func:`project` of these ``features`` (made here when not given). Features
    in float16 stay so: they are converted a chunk at a time.
    """
    x = np.asarray(features)  # float32, or float16 kept so (converted a chunk at a time)
    index = {f: i for i, f in enumerate(faces)}
    y = np.array([index[int(v)] for v in labels], np.int64)
    w0 = np.asarray(prior[0], np.float32)
    b0 = np.asarray(prior[1], np.float32)
    proj = projection if projection is not None else project(x, rank)
    mean, spread, basis, z = proj.mean, proj.spread, proj.basis, proj.z
    base = np.empty((len(x), len(faces)), np.float32)  # the prior's logits, fixed
    for start in range(0, len(x), CHUNK_ROWS):
        base[start : start + CHUNK_ROWS] = x[start : start + CHUNK_ROWS].astype(np.float32) @ w0.T + b0
    dw = np.zeros((len(faces), z.shape[1]), np.float32)
    db = np.zeros(len(faces), np.float32)
    onehot = np.zeros((len(y), len(faces)), np.float32)
    onehot[np.arange(len(y)), y] = 1.0
    m_w, v_w = np.zeros_like(dw), np.zeros_like(dw)
    m_b, v_b = np.zeros_like(db), np.zeros_like(db)
    beta1, beta2, eps = 0.9, 0.999, 1e-8
    n = max(len(y), 1)
    for t in range(1, steps + 1):
        p = softmax(base + z @ dw.T + db)
        d = (p - onehot) / n
        g_w = d.T @ z + 2.0 * strength * dw
        g_b = d.sum(axis=0)
        m_w = beta1 * m_w + (1 - beta1) * g_w
        v_w = beta2 * v_w + (1 - beta2) * g_w * g_w
        m_b = beta1 * m_b + (1 - beta1) * g_b
        v_b = beta2 * v_b + (1 - beta2) * g_b * g_b
        scale = STEP * np.sqrt(1 - beta2**t) / (1 - beta1**t)
        dw -= scale * m_w / (np.sqrt(v_w) + eps)
        db -= scale * m_b / (np.sqrt(v_b) + eps)
    # fold back: logits = x @ w0.T + b0 + ((x - mean) / spread) @ basis @ dw.T + db
    correction = (basis @ dw.T).T / spread  # (K, D) in raw feature units
    weights = (w0 + correction).astype(np.float32)
    bias = (b0 + db - correction @ mean).astype(np.float32)
    return Head(tuple(int(f) for f in faces), weights, bias)
