"""Contract suite over every registered system and check: exact odds agree with the dice.

For each check's ``sample_params``: the odds sum to 1 (exactly, or within the stated
truncation error); a seeded RandomSource run lands within 5 sigma of the odds for every
outcome; and a FixedSource replay of the faces the RandomSource produced gives the same
result.
"""

from __future__ import annotations

import math
from collections import Counter
from fractions import Fraction

import pytest
from dicetower.rules.source import FixedSource, RandomSource, RollBudget
from dicetower.rules.systems import get_system, run_check, system_names, validate_params

#: rolls per parameter set; 5 sigma of a binomial at N=2000 is at most 112 counts
N_ROLLS = 2000
#: replays per parameter set
N_REPLAYS = 25
SIGMAS = 5


def _cases() -> list[tuple[str, str, int]]:
    cases = []
    for system in system_names():
        for name, check in get_system(system).checks.items():
            for i in range(len(check.sample_params)):
                cases.append(pytest.param(system, name, i, id=f"{system}-{name}-{i}"))
    return cases


def _load(system: str, check: str, index: int):
    s = get_system(system)
    c = s.check(check)
    return s, c, validate_params(c, c.sample_params[index])


def test_every_check_has_sample_params():
    for system in system_names():
        try:
            s = get_system(system)
        except ModuleNotFoundError:
            continue
        for name, check in s.checks.items():
            assert check.sample_params, f"{system} {name} declares no sample_params"
            assert check.outcomes, f"{system} {name} declares no outcomes"


@pytest.mark.parametrize(("system", "check", "index"), _cases())
def test_odds_sum_to_one(system, check, index):
    _, c, params = _load(system, check, index)
    odds = c.odds(**params)
    assert set(odds.probabilities) <= set(c.outcomes)
    assert all(p >= 0 for p in odds.probabilities.values())
    total = sum(odds.probabilities.values())
    if odds.truncation_error == 0 and all(isinstance(p, Fraction) for p in odds.probabilities.values()):
        assert total == 1
    else:
        assert abs(1 - float(total)) <= odds.truncation_error + 1e-12


@pytest.mark.parametrize(("system", "check", "index"), _cases())
def test_random_frequencies_match_odds(system, check, index):
    s, c, params = _load(system, check, index)
    odds = c.odds(**params)
    rng = RandomSource(f"{system}/{check}/{index}")
    seen = Counter(run_check(s, check, rng, params, with_odds=False).outcome for _ in range(N_ROLLS))
    assert set(seen) <= set(c.outcomes), (
        f"outcomes outside the declared vocabulary: {set(seen) - set(c.outcomes)}"
    )
    for outcome in set(seen) | set(odds.probabilities):
        p = float(odds.probabilities.get(outcome, 0))
        expected = N_ROLLS * p
        bound = SIGMAS * math.sqrt(N_ROLLS * p * (1 - p)) + 1  # +1: continuity for p near 0 or 1
        assert abs(seen[outcome] - expected) <= bound, (
            f"{outcome}: {seen[outcome]} of {N_ROLLS}, expected {expected:.1f} ± {bound:.1f}"
        )


@pytest.mark.parametrize(("system", "check", "index"), _cases())
def test_fixed_replay_is_identical(system, check, index):
    s, c, params = _load(system, check, index)
    for seed in range(N_REPLAYS):
        budget = RollBudget(RandomSource(seed))
        first = c.roll(budget, **params)
        faces = [face for _, face in budget.thrown]
        replay = run_check(s, check, FixedSource(faces), params, with_odds=False)
        assert replay.to_json() == first.to_json()
