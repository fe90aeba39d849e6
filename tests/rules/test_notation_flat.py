"""The flat evaluator (``flat.py``) and the general one (``dice_term``) agree die for die.

Both are run on the same term with the same seeded source; they must ask the source for the
same requests (slots, purposes, ``of_slot``, reasons), get the same faces, and build the same
evaluated tree: same total, same JSON and text, same flags and follow-up chains.
"""

from __future__ import annotations

import random

import pytest
from dicetower.rules import DiceRequest, DiceSource, FixedSource, RandomSource, RollBudget
from dicetower.rules.errors import DiceError
from dicetower.rules.notation import parse
from dicetower.rules.notation.ast import DiceTerm
from dicetower.rules.notation.evaluate import dice_term
from dicetower.rules.notation.flat import flat_eligible, roll_flat
from dicetower.rules.notation.formatters import node_json, node_text
from hypothesis import given, settings
from hypothesis import strategies as st
from notation_strategies import dice_terms


class Logged(DiceSource):
    """A real source that logs what it was asked, so two evaluations can be compared."""

    def __init__(self, inner: DiceSource):
        self.inner = inner
        self.log: list[tuple[tuple, str]] = []
        self.faces_are_valid = inner.faces_are_valid

    def faces(self, request: DiceRequest) -> list[int]:
        self.log.append((request.slots, request.reason))
        return self.inner.faces(request)


def _run(fn, term: DiceTerm, source: DiceSource, max_dice: int = 1000):
    logged = Logged(source)
    budget = RollBudget(logged, max_dice)
    try:
        ev = fn(term, budget)
    except DiceError as e:
        return ("error", type(e).__name__, str(e), logged.log)
    return (ev.total, node_json(ev), node_text(ev), budget.thrown, budget.used, logged.log)


def assert_agree(text: str, seed: int) -> None:
    term = parse(text)
    assert isinstance(term, DiceTerm) and flat_eligible(term), text
    flat = _run(roll_flat, term, RandomSource(seed))
    general = _run(dice_term, term, RandomSource(seed))
    assert flat == general, text


_MODS = (
    "r1",
    "ro1",
    "r<3",
    "ro<=2",
    "r>=5",
    "!",
    "!>=5",
    "!1",
    "mi2",
    "ma4",
    "mi3",
    "kh3",
    "kl1",
    "dh1",
    "dl2",
    "kh",
)


def test_agree_on_modifier_combinations() -> None:
    rng = random.Random(11)
    for _ in range(3000):
        mods = rng.sample(_MODS, rng.randrange(1, 4))
        if sum(m.startswith("r") for m in mods) > 1 or sum(m.startswith("!") for m in mods) > 1:
            continue
        sides = rng.choice([2, 3, 4, 6, 8, 10, 12, 20])
        text = f"{rng.randrange(0, 9)}d{sides}{''.join(mods)}"
        try:
            parse(text)
        except DiceError:
            continue  # e.g. "r<3" on a d2 rerolls forever: refused before any die
        assert_agree(text, rng.randrange(2**32))


@pytest.mark.parametrize(
    "text", ["4d6ro1", "6d6mi2", "3d6!", "4d6kh3", "2d20kl1", "10d10!", "10d10r10mi3", "5d4r<3!ma3kh2kl1"]
)
@pytest.mark.parametrize("seed", range(40))
def test_agree_on_everyday_terms(text: str, seed: int) -> None:
    assert_agree(text, seed)


@settings(max_examples=300, deadline=None)
@given(dice_terms(), st.integers(0, 2**32))
def test_agree_on_grammar_terms(text: str, seed: int) -> None:
    term = parse(text)
    if isinstance(term, DiceTerm) and flat_eligible(term):
        assert_agree(text, seed)


@pytest.mark.parametrize(
    ("text", "faces", "max_dice"),
    [
        ("1d6r6", [6] * 101, 1000),  # rerolled 100 times and still a 6
        ("1d6r6", [6] * 100 + [3], 1000),  # the 100th reroll is the last one allowed
        ("2d6ro6", [6, 6, 6, 6], 1000),  # ro rerolls once even when the reroll matches again
        ("1d6!", [6] * 100 + [2], 1000),  # 100 explosions in a row are allowed
        ("1d6!", [6] * 101, 1000),  # exploded 100 times in a row
        ("4d6!", [6] * 10, 6),  # the budget runs out mid-explosion
        ("4d6ro1", [1, 1, 2], 1000),  # the source runs out of faces on the reroll
        ("2d6!", [6, 7], 1000),  # a face that is not on the die
        ("3d10r<3", [0, 1, 2, 5, 0, 3, 4], 1000),  # a d10's 0 is worth 10: no reroll
    ],
)
def test_agree_on_limits_and_source_errors(text: str, faces: list[int], max_dice: int) -> None:
    term = parse(text)
    flat = _run(roll_flat, term, FixedSource(faces), max_dice)
    general = _run(dice_term, term, FixedSource(faces), max_dice)
    assert flat == general


def test_limits_still_stop_the_flat_path() -> None:
    got = _run(roll_flat, parse("1d6!"), FixedSource([6] * 101))
    assert got[:2] == ("error", "RollLimitError") and "exploded 100 times" in got[2]
    got = _run(roll_flat, parse("1d6r6"), FixedSource([6] * 101))
    assert got[:2] == ("error", "RollLimitError") and "rerolled 100 times" in got[2]


def test_percentile_and_success_terms_stay_on_the_general_path() -> None:
    for text in ("d%ro1", "2d100!", "6d6>=4", "4d6f1", "4d6r1>=3"):
        term = parse(text)
        assert isinstance(term, DiceTerm) and not flat_eligible(term), text
