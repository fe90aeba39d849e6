"""The single-die box finder: a drawn die under a gradient and a shadow, real d20 photos, the cache."""

from __future__ import annotations

import json
import math
from pathlib import Path

import cv2
import numpy as np
import pytest
from dicetower.vision.training import single_die_box
from dicetower.vision.training.single_die_box import boxes_for, find_die_box, photo_prefix

DATASETS = Path(__file__).resolve().parents[3] / "shared" / "datasets"
D20 = DATASETS / "rsandrini-d20"


def _scene(with_die: bool = True, seed: int = 0) -> tuple[np.ndarray, tuple[int, int, int, int]]:
    """A 480 px photo: a blue card lit from the top left, an orange hexagon die and its soft shadow.

    Returns the photo and the hexagon's true box (x0, y0, x1, y1), inclusive pixel bounds.
    """
    rng = np.random.default_rng(seed)
    size = 480
    ys, xs = np.mgrid[0:size, 0:size].astype(np.float32)
    light = 1.0 - 0.25 * (xs + ys) / (2 * size)  # fall-off across the card
    card = np.array([200, 140, 90], np.float32)  # BGR: a mid blue
    photo = card[None, None, :] * light[..., None]
    centre = np.array([250.0, 230.0])
    hexagon = np.array(
        [centre + 80 * np.array([math.cos(a), math.sin(a)]) for a in np.radians(np.arange(0, 360, 60) + 15)],
        np.int32,
    )
    if with_die:
        shadow = np.zeros((size, size), np.float32)
        cv2.fillConvexPoly(shadow, hexagon + np.array([30, 25], np.int32), 1.0)
        shadow = cv2.GaussianBlur(shadow, (0, 0), 9)
        photo *= 1.0 - 0.35 * shadow[..., None]
    photo += rng.normal(0.0, 2.0, photo.shape)
    photo = np.clip(photo, 0, 255).astype(np.uint8)
    if with_die:
        cv2.fillConvexPoly(photo, hexagon, (30, 110, 235), lineType=cv2.LINE_AA)  # orange body
        cv2.putText(photo, "20", (215, 250), cv2.FONT_HERSHEY_SIMPLEX, 1.4, (20, 20, 20), 4)
    x, y, w, h = cv2.boundingRect(hexagon)
    return photo, (x, y, x + w - 1, y + h - 1)


def test_a_drawn_die_is_boxed_within_a_few_pixels_and_its_shadow_left_out() -> None:
    photo, (x0, y0, x1, y1) = _scene()
    box = find_die_box(photo)
    assert box is not None
    bx, by, bw, bh = box
    got = (bx, by, bx + bw - 1, by + bh - 1)
    for edge, want in zip(got, (x0, y0, x1, y1), strict=True):
        assert abs(edge - want) <= 5, (got, (x0, y0, x1, y1))


def test_a_photo_of_the_bare_card_has_no_box() -> None:
    photo, _ = _scene(with_die=False)
    assert find_die_box(photo) is None


def test_a_photo_too_small_to_search_is_an_error() -> None:
    with pytest.raises(ValueError, match="too small"):
        find_die_box(np.zeros((20, 20, 3), np.uint8))


def test_photo_prefix_drops_the_frame_number() -> None:
    assert photo_prefix("images/d20_wood0132.jpg") == "d20_wood"
    assert photo_prefix("images/d20_off-angle_0058.jpg") == "d20_off-angle"
    assert photo_prefix("images/d20_top_121.jpg") == "d20_top"
    assert photo_prefix("images/img3.jpg") == "img"
    assert photo_prefix("images/d4000.jpg", "d4") == "d4"
    assert photo_prefix("images/d4_wood0941.jpg", "d4") == "d4_wood"


def test_boxes_for_caches_per_dataset_and_recomputes_when_photos_change(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = tmp_path / "drawn"
    (folder / "images").mkdir(parents=True)
    rows = []
    for i, with_die in enumerate((True, False)):
        photo, _ = _scene(with_die=with_die, seed=i)
        cv2.imwrite(str(folder / "images" / f"p{i}.png"), photo)
        rows.append({"image": f"images/p{i}.png", "dice": [{"die": "d20", "face": 20}]})
    (folder / "manifest.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    cache_dir = tmp_path / "cache"

    boxes = boxes_for(folder, cache_dir=cache_dir)
    assert set(boxes) == {"images/p0.png", "images/p1.png"}
    assert boxes["images/p0.png"] is not None and boxes["images/p1.png"] is None
    assert (cache_dir / "drawn.json").is_file()

    def refuse(_image: np.ndarray) -> None:
        raise AssertionError("the cache should have answered")

    monkeypatch.setattr(single_die_box, "find_die_box", refuse)
    assert boxes_for(folder, cache_dir=cache_dir) == boxes
    rows.append({"image": "images/missing.png", "dice": [{"die": "d20", "face": 1}]})
    (folder / "manifest.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    monkeypatch.undo()
    again = boxes_for(folder, cache_dir=cache_dir)
    assert again["images/missing.png"] is None and again["images/p0.png"] == boxes["images/p0.png"]


@pytest.mark.skipif(not (D20 / "manifest.jsonl").is_file(), reason="needs ../shared/datasets/rsandrini-d20")
def test_real_d20_photos_get_a_die_sized_box_near_the_middle() -> None:
    cv2.setNumThreads(1)
    rows = [json.loads(line) for line in (D20 / "manifest.jsonl").read_text().splitlines() if line.strip()]
    rows = [r for r in rows if Path(r["image"]).name.startswith("d20_")]
    for r in rows[:: max(1, len(rows) // 10)][:10]:
        photo = cv2.imread(str(D20 / r["image"]))
        assert photo is not None
        h, w = photo.shape[:2]
        box = find_die_box(photo)
        assert box is not None, r["image"]
        x, y, bw, bh = box
        assert 0.2 * min(h, w) <= max(bw, bh) <= 0.75 * min(h, w), (r["image"], box)
        assert max(bw, bh) <= 1.4 * min(bw, bh), (r["image"], box)  # a d20 is round from any side
        cx, cy = x + bw / 2, y + bh / 2
        assert 0.15 * w <= cx <= 0.85 * w and 0.15 * h <= cy <= 0.85 * h, (r["image"], box)
