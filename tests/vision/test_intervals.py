"""Intervals for eval's rates: exact binomial bounds, and the bootstrap over photo groups."""

from __future__ import annotations

import numpy as np
import pytest
from dicetower.vision.eval import intervals
from dicetower.vision.eval.intervals import (
    binomial_bounds,
    binomial_upper,
    bootstrap_ratios,
    rate_interval,
    rate_upper,
    sum_interval,
)

# --- Clopper-Pearson ---------------------------------------------------------------------------


@pytest.mark.parametrize("n", [1, 10, 192, 998, 5000])
@pytest.mark.parametrize("level", [0.9, 0.95, 0.99])
def test_upper_bound_with_none_seen_is_the_closed_form(n: int, level: float) -> None:
    # P(X = 0) = (1 - p)^n = 1 - level at the bound.
    assert binomial_upper(0, n, level) == pytest.approx(1 - (1 - level) ** (1 / n), rel=1e-9)


def test_no_wrong_read_in_192_dice_does_not_show_a_rate_under_0_3_percent() -> None:
    assert binomial_upper(0, 192) == pytest.approx(0.01548, abs=1e-5)
    # 998 dice with none wrong is the fewest that shows <= 0.3 % at 95 %.
    assert binomial_upper(0, 998) <= 0.003 < binomial_upper(0, 997)


def test_two_sided_bounds_match_published_values_and_mirror() -> None:
    # Clopper-Pearson 95 % for 5 of 10: the textbook (0.1871, 0.8129).
    lo, hi = binomial_bounds(5, 10)
    assert (lo, hi) == (pytest.approx(0.187086, abs=1e-6), pytest.approx(0.812914, abs=1e-6))
    # Successes and failures swap the bounds.
    lo, hi = binomial_bounds(171, 192)
    flo, fhi = binomial_bounds(21, 192)
    assert (lo, hi) == (pytest.approx(1 - fhi, abs=1e-12), pytest.approx(1 - flo, abs=1e-12))
    assert lo < 171 / 192 < hi


def test_bounds_at_the_edges() -> None:
    assert binomial_bounds(0, 0) == (0.0, 1.0)  # nothing seen: nothing known
    assert binomial_upper(0, 0) == 1.0
    assert binomial_upper(7, 7) == 1.0
    lo, hi = binomial_bounds(180, 180)
    assert hi == 1.0 and lo == pytest.approx(0.025 ** (1 / 180), rel=1e-9)
    assert binomial_bounds(0, 50)[0] == 0.0


def test_bounds_cover_the_true_rate_at_least_as_often_as_promised() -> None:
    rng = np.random.default_rng(3)
    p, n = 0.1, 60
    covered = [lo <= p <= hi for lo, hi in (binomial_bounds(int(k), n) for k in rng.binomial(n, p, 400))]
    assert np.mean(covered) >= 0.95  # Clopper-Pearson is conservative: never under its level


def test_large_counts_are_quick_and_tight() -> None:
    lo, hi = binomial_bounds(99_000, 100_000)
    assert lo < 0.99 < hi and hi - lo < 0.0015


def test_bad_counts_are_refused() -> None:
    for k, n in ((-1, 5), (6, 5)):
        with pytest.raises(ValueError, match="0 <= k <= n"):
            binomial_upper(k, n)
    with pytest.raises(ValueError, match="level"):
        binomial_bounds(1, 5, level=1.0)


# --- bootstrap over groups ---------------------------------------------------------------------


def test_clumped_dice_give_a_wider_interval_than_the_same_dice_spread_out() -> None:
    # 100 dice, 80 right. Spread: 100 photos of one die. Clumped: 10 photos of 10 dice, where a
    # photo is read all right or mostly wrong (a hard die set), as byler's smoke-grey dice are.
    spread = rate_interval([1] * 80 + [0] * 20, [1] * 100)
    clumped = rate_interval([10] * 7 + [5, 5, 0], [10] * 10)
    cp = binomial_bounds(80, 100)
    assert spread[0] <= cp[0] and spread[1] >= cp[1]  # never narrower than the binomial
    assert clumped[1] - clumped[0] > 1.3 * (spread[1] - spread[0])
    assert clumped[0] < 0.8 < clumped[1]


def test_no_wrong_read_keeps_the_binomial_bound() -> None:
    # Every resample of "0 wrong" is 0: the bootstrap alone would promise a wrong rate of 0.
    assert rate_upper([0] * 30, [6] * 30) == pytest.approx(binomial_upper(0, 180))
    assert rate_interval([6] * 30, [6] * 30) == pytest.approx(binomial_bounds(180, 180))


def test_one_bad_photo_raises_the_upper_bound_beyond_the_binomial() -> None:
    hits, totals = [0] * 29 + [4], [6] * 30  # 4 wrong, all on one photo
    assert rate_upper(hits, totals) > binomial_upper(4, 180)


def test_bootstrap_is_seeded_and_skips_empty_groups() -> None:
    a = bootstrap_ratios([3, 0, 5, 2], [4, 0, 5, 6])
    assert np.array_equal(a, bootstrap_ratios([3, 0, 5, 2], [4, 0, 5, 6]))
    assert len(a) == intervals.RESAMPLES and (a >= 0).all() and (a <= 1).all()
    assert len(bootstrap_ratios([0, 0], [0, 0])) == 0
    assert rate_interval([], []) == (0.0, 1.0)


def test_resampling_is_chunked_to_bounded_memory(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(intervals, "_CHUNK_CELLS", 50)  # 10 resamples of 5 groups at a time
    r = bootstrap_ratios([1, 2, 3, 4, 5], [5] * 5, resamples=95)
    assert len(r) == 95 and (r > 0).all()


def test_bad_groups_are_refused() -> None:
    with pytest.raises(ValueError, match="one entry per group"):
        rate_interval([1, 2], [3])
    with pytest.raises(ValueError, match="hits <= totals"):
        rate_interval([4], [3])


def test_sum_interval_of_paired_changes() -> None:
    assert sum_interval([0] * 30) == (0.0, 0.0)  # two readers that agree everywhere
    assert sum_interval([1] * 20) == (20.0, 20.0)  # one more die right on every photo
    assert sum_interval([]) == (0.0, 0.0)
    # +7 from two photos among 30 is not the same as +7 spread over seven photos.
    lumpy = sum_interval([0] * 28 + [5, 2])
    even = sum_interval([0] * 23 + [1] * 7)
    assert lumpy[0] <= 0 <= 7 <= lumpy[1]
    assert even[0] > 0
