"""A throw's photo and die crops: JPEG bytes cut from the raw frame, a square with a margin."""

from __future__ import annotations

import cv2
import numpy as np
import pytest
from dicetower.firmware.photos import CROP_MARGIN, crop_jpeg, die_crops, encode_jpeg


def _frame() -> np.ndarray:
    rng = np.random.default_rng(3)
    return rng.integers(0, 255, (120, 160, 3), dtype=np.uint8)


def _decode(data: bytes) -> np.ndarray:
    image = cv2.imdecode(np.frombuffer(data, np.uint8), cv2.IMREAD_COLOR)
    assert image is not None
    return image


def test_the_photo_is_a_jpeg_of_the_frame() -> None:
    data = encode_jpeg(_frame())
    assert data[:2] == b"\xff\xd8" and _decode(data).shape == (120, 160, 3)


def test_a_crop_is_the_square_around_the_box_with_its_margin() -> None:
    crop = crop_jpeg(_frame(), (60.0, 40.0, 20.0, 30.0))
    assert crop is not None and crop[:2] == b"\xff\xd8"
    side = int(75 + 30 * (1 + 2 * CROP_MARGIN) / 2) - int(75 - 30 * (1 + 2 * CROP_MARGIN) / 2)
    assert _decode(crop).shape[:2] == (side, side)


def test_a_crop_at_the_edge_is_clipped_to_the_frame() -> None:
    crop = crop_jpeg(_frame(), (150.0, 50.0, 20.0, 20.0))  # half of it past the right edge
    assert crop is not None
    assert _decode(crop).shape[:2] == (27, 14)


@pytest.mark.parametrize("box", [(500.0, 500.0, 10.0, 10.0), (0.0, 0.0, 0.0, 0.0), ("x", 1, 2, 3), (1, 2)])
def test_a_box_that_leaves_no_picture_has_no_crop(box: tuple) -> None:
    assert crop_jpeg(_frame(), box) is None


def test_die_crops_keep_the_boxes_order() -> None:
    frame = _frame()
    boxes = [(10.0, 10.0, 20.0, 20.0), (900.0, 0.0, 5.0, 5.0), (100.0, 60.0, 30.0, 30.0)]
    crops = die_crops(frame, boxes)
    assert crops == [crop_jpeg(frame, b) for b in boxes] and crops[1] is None
