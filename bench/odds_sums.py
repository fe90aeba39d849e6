"""Exact sums of many dice: ``Dist.repeat`` on integer counts against Fraction sums and icepool.

The question is WCRPG's ``xd10`` table (``dicetower odds wcrpg xd10 --x N``): the exact
distribution of the sum of N ten-sided dice, 0 counting as zero. Three ways side by side:

* ``dicetower``: :meth:`dicetower.rules.odds.Dist.repeat` (integer counts, one big-integer
  product per doubling);
* ``fractions``: the same binary powering with a double loop over :class:`fractions.Fraction`
  pairs, the way ``Dist`` summed before (kept here as the named baseline);
* ``icepool``: ``N @ d10`` (faces 0-9), when installed.

All three must give the same distribution, or the bench raises. Best of ``--repeat`` runs.
Run: ``.venv/bin/python bench/odds_sums.py``.
"""

from __future__ import annotations

import argparse
import time
from collections import defaultdict
from collections.abc import Callable
from fractions import Fraction

from dicetower.rules.odds import Dist

__all__ = ["fraction_repeat", "main"]


def fraction_repeat(p: dict[int, Fraction], n: int) -> dict[int, Fraction]:
    """Sum of ``n`` copies by binary powering over Fraction pairs (the baseline)."""

    def add(a: dict[int, Fraction], b: dict[int, Fraction]) -> dict[int, Fraction]:
        out: dict[int, Fraction] = defaultdict(Fraction)
        for x, px in a.items():
            for y, py in b.items():
                out[x + y] += px * py
        return dict(out)

    result, base = {0: Fraction(1)}, p
    while n:
        if n & 1:
            result = add(result, base)
        n >>= 1
        if n:
            base = add(base, base)
    return result


def _best(fn: Callable[[], object], repeat: int) -> tuple[float, object]:
    best, value = float("inf"), None
    for _ in range(repeat):
        t = time.perf_counter()
        value = fn()
        best = min(best, time.perf_counter() - t)
    return best, value


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dice", type=int, nargs="+", default=[10, 30, 100])
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    try:
        import icepool
    except ImportError:
        icepool = None
    d10 = Dist.die("d10").p
    head = f"{'dice':>5}  {'dicetower':>10}  {'fractions':>10}  {'icepool':>10}"
    print(f"{head}   (seconds, best of {args.repeat})")
    for n in args.dice:
        ours_s, ours = _best(lambda n=n: Dist.die("d10").repeat(n).p, args.repeat)
        frac_s, frac = _best(lambda n=n: fraction_repeat(d10, n), args.repeat)
        if ours != frac:
            raise SystemExit(f"{n} d10: dicetower and the Fraction sums disagree")
        ice = "-"
        if icepool is not None:
            ice_s, die = _best(lambda n=n: n @ icepool.Die(range(10)), args.repeat)
            got = {int(k): Fraction(int(c), int(die.denominator())) for k, c in die.items()}
            if got != ours:
                raise SystemExit(f"{n} d10: dicetower and icepool disagree")
            ice = f"{ice_s:.4f}"
        print(f"{n:>5}  {ours_s:>10.4f}  {frac_s:>10.4f}  {ice:>10}")


if __name__ == "__main__":
    main()
