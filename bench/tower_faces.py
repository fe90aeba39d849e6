"""The faces of ``bench/tower.py``'s rolls against fair dice, and against the tilt re-throws predict.

Why its own module: the bench's question "does the way an unreadable die is handled bias the
faces?" needs more than one χ² line. Each set of faces is tested against fair dice in three ways,
and the report says how many tests it ran, so that one small p among many is read as the chance
it is:

* **pooled**: every slot's faces together (5 degrees of freedom): the bias any player sees, and
  the most powerful test of a tilt shared by all dice;
* **all slots jointly**: the sum of the five slots' χ² (25 degrees of freedom; the slots'
  faces are independent under fair dice): one test of "every slot is fair";
* **per slot**: five tests, and the smallest of their p adjusted for having looked at five
  (Šidák: ``1 − (1 − p_min)^5``). An unadjusted smallest-of-five p is under 0.016 about 8 % of
  the time for fair dice.

The sets tested are the **final faces** (what the tower reported, the table's answers included),
the **true faces** (the camera's truth of each slot's die: with a reader that never misreads
they equal the final faces, so any bias they show comes from which throws count), and every
face the simulated camera **drew** on a landing (the world itself, before any reader or retry).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any

import numpy as np
from dicetower.firmware.server.rejects import RATIO_FLOOR, accepted_shares, max_tilt
from dicetower.firmware.server.stats import (
    chi2_isf,
    chi2_sf,
    ncx2_sf,
    rolls_to_see,
    wilson_interval,
)

__all__ = ["FACES", "chi2", "fair_tests", "power_against", "seeds_table", "tilt_report", "uniformity_lines"]

FACES = range(1, 7)
#: the tests :func:`uniformity_lines` runs on each set of per-slot faces: pooled, joint, one per slot
TESTS_PER_SET = 2 + 5


def chi2(counts: Sequence[int], shares: Sequence[float] | None = None) -> float:
    """Pearson's χ² of ``counts`` against ``shares`` (fair when None)."""
    n = sum(counts)
    shares = shares or [1 / len(counts)] * len(counts)
    return sum((c - n * p) ** 2 / (n * p) for c, p in zip(counts, shares, strict=True))


def _row(counter: Counter[int]) -> list[int]:
    return [counter.get(f, 0) for f in FACES]


def fair_tests(per_slot: Sequence[Counter[int]]) -> dict[str, Any]:
    """The three tests of the module docstring on per-slot face counts: counts, χ² and p of each."""
    rows = [_row(c) for c in per_slot if sum(c.values())]
    pooled = [sum(col) for col in zip(*rows, strict=True)] if rows else [0] * 6
    slot_p = [chi2_sf(chi2(r), 5) for r in rows]
    joint = sum(chi2(r) for r in rows)
    smallest = min(slot_p, default=1.0)
    return {
        "n": sum(pooled),
        "pooled": pooled,
        "p_pooled": chi2_sf(chi2(pooled), 5) if sum(pooled) else 1.0,
        "p_joint": chi2_sf(joint, 5 * len(rows)) if rows else 1.0,
        "slots": rows,
        "p_slots": slot_p,
        "p_smallest_adjusted": 1 - (1 - smallest) ** len(slot_p) if slot_p else 1.0,
    }


