"""Body colour naming: the red wild die must be told apart from white, black and other dice."""

from __future__ import annotations

import cv2
import numpy as np
import pytest
from dicetower.vision.colour import COLOUR_NAMES, body_hsv, colour_name, die_colour


def _die(body_bgr: tuple[int, int, int], pip_bgr: tuple[int, int, int], size: int = 48) -> np.ndarray:
    """A crop of a die face filling the square, with five pips (they must not sway the colour)."""
    img = np.full((size, size, 3), body_bgr, np.uint8)
    for u, v in ((0.3, 0.3), (0.7, 0.3), (0.5, 0.5), (0.3, 0.7), (0.7, 0.7)):
        cv2.circle(img, (int(u * size), int(v * size)), size // 10, pip_bgr, -1)
    noise = np.random.default_rng(0).normal(0, 4, img.shape)
    return np.clip(img + noise, 0, 255).astype(np.uint8)


@pytest.mark.parametrize(
    ("body", "pip", "name"),
    [
        ((35, 30, 190), (240, 240, 240), "red"),  # white-on-red: the usual wild die
        ((60, 50, 150), (230, 230, 230), "red"),  # darker red
        ((235, 235, 235), (20, 20, 20), "white"),
        ((30, 30, 30), (240, 240, 240), "black"),
        ((40, 160, 40), (240, 240, 240), "green"),
        ((190, 90, 30), (240, 240, 240), "blue"),
        ((40, 200, 230), (20, 20, 20), "yellow"),
        ((160, 40, 120), (240, 240, 240), "purple"),
    ],
)
def test_names_die_body_colours(body: tuple[int, int, int], pip: tuple[int, int, int], name: str) -> None:
    got, hsv = die_colour(_die(body, pip))
    assert got == name, hsv
    assert got in COLOUR_NAMES


def test_red_and_white_dice_are_told_apart() -> None:
    red, red_hsv = die_colour(_die((35, 30, 190), (240, 240, 240)))
    white, white_hsv = die_colour(_die((230, 230, 230), (30, 30, 30)))
    assert red == "red" and white == "white"
    assert red_hsv[1] > 120 > white_hsv[1]  # saturation is what separates them


def test_pips_do_not_decide_the_colour() -> None:
    # Black pips on a white body, but the body is the majority of the face.
    (_h, s, v), _spread = body_hsv(_die((235, 235, 235), (0, 0, 0)))
    assert v > 200 and s < 40


def test_hue_wraps_around_for_red() -> None:
    assert colour_name((2, 200, 180)) == "red"
    assert colour_name((176, 200, 180)) == "red"
    assert colour_name((60, 10, 240)) == "white"
    assert colour_name((60, 10, 30)) == "black"


def test_tiny_or_grey_crop_does_not_crash() -> None:
    assert die_colour(np.zeros((1, 1, 3), np.uint8))[0] in COLOUR_NAMES
    assert die_colour(np.full((10, 10, 3), 128, np.uint8))[0] == "grey"
