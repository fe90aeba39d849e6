"""Fuzz the notation: 100,000 mutated strings may fail, but only with a ``DiceError``.

The 100k run is a plain seeded loop (fast and reproducible: a failure names the string);
grammar-mirroring hypothesis strategies add shrinking on top of it.
"""

from __future__ import annotations

import json
import random

import pytest
from dicetower.rules import DiceError, RandomSource, Roller
from hypothesis import given, settings
from hypothesis import strategies as st
from notation_strategies import ALPHABET, expressions, generated

CASES = 100_000


def check(roller: Roller, source: RandomSource, text: str, render: bool) -> bool:
    """Roll ``text``; True if it rolled, False on a DiceError; anything else fails the test."""
    try:
        result = roller.roll(text, source)
        if render:
            json.dumps(result.to_json())
            str(result)
    except DiceError:
        return False
    except Exception as exc:  # pragma: no cover - the point of the test is that this never runs
        pytest.fail(f"{text!r} raised {type(exc).__name__}: {exc}")
    return True


def test_hundred_thousand_mutated_strings_raise_only_dice_errors() -> None:
    rng = random.Random(20260130)
    roller = Roller(cache_size=0)
    source = RandomSource(seed=7)
    rolled = 0
    for i in range(CASES):
        rolled += check(roller, source, generated(rng), render=i % 25 == 0)
    # both outcomes must be common, or the fuzzing is not exercising anything
    assert CASES * 0.15 < rolled < CASES * 0.85, rolled


@settings(max_examples=300, deadline=None)
@given(expressions(), st.integers(0, 40), st.sampled_from(ALPHABET), st.integers(0, 2**32))
def test_grammar_strings_with_one_edit_raise_only_dice_errors(expr: str, at: int, ch: str, seed: int) -> None:
    at = min(at, len(expr))
    roller = Roller(cache_size=0)
    check(roller, RandomSource(seed), expr, render=True)
    check(roller, RandomSource(seed), expr[:at] + ch + expr[at:], render=True)
    check(roller, RandomSource(seed), expr[:at] + expr[at + 1 :], render=True)