def uniformity_lines(
    final: Sequence[Counter[int]], true: Sequence[Counter[int]], drawn: Counter[int] | None
) -> list[str]:
    """The report of the module docstring: final faces, true faces and the camera's draws."""
    sets = [("final faces", fair_tests(final)), ("true faces", fair_tests(true))]
    tests = TESTS_PER_SET * len(sets) + (drawn is not None)
    lines = [
        f"uniformity against fair dice (Pearson's chi-squared): {tests} tests, each p unadjusted unless said;"
        f" at 0.05 a fair process fails about {0.05 * tests:.1f} of them by chance"
    ]
    for name, t in sets:
        same = name == "true faces" and t["slots"] == sets[0][1]["slots"]
        lines.append(
            f"  {name:<12} n={t['n']:<5} faces 1-6: {' '.join(f'{c:>5}' for c in t['pooled'])}"
            f"  pooled p {t['p_pooled']:.3f} (5 d.f.); all slots jointly p {t['p_joint']:.3f}"
            f" ({5 * len(t['slots'])} d.f.)" + ("; equal to the final faces, slot by slot" if same else "")
        )
        lines.append(
            "    per slot p "
            + " ".join(f"{p:.3f}" for p in t["p_slots"])
            + f"; smallest adjusted for {len(t['p_slots'])} slots (Sidak) {t['p_smallest_adjusted']:.3f}"
        )
    if drawn is not None:
        counts = _row(drawn)
        lines.append(
            f"  drawn by the camera on every landing n={sum(counts)}: {' '.join(f'{c:>5}' for c in counts)}"
            f"  p {chi2_sf(chi2(counts), 5) if sum(counts) else 1.0:.3f} (5 d.f.)"
        )
    return lines


def seeds_table(
    runs: Sequence[tuple[str, int, dict[str, Any]]], rates: Sequence[float] | None = None
) -> list[str]:
    """Every p of every run (``(mode, seed, bench_rolls' result)``), then each mode's seeds pooled,
    against fair and, with reject ``rates``, against the tilt they predict for a re-thrown die.

    Why: one run's p is one draw; a fair process's p-values are uniform across seeds, and the
    seeds pooled are one more powerful test of the same question.
    """
    predicted = accepted_shares(rates) if rates is not None else None
    lines = [
        "## every p against fair, per run (final faces; true faces where they differ)",
        "  mode     seed  rolls  wall s  pooled  jointly  per slot 0-4" + " " * 23 + "smallest adj.  drawn",
    ]
    by_mode: dict[str, list[dict[str, Any]]] = {}
    for mode, seed, r in runs:
        by_mode.setdefault(mode, []).append(r)
        t, true = fair_tests(r["per_slot"]), fair_tests(r["true_per_slot"])
        drawn = _row(r["drawn"])
        lines.append(
            f"  {mode:<8} {seed:<5} {t['n'] // 5:<6} {r.get('wall_s', 0):<7.0f} {t['p_pooled']:<7.3f}"
            f" {t['p_joint']:<8.3f} {' '.join(f'{p:.3f}' for p in t['p_slots']):<34}"
            f" {t['p_smallest_adjusted']:<14.3f} {chi2_sf(chi2(drawn), 5) if sum(drawn) else 1.0:.3f}"
            + ("" if true["slots"] == t["slots"] else f"  true: pooled {true['p_pooled']:.3f}")
        )
    for mode, results in by_mode.items():
        per_slot = [sum((r["per_slot"][k] for r in results), Counter()) for k in range(5)]
        t = fair_tests(per_slot)
        lines.append(
            f"  {mode:<8} all {len(results)} seeds pooled: n={t['n']} faces 1-6 "
            + " ".join(str(c) for c in t["pooled"])
            + f"; pooled p {t['p_pooled']:.3f}, jointly p {t['p_joint']:.3f}, per slot "
            + " ".join(f"{p:.3f}" for p in t["p_slots"])
            + f" (smallest adjusted {t['p_smallest_adjusted']:.3f})"
        )
        if predicted is not None:
            p_tilt = chi2_sf(chi2(t["pooled"], predicted), 5)
            lines.append(
                f"    against the predicted tilt p {p_tilt:.2g}; a test against fair at this n sees"
                f" that tilt with power {power_against(predicted, t['n']):.2f}"
            )
    return lines


def power_against(shares: Sequence[float], n: int, alpha: float = 0.05) -> float:
    """The chance a χ² test against fair (at ``alpha``) on ``n`` faces notices faces landing as ``shares``."""
    w2 = sum((p - 1 / 6) ** 2 for p in shares) * 6
    return ncx2_sf(chi2_isf(alpha, 5), 5, n * w2)


