"""The rolls a fit's held-back bound needs: counted as the fit splits and bounds, so collect and fit agree."""

from __future__ import annotations

from pathlib import Path

import pytest
from dicetower.vision.eval.intervals import binomial_upper
from dicetower.vision.taught.enough import MAX_DICE, dice_to_show, held_back_photos, rolls_to_show
from dicetower.vision.taught.teaching import Example, hold_back_split


@pytest.mark.parametrize("share", [0.3, 0.2, 0.5, 1 / 3])
def test_the_held_back_photos_are_those_the_fit_holds_back(share: float) -> None:
    for photos in range(0, 260):
        examples = [Example(line, Path("p.png"), None, 1) for line in range(1, photos + 1)]
        assert held_back_photos(photos, share) == len(hold_back_split(examples, share)[1]), photos


@pytest.mark.parametrize("max_wrong", [0.005, 0.01, 0.02, 0.1, 0.5])
def test_the_dice_needed_are_the_fewest_the_fit_s_bound_accepts(max_wrong: float) -> None:
    n = dice_to_show(max_wrong)
    assert binomial_upper(0, n) <= max_wrong < binomial_upper(0, n - 1)


def test_the_edges() -> None:
    assert dice_to_show(0.01) == 299 and dice_to_show(1.0) == 0 and dice_to_show(0.0) == MAX_DICE
    assert rolls_to_show(0, 5, 0.3, 0.01) == 197  # a five-dice tray
    assert rolls_to_show(197, 5, 0.3, 0.01) == 0 and rolls_to_show(196, 5, 0.3, 0.01) == 1
    assert rolls_to_show(10, 1, 0.3, 1.0) == 0 and rolls_to_show(10, 0, 0.3, 0.01) == MAX_DICE


@pytest.mark.parametrize("dice", [1, 2, 5])
@pytest.mark.parametrize("share", [0.3, 0.25])
def test_the_rolls_left_are_the_fewest_that_hold_back_enough(dice: int, share: float) -> None:
    need = dice_to_show(0.05)
    for photos in range(0, 200, 3):
        more = rolls_to_show(photos, dice, share, 0.05)
        assert held_back_photos(photos + more, share) * dice >= need
        if more:
            assert held_back_photos(photos + more - 1, share) * dice < need
