"""How far an eval's rates could move on other photos like these: intervals for eval's figures.

Why: the shared datasets' held-out splits are small and clumped. byler-d6's test split is 192
dice on 30 photos, matteop65-d6-wood's 253 dice in 9 runs of webcam frames, and one photo of a
hard die set can hold a tenth of a split's dice. A reader's 89 % there is one draw of 30
photos, and a candidate's "+7 dice" can be chance. An eval that prints rates without their
spread invites choosing among noise; this module puts the spread beside them.

Two estimates, and the wider of the two is reported:

- **Bootstrap over photo groups** (:func:`bootstrap_ratios`). Dice of one photo, or of one run
  of near-duplicate photos (the groups the split keeps together, ``vision.eval.splits.group_of``),
  succeed and fail together, so whole groups are resampled, not dice. It fails at the edges: a
  folder with no wrong read resamples to "0 wrong" every time.
- **Clopper-Pearson** (:func:`binomial_bounds`, :func:`binomial_upper`): the exact binomial
  interval on the dice as if each were its own throw. It is right at the edges (0 wrong of 192
  dice still allows up to 1.5 % at 95 %) but too narrow when dice clump.

numpy and the standard library only (a tower evaluates its own recordings without scipy). Every
loop is bounded: bisection runs a fixed number of steps, and resampling works in chunks whose
size is bounded by the number of groups.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

__all__ = [
    "LEVEL",
    "RESAMPLES",
    "binomial_bounds",
    "binomial_upper",
    "bootstrap_ratios",
    "bootstrap_sums",
    "rate_interval",
    "rate_upper",
    "sum_interval",
]

#: Confidence level of every interval eval prints.
LEVEL = 0.95
#: Bootstrap resamples: the 2.5 % tail then holds 50 of them.
RESAMPLES = 2000
#: Bisection steps: the bound is found to 2^-60 of [0, 1], far below the 5 decimals printed.
_STEPS = 60
#: Most group indices drawn at once (resamples x groups), so memory stays bounded on a huge folder.
_CHUNK_CELLS = 2_000_000


def _check(k: int, n: int, level: float) -> None:
    if not 0 <= k <= n:
        raise ValueError(f"need 0 <= k <= n, got k={k}, n={n}")
    if not 0.0 < level < 1.0:
        raise ValueError(f"level is a probability between 0 and 1, got {level}")


def _cdf(k: int, n: int, p: float, log_coeffs: np.ndarray, lower_tail: bool) -> float:
    """P(X <= k) for X ~ Binomial(n, p), summed over whichever tail has fewer terms."""
    if p <= 0.0:
        return 1.0
    if p >= 1.0:
        return 1.0 if k >= n else 0.0
    i = np.arange(k + 1) if lower_tail else np.arange(k + 1, n + 1)
    logs = log_coeffs + i * math.log(p) + (n - i) * math.log1p(-p)
    tail = float(np.exp(logs).sum()) if len(logs) else 0.0
    return tail if lower_tail else 1.0 - tail


def _log_coeffs(k: int, n: int, lower_tail: bool) -> np.ndarray:
    i = range(k + 1) if lower_tail else range(k + 1, n + 1)
    lg = math.lgamma
    return np.array([lg(n + 1) - lg(j + 1) - lg(n - j + 1) for j in i], np.float64)


def binomial_upper(k: int, n: int, level: float = LEVEL) -> float:
    """One-sided Clopper-Pearson upper bound on a rate seen ``k`` times in ``n``.

    The largest rate under which seeing ``k`` or fewer would still happen ``1 - level`` of the
    time: 0 wrong of 192 gives 0.0155 at 95 %, so "no wrong read" on 192 dice does not show a
    wrong rate under 0.3 % (that takes 998 dice read with none wrong). 1.0 when ``n`` is 0.
    """
    _check(k, n, level)
    if k >= n:
        return 1.0
    alpha = 1.0 - level
    lower_tail = k + 1 <= n - k
    coeffs = _log_coeffs(k, n, lower_tail)
    lo, hi = k / n, 1.0  # P(X <= k) falls from >= 1/2-ish at k/n to 0 at 1
    if _cdf(k, n, lo, coeffs, lower_tail) <= alpha:
        lo = 0.0
    for _ in range(_STEPS):
        mid = 0.5 * (lo + hi)
        if _cdf(k, n, mid, coeffs, lower_tail) > alpha:
            lo = mid
        else:
            hi = mid
    return hi


def binomial_bounds(k: int, n: int, level: float = LEVEL) -> tuple[float, float]:
    """Two-sided Clopper-Pearson interval for a rate seen ``k`` times in ``n`` ((0, 1) for n = 0)."""
    _check(k, n, level)
    if n == 0:
        return 0.0, 1.0
    one_side = 1.0 - (1.0 - level) / 2
    lo = 0.0 if k == 0 else 1.0 - binomial_upper(n - k, n, one_side)
    return lo, binomial_upper(k, n, one_side)


def _groups(hits: Sequence[int], totals: Sequence[int]) -> tuple[np.ndarray, np.ndarray]:
    h, t = np.asarray(hits, np.float64), np.asarray(totals, np.float64)
    if h.shape != t.shape or h.ndim != 1:
        raise ValueError("hits and totals need one entry per group")
    if (h < 0).any() or (h > t).any():
        raise ValueError("each group needs 0 <= hits <= totals")
    return h, t


def _resampled_sums(values: np.ndarray, resamples: int, seed: int) -> np.ndarray:
    """Each resample's sums of ``values`` (rows: groups) over groups drawn with replacement."""
    g = len(values)
    rng = np.random.default_rng(seed)
    chunk = max(1, _CHUNK_CELLS // g)
    out = []
    for start in range(0, resamples, chunk):
        idx = rng.integers(0, g, (min(chunk, resamples - start), g))
        out.append(values[idx].sum(axis=1))
    return np.concatenate(out)


def bootstrap_ratios(
    hits: Sequence[int], totals: Sequence[int], resamples: int = RESAMPLES, seed: int = 0
) -> np.ndarray:
    """``sum(hits) / sum(totals)`` over ``resamples`` draws of the groups with replacement.

    Seeded, so a report is reproducible. Empty when there are no dice.
    """
    h, t = _groups(hits, totals)
    if t.sum() == 0:
        return np.zeros(0)
    keep = t > 0
    sums = _resampled_sums(np.stack([h[keep], t[keep]], axis=1), resamples, seed)
    return sums[:, 0] / sums[:, 1]


def bootstrap_sums(values: Sequence[float], resamples: int = RESAMPLES, seed: int = 0) -> np.ndarray:
    """``sum(values)`` over ``resamples`` draws of the groups with replacement (e.g. paired differences)."""
    v = np.asarray(values, np.float64)
    if v.ndim != 1:
        raise ValueError("values need one entry per group")
    if len(v) == 0:
        return np.zeros(0)
    return _resampled_sums(v[:, None], resamples, seed)[:, 0]


def rate_interval(hits: Sequence[int], totals: Sequence[int], level: float = LEVEL) -> tuple[float, float]:
    """Interval for ``sum(hits) / sum(totals)``: the wider of the group bootstrap and Clopper-Pearson."""
    h, t = _groups(hits, totals)
    k, n = int(h.sum()), int(t.sum())
    lo, hi = binomial_bounds(k, n, level)
    ratios = bootstrap_ratios(h, t)
    if len(ratios):
        tail = 100 * (1 - level) / 2
        b_lo, b_hi = np.percentile(ratios, [tail, 100 - tail])
        lo, hi = min(lo, float(b_lo)), max(hi, float(b_hi))
    return lo, hi


def rate_upper(hits: Sequence[int], totals: Sequence[int], level: float = LEVEL) -> float:
    """One-sided upper bound for ``sum(hits) / sum(totals)``: the higher of the two estimates."""
    h, t = _groups(hits, totals)
    upper = binomial_upper(int(h.sum()), int(t.sum()), level)
    ratios = bootstrap_ratios(h, t)
    if len(ratios):
        upper = max(upper, float(np.percentile(ratios, 100 * level)))
    return upper


def sum_interval(values: Sequence[float], level: float = LEVEL) -> tuple[float, float]:
    """Group-bootstrap interval for ``sum(values)``, e.g. per-group differences between two readers.

    ``(0, 0)`` with no groups. Why no binomial partner here: a paired difference is not a count
    of successes, and where two readers agree on every group it is 0 in every resample, rightly.
    """
    sums = bootstrap_sums(values)
    if len(sums) == 0:
        return 0.0, 0.0
    tail = 100 * (1 - level) / 2
    lo, hi = np.percentile(sums, [tail, 100 - tail])
    return float(lo), float(hi)