def _gap_interval(counts: list[int], seed: int, draws: int = 4000) -> tuple[float, float, float]:
    """Largest |share - 1/6|: a 95 % bootstrap interval, and what a fair die shows at this n (95th pct)."""
    n = sum(counts)
    rng = np.random.default_rng(seed)
    boot = np.abs(rng.multinomial(n, np.array(counts) / n, size=draws) / n - 1 / 6).max(axis=1)
    fair = np.abs(rng.multinomial(n, [1 / 6] * 6, size=draws) / n - 1 / 6).max(axis=1)
    lo, hi = np.percentile(boot, [2.5, 97.5])
    return float(lo), float(hi), float(np.percentile(fair, 95))


def tilt_report(per_slot: Sequence[Counter[int]], rates: list[float], reader: Any, seed: int) -> list[str]:
    """The faces of the completed rolls against the tilt ``rates`` predict for a die re-thrown until read."""
    predicted = accepted_shares(rates)
    pct = " ".join(f"{100 * p:5.2f}" for p in predicted)
    floored = [max(r, RATIO_FLOOR) for r in rates]
    see = rolls_to_see(predicted)
    lines = [
        "reject rates per face 1-6: "
        + " ".join(f"{100 * r:.1f}" for r in rates)
        + f" %; ratio {max(floored) / min(floored):.1f} (rates floored at {100 * RATIO_FLOOR:g} %)",
    ]
    looks, rej = getattr(reader, "looks", None), getattr(reader, "rejected", None)
    if looks is not None and rej is not None:
        lines.append(
            f"landings read by the reader {sum(looks.values())}, "
            f"rejected for their face {sum(rej.values())}: "
            + " ".join(f"{f}: {rej[f]}/{looks[f]}" for f in FACES)
        )
    rows = [(f"slot {k}", _row(c)) for k, c in enumerate(per_slot)]
    rows.append(("pooled", [sum(c.get(f, 0) for c in per_slot) for f in FACES]))
    pooled = rows[-1][1]
    n = sum(pooled)
    lines.append(
        f"predicted shares of a fair die re-thrown until read (1 - r_f, normalised): {pct} %; "
        f"largest |share - 1/6| {100 * max_tilt(predicted):.2f} points"
        + (
            f"; a chi-squared test sees it (power 0.8 at 0.05) after about {see} faces: {-(-see // 5)} rolls "
            f"of 5 dice pooled; at this run's {n} faces its power is {power_against(predicted, n):.2f}"
            if see
            else ""
        )
    )
    for name, counts in rows:
        if not sum(counts):
            continue
        shares = [c / sum(counts) for c in counts]
        lo, hi, fair = _gap_interval(counts, seed)
        p_fair = chi2_sf(chi2(counts), 5)
        p_predicted = chi2_sf(chi2(counts, predicted), 5)
        lines.append(
            f"  {name:<7} n={sum(counts):<5} shares {' '.join(f'{100 * x:5.2f}' for x in shares)} %"
            f"  p fair {p_fair:.3f}, p predicted {p_predicted:.3f};"
            f" largest |share - 1/6| {100 * max_tilt(shares):.2f} points (95 % {100 * lo:.2f}-{100 * hi:.2f};"
            f" a fair die shows up to {100 * fair:.2f})"
        )
    if n:
        for f, (c, p) in enumerate(zip(pooled, predicted, strict=True), 1):
            lo, hi = wilson_interval(c, n)
            lines.append(
                f"  pooled face {f}: observed {100 * c / n:5.2f} % (95 % {100 * lo:5.2f}-{100 * hi:5.2f}),"
                f" predicted {100 * p:5.2f} %, fair {100 / 6:5.2f} %"
            )
    return lines
