"""Benchmark: dicetower's notation roller against the ``d20`` package, in one run.

Usage::

    .venv/bin/python bench/rules.py [--seconds 0.2]

For each expression it times parse + evaluate (no formatting: both libraries format lazily)
and, in a third table, parse + evaluate + the one-line chat text (which reads every die),
with plain ``time.perf_counter`` loops, twice: with both parse caches OFF (every call parses:
d20's cache is replaced by a mapping that never stores, dicetower's ``Roller(cache_size=0)``)
and with both caches ON (the libraries' defaults). Both draw from a seeded Mersenne Twister:
d20 from ``random``, dicetower from one ``RandomSource(seed)`` reused across rolls. A third
table times the parsers alone. Every dicetower die goes through ``RollBudget`` (slot, request,
face check), the price of letting a physical tower answer follow-up throws; d20 calls
``random`` directly.

If ``bench/rules_odds.py`` exists, its ``rows()`` (case, dicetower seconds, icepool seconds)
are printed as a second table.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from collections.abc import Callable
from importlib.metadata import version
from pathlib import Path

import d20
from dicetower.rules import RandomSource, Roller, parse
from dicetower.rules.notation.formatters import to_text

__all__ = ["EXPRESSIONS", "main", "measure", "parse_rows", "roll_rows"]

#: the common subset, as (dicetower spelling, d20 spelling) with the same meaning
EXPRESSIONS = (
    ("1d20+5", "1d20+5"),
    ("4d6kh3", "4d6kh3"),
    ("10d10", "10d10"),
    ("3d6!", "3d6e6"),
    ("8d6kh3+2", "8d6kh3+2"),
    ("2d20kl1", "2d20kl1"),
    ("(1d8+3)*2", "(1d8+3)*2"),
    ("1d20+1d4+3", "1d20+1d4+3"),
    ("4d6ro1", "4d6ro1"),
    ("6d6mi2", "6d6mi2"),
)


class _NeverStores(dict):
    """A parse cache that forgets everything, so d20 parses on every call."""

    def __setitem__(self, key: object, value: object) -> None:
        return None


def _batch_size(fn: Callable[[], object]) -> int:
    batch = 1
    while True:
        t0 = time.perf_counter()
        for _ in range(batch):
            fn()
        if time.perf_counter() - t0 > 0.002:
            return batch
        batch *= 2


def measure(fns: list[Callable[[], object]], seconds: float) -> list[float]:
    """Best seconds per call of each of ``fns``, timed in interleaved batches.

    Interleaving (a batch of one, then a batch of the other, round after round) and taking
    the best batch keeps the ratio honest on a machine that other work is loading.
    """
    batches = [_batch_size(fn) for fn in fns]
    best = [float("inf")] * len(fns)
    deadline = time.perf_counter() + seconds * len(fns)
    while True:
        for i, (fn, batch) in enumerate(zip(fns, batches, strict=True)):
            t0 = time.perf_counter()
            for _ in range(batch):
                fn()
            best[i] = min(best[i], (time.perf_counter() - t0) / batch)
        if time.perf_counter() >= deadline:
            return best


def _table(title: str, rows: list[tuple[str, float, float]], names: tuple[str, str]) -> None:
    print(title)
    a, b = names
    print(f"  {'expression':<14} {a + ' µs':>14} {b + ' µs':>12} {'ratio':>8}")
    ratios = []
    for expr, ta, tb in rows:
        ratios.append(tb / ta)
        print(f"  {expr:<14} {ta * 1e6:>14.2f} {tb * 1e6:>12.2f} {tb / ta:>7.1f}x")
    geo = 1.0
    for r in ratios:
        geo *= r
    geo **= 1 / len(ratios)
    print(f"  {'geometric mean':<14} {'':>14} {'':>12} {geo:>7.1f}x")
    print()


def roll_rows(seconds: float, cached: bool, text: bool = False) -> list[tuple[str, float, float]]:
    """(expression, dicetower s/roll, d20 s/roll) for :data:`EXPRESSIONS`.

    ``text`` also renders each result as its one-line chat text on both sides (d20's
    ``RollResult.result``, dicetower's ``to_text``): that reads every die, so work either library
    defers until the dice are looked at is counted too.
    """
    ours = Roller(cache_size=1024 if cached else 0)
    source = RandomSource(seed=1)
    theirs = d20.Roller()
    if not cached:
        theirs._parse_cache = _NeverStores()
    random.seed(1)
    rows = []
    for expr, their_expr in EXPRESSIONS:
        ours.roll(expr, source)  # warm both (imports, lazy grammar)
        theirs.roll(their_expr)
        if text:
            fns = [
                lambda e=expr: to_text(ours.roll(e, source)),
                lambda e=their_expr: theirs.roll(e).result,
            ]
        else:
            fns = [lambda e=expr: ours.roll(e, source), lambda e=their_expr: theirs.roll(e)]
        t_ours, t_d20 = measure(fns, seconds)
        rows.append((expr, t_ours, t_d20))
    return rows


def parse_rows(seconds: float) -> list[tuple[str, float, float]]:
    """(expression, dicetower s/parse, d20 s/parse), both uncached: the parsers alone."""
    theirs = d20.Roller()
    theirs._parse_cache = _NeverStores()
    rows = []
    for expr, their_expr in EXPRESSIONS:
        t_ours, t_d20 = measure([lambda e=expr: parse(e), lambda e=their_expr: theirs.parse(e)], seconds)
        rows.append((expr, t_ours, t_d20))
    return rows


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seconds", type=float, default=0.2, help="timing per expression and library")
    args = ap.parse_args(argv)
    print(
        f"python {sys.version.split()[0]}, d20 {version('d20')}; best time per call over interleaved batches"
    )
    print("ratio = d20 time / dicetower time (higher is better for dicetower)\n")
    names = ("dicetower", "d20")
    _table("caches OFF for both (every call parses)", roll_rows(args.seconds, cached=False), names)
    _table("caches ON for both (library defaults)", roll_rows(args.seconds, cached=True), names)
    _table(
        "caches OFF, and each result rendered as chat text (every die object built)",
        roll_rows(args.seconds, cached=False, text=True),
        names,
    )
    _table("parse only, no caches (where the hand-written parser shows)", parse_rows(args.seconds), names)

    sys.path.insert(0, str(Path(__file__).resolve().parent))
    try:
        import rules_odds  # written alongside: exact odds vs icepool
    except ImportError:
        print("(bench/rules_odds.py not present: no odds table)")
        return 0
    rows = rules_odds.rows()
    print("odds: dicetower vs icepool")
    print(f"  {'case':<34} {'dicetower ms':>13} {'icepool ms':>11} {'ratio':>8}")
    for case, t_ours, t_ice in rows:
        ratio = t_ice / t_ours if t_ours else float("inf")
        print(f"  {case:<34} {t_ours * 1e3:>13.3f} {t_ice * 1e3:>11.3f} {ratio:>7.1f}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
