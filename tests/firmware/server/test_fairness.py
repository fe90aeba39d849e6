"""Fairness statistics: the χ² survival function against tables, intervals, power, per-die stats."""

from __future__ import annotations

import random

import pytest
from dicetower.firmware.server.fairness import (
    chi2_isf,
    chi2_sf,
    fairness_from_rows,
    format_fairness,
    histogram_svg,
    rolls_to_detect,
    serial_correlation,
    wilson_interval,
)


@pytest.mark.parametrize(
    ("x", "df", "p"),
    [  # critical values from the standard χ² table
        (3.841458820694124, 1, 0.05),
        (6.634896601021214, 1, 0.01),
        (11.070497693516351, 5, 0.05),
        (15.08627246938899, 5, 0.01),
        (30.14352720564616, 19, 0.05),
        (1.1454762260617697, 5, 0.95),
        (135.8069981571, 100, 0.01),
    ],
)
def test_chi2_sf_matches_tables(x: float, df: int, p: float) -> None:
    assert chi2_sf(x, df) == pytest.approx(p, rel=2e-3)


def test_chi2_isf_inverts_sf() -> None:
    for df in (1, 5, 9, 19):
        for p in (0.5, 0.05, 1e-6):
            assert chi2_sf(chi2_isf(p, df), df) == pytest.approx(p, rel=1e-6)


def test_wilson_interval_known_values() -> None:
    lo, hi = wilson_interval(10, 60)
    assert (lo, hi) == pytest.approx((0.0931, 0.2803), abs=1e-4)
    assert wilson_interval(0, 10)[0] == 0.0 and wilson_interval(0, 0) == (0.0, 1.0)


def test_rolls_to_detect_matches_the_power_table() -> None:
    # Cohen's table: df 5, alpha 0.05, power 0.8 -> lambda 12.83; a +10 % face on a d6 has w^2 = 0.002
    assert 6400 <= rolls_to_detect(6, 0.1) <= 6425
    assert rolls_to_detect(6, 0.5) < rolls_to_detect(6, 0.1) / 20


def test_serial_correlation_sees_alternation() -> None:
    r, p = serial_correlation([1, 6] * 50)
    assert r is not None and r < -0.9 and p is not None and p < 1e-10
    rng = random.Random(1)
    r, p = serial_correlation([rng.randint(1, 6) for _ in range(2000)])
    assert r is not None and abs(r) < 0.1 and p is not None and p > 0.001
    assert serial_correlation([3, 3, 3]) == (None, None)


def _rows(faces_by_die: dict[str, list[int]], retries: dict[str, int] | None = None) -> list[dict]:
    rows = []
    n = max(len(v) for v in faces_by_die.values())
    for i in range(n):
        dice = [
            {"slot": j, "kind": "d6", "face": f[i], "die": d} for j, (d, f) in enumerate(faces_by_die.items())
        ]
        caused = [
            {"die": d, "face": f[i]} for d, k in (retries or {}).items() if i < k for f in [faces_by_die[d]]
        ]
        throws = [{"retries": [{"action": "tap", "reason": "1 unreadable (cocked)", "dice": caused}]}]
        rows.append({"status": "done", "dice": dice, "throws": throws})
    rows.append({"status": "failed", "dice": [{"kind": "d6", "face": 6, "die": "red d6"}], "throws": []})
    return rows


def test_fairness_per_die_finds_the_loaded_one() -> None:
    rng = random.Random(7)
    fair = [rng.randint(1, 6) for _ in range(1200)]
    loaded = [6 if rng.random() < 0.3 else rng.randint(1, 5) for _ in range(1200)]
    stats = {s.die: s for s in fairness_from_rows(_rows({"white d6": fair, "red d6": loaded}, {"red d6": 4}))}
    assert stats["white d6"].n == 1200 and stats["red d6"].n == 1200  # the failed row is left out
    assert stats["white d6"].p_value > 0.01  # type: ignore[operator]
    assert stats["red d6"].p_value < 1e-10  # type: ignore[operator]
    assert sum(stats["red d6"].rethrows.values()) == 4 and stats["white d6"].rethrows == {}
    j = stats["red d6"].to_json()
    six = j["faces"][5]
    assert six["ci95"][0] > 1 / 6 and six["count"] == loaded.count(6)
    text = format_fairness(list(stats.values()))
    assert "red d6 (d6): 1200 rolls" in text and "re-throws 4" in text
    svg = histogram_svg(stats["red d6"])
    assert svg.startswith("<svg") and svg.count('class="bar"') == 6


def test_fairness_with_no_rolls() -> None:
    assert fairness_from_rows([]) == []
    assert format_fairness([]) == "no finished rolls in the log yet"
