"""The statistics behind fairness: χ² tails, power, proportion intervals, serial correlation.

The χ² survival function is the regularized upper incomplete gamma function, computed
here with :mod:`math` (series below ``a + 1``, Lentz's continued fraction above), so the
server needs no scipy. ``tests/firmware/server/test_fairness.py`` checks it against
tabulated values. :func:`rolls_to_see` sizes a χ² test for any tilt of the faces, the one
:mod:`.rejects` predicts from per-face reject rates included.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

__all__ = [
    "chi2_isf",
    "chi2_sf",
    "gammaincc",
    "ncx2_sf",
    "noncentrality",
    "rolls_to_detect",
    "rolls_to_see",
    "serial_correlation",
    "wilson_interval",
]

_EPS = 1e-15
_MAX_ITER = 10_000


def gammaincc(a: float, x: float) -> float:
    """Regularized upper incomplete gamma ``Q(a, x) = Γ(a, x) / Γ(a)``."""
    if a <= 0:
        raise ValueError("a must be positive")
    if x <= 0:
        return 1.0
    log_front = -x + a * math.log(x) - math.lgamma(a)
    if x < a + 1:  # the series for P converges fast here
        term = total = 1.0 / a
        n = a
        for _ in range(_MAX_ITER):
            n += 1
            term *= x / n
            total += term
            if abs(term) < abs(total) * _EPS:
                break
        return max(0.0, 1.0 - total * math.exp(log_front))
    # continued fraction for Q (modified Lentz)
    tiny = 1e-300
    b = x + 1 - a
    c = 1 / tiny
    d = 1 / b
    h = d
    for i in range(1, _MAX_ITER):
        an = -i * (i - a)
        b += 2
        d = an * d + b
        d = tiny if abs(d) < tiny else d
        c = b + an / c
        c = tiny if abs(c) < tiny else c
        d = 1 / d
        delta = d * c
        h *= delta
        if abs(delta - 1) < _EPS:
            break
    return min(1.0, math.exp(log_front) * h)


def chi2_sf(x: float, df: int) -> float:
    """P(X ≥ x) for X ~ χ²(df)."""
    return gammaincc(df / 2, x / 2)


def chi2_isf(p: float, df: int) -> float:
    """The x with ``chi2_sf(x, df) == p`` (bisection; the sf is monotone)."""
    lo, hi = 0.0, max(10.0, 10.0 * df)
    while chi2_sf(hi, df) > p:
        hi *= 2
    for _ in range(200):
        mid = (lo + hi) / 2
        if chi2_sf(mid, df) > p:
            lo = mid
        else:
            hi = mid
        if hi - lo < 1e-10 * hi:
            break
    return (lo + hi) / 2


def ncx2_sf(x: float, df: int, nc: float) -> float:
    """P(X ≥ x) for a noncentral χ²: a Poisson(nc/2) mixture of central χ²(df + 2j)."""
    if nc <= 0:
        return chi2_sf(x, df)
    half = nc / 2
    total = 0.0
    j_mid = int(half)
    # sum outward from the Poisson mode until the weights are negligible (bounded)
    log_w_mid = -half + j_mid * math.log(half) - math.lgamma(j_mid + 1) if half > 0 else 0.0
    for direction in (1, -1):
        j = j_mid if direction == 1 else j_mid - 1
        for _ in range(_MAX_ITER):
            if j < 0:
                break
            log_w = -half + j * math.log(half) - math.lgamma(j + 1)
            w = math.exp(log_w)
            total += w * chi2_sf(x, df + 2 * j)
            if log_w < log_w_mid - 40:
                break
            j += direction
    return min(1.0, total)


def noncentrality(df: int, *, alpha: float = 0.05, power: float = 0.8) -> float:
    """The noncentrality ``λ`` at which a χ²(df) test at level ``alpha`` reaches ``power``."""
    crit = chi2_isf(alpha, df)
    lo, hi = 0.0, 1.0
    while ncx2_sf(crit, df, hi) < power:
        hi *= 2
    for _ in range(100):
        mid = (lo + hi) / 2
        if ncx2_sf(crit, df, mid) < power:
            lo = mid
        else:
            hi = mid
        if hi - lo < 1e-6:
            break
    return hi


def rolls_to_see(shares: Sequence[float], *, alpha: float = 0.05, power: float = 0.8) -> int | None:
    """Rolls a χ² test against a fair die needs to notice, with ``power``, faces that come up as ``shares``.

    Cohen's effect size ``w² = Σ (pᵢ − p₀)² / p₀`` and :func:`noncentrality` give ``n = λ / w²``;
    None for a fair die (no number of rolls tells it from itself).
    """
    k = len(shares)
    if k < 2:
        raise ValueError("need at least 2 faces")
    p0 = 1 / k
    w2 = sum((p - p0) ** 2 for p in shares) / p0
    if w2 < 1e-15:
        return None
    return math.ceil(noncentrality(k - 1, alpha=alpha, power=power) / w2)


def rolls_to_detect(faces: int, bias: float = 0.1, *, alpha: float = 0.05, power: float = 0.8) -> int:
    """Rolls a χ² test needs to notice, with ``power``, one face that comes up ``(1 + bias)`` times as often.

    The other faces share the rest evenly (:func:`rolls_to_see` of those shares).
    """
    if faces < 2 or not 0 < bias < faces - 1:
        raise ValueError("need at least 2 faces and 0 < bias < faces - 1")
    hot = (1 + bias) / faces
    cold = (1 - hot) / (faces - 1)
    n = rolls_to_see([hot, *([cold] * (faces - 1))], alpha=alpha, power=power)
    assert n is not None
    return n


def wilson_interval(k: int, n: int, z: float = 1.959963984540054) -> tuple[float, float]:
    """Wilson score interval for a proportion ``k / n`` (95 % by default)."""
    if n <= 0:
        return (0.0, 1.0)
    p = k / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    return (max(0.0, centre - half), min(1.0, centre + half))


def serial_correlation(seq: Sequence[float]) -> tuple[float | None, float | None]:
    """Lag-1 autocorrelation of successive faces and its two-sided p-value (``r·√n`` ≈ N(0, 1))."""
    n = len(seq)
    if n < 3:
        return None, None
    mean = sum(seq) / n
    var = sum((v - mean) ** 2 for v in seq)
    if var == 0:
        return None, None
    r = sum((seq[i] - mean) * (seq[i + 1] - mean) for i in range(n - 1)) / var
    z = abs(r) * math.sqrt(n)
    return r, math.erfc(z / math.sqrt(2))
