"""Exact-odds speed: dicetower's closed forms against icepool on the same questions.

Cases: Wizard Quest pools of 10/20/40/100 d6 (P of success, failure, botch) and a Runic
Flux skill roll with 4 skill dice + the exploding/botching Wild Die. icepool answers the
pools with a multiset evaluator over (Aces, 4-5s, ones) and the Runic Flux roll as
``4 @ d6 + wild``; each icepool case runs in a subprocess capped at ``cap_s`` (a capped case
reports ``None``, printed ">60 s"). Both sides must agree exactly (Runic Flux: within the
truncation error), or the bench raises.

Run alone: ``.venv/bin/python bench/rules_odds.py``.
"""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from fractions import Fraction

__all__ = ["POOL_LEVELS", "rows"]

POOL_LEVELS = (10, 20, 40, 100)
RUNIC_LEVEL, RUNIC_DIFFICULTY = 4, 15

_ICEPOOL_POOL = """
import sys, time, icepool
class WQ(icepool.MultisetEvaluator):
    def next_state(self, state, order, outcome, count):
        a, h, o = state or (0, 0, 0)
        if outcome == 6: a += count
        elif outcome in (4, 5): h += count
        elif outcome == 1: o += count
        return (a, h, o)
    def final_outcome(self, state, order, outcomes, *sizes):
        a, h, o = state or (0, 0, 0)
        if o > a + h: return "botch"  # the default botch rule: ones exceed 4-5 dice + Aces
        return "success" if a + h else "failure"
n = int(sys.argv[1])
t = time.perf_counter()
die = WQ().evaluate(icepool.d6.pool(n))
elapsed = time.perf_counter() - t
print(elapsed)
for k in ("success", "failure", "botch"):
    print(k, die.probability(k))
"""

_ICEPOOL_RUNIC = """
import sys, time, icepool
level, difficulty = int(sys.argv[1]), int(sys.argv[2])
t = time.perf_counter()
d6 = icepool.d6
# Wild Die: 2-5 as shown; 1 scores 0 and subtracts a reroll; 6 explodes (chain cut at 100 throws)
wild = icepool.Die([2, 3, 4, 5, -d6, 6 + d6.explode(depth=99)])
total = level @ d6 + wild
p = total.probability(">=", difficulty)
elapsed = time.perf_counter() - t
print(elapsed)
print("success", p)
"""


def _icepool(script: str, args: Sequence[object], cap_s: float) -> tuple[float | None, dict[str, Fraction]]:
    """Run an icepool script in a subprocess; ``(None, {})`` if it needs more than ``cap_s``."""
    try:
        out = subprocess.run(
            [sys.executable, "-c", script, *map(str, args)],
            capture_output=True,
            text=True,
            timeout=cap_s,
            check=True,
        ).stdout.split("\n")
    except subprocess.TimeoutExpired:
        return None, {}
    probs = {k: Fraction(v) for k, v in (line.split() for line in out[1:] if line.strip())}
    return float(out[0]), probs


def _best_of(fn: Callable[[], object], clear: Callable[[], None], repeat: int = 3) -> tuple[float, object]:
    """Fastest of ``repeat`` cold runs (caches cleared before each)."""
    best, value = float("inf"), None
    for _ in range(repeat):
        clear()
        t = time.perf_counter()
        value = fn()
        best = min(best, time.perf_counter() - t)
    return best, value


def _pool_case(level: int, cap_s: float) -> tuple[str, float, float | None]:
    from dicetower.rules.systems import get_system
    from dicetower.rules.systems.wizard_quest import pools

    check = get_system("wizard-quest").check("pool")

    def clear() -> None:
        pools.pool_weights.cache_clear()
        pools._ones_cdf.cache_clear()

    ours_s, odds = _best_of(lambda: check.odds(level=level, botch_rule="dice", focus=0, focus_used=0), clear)
    theirs_s, theirs = _icepool(_ICEPOOL_POOL, [level], cap_s)
    if theirs and theirs != odds.probabilities:
        raise AssertionError(f"{level}d6: dicetower and icepool disagree")
    return f"wizard-quest pool {level}d6", ours_s, theirs_s


def _runic_case(cap_s: float) -> tuple[str, float | None, float | None]:
    case = f"runic-flux skill {RUNIC_LEVEL}d6+wild vs {RUNIC_DIFFICULTY}"
    try:
        from dicetower.rules.systems import get_system, runic_flux

        check = get_system("runic-flux").check("skill")
    except (ImportError, KeyError):  # the module is written by another engineer
        return case, None, None

    def clear() -> None:
        for name in ("skill_dist", "wild_dist"):
            getattr(getattr(runic_flux, name, None), "cache_clear", lambda: None)()

    ours_s, odds = _best_of(lambda: check.odds(level=RUNIC_LEVEL, stat=0, difficulty=RUNIC_DIFFICULTY), clear)
    theirs_s, theirs = _icepool(_ICEPOOL_RUNIC, [RUNIC_LEVEL, RUNIC_DIFFICULTY], cap_s)
    if theirs and abs(theirs["success"] - odds.probabilities["success"]) > 1e-12:
        raise AssertionError("runic flux: dicetower and icepool disagree")
    return case, ours_s, theirs_s


def rows(
    cap_s: float = 60.0, levels: Sequence[int] = POOL_LEVELS
) -> list[tuple[str, float | None, float | None]]:
    """``[(case, dicetower_s, icepool_s)]``; ``None`` = not available or over ``cap_s``."""
    out = [_pool_case(n, cap_s) for n in levels]
    out.append(_runic_case(cap_s))
    return out


def _fmt(s: float | None, cap_s: float) -> str:
    if s is None:
        return f">{cap_s:g} s"
    return f"{s * 1000:.2f} ms" if s < 1 else f"{s:.2f} s"


if __name__ == "__main__":
    cap = 60.0
    print(f"{'case':<36} {'dicetower':>12} {'icepool':>12}")
    for case, ours, theirs in rows(cap):
        print(f"{case:<36} {_fmt(ours, cap):>12} {_fmt(theirs, cap):>12}", flush=True)
