"""The rsandrini-d20 held-back split: whole videos (one die on one background) to one split."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest
from dicetower.vision.eval.splits import background_of, d20_split, d20_splits

MANIFEST = (
    Path(__file__).resolve().parents[2] / ".." / "shared" / "datasets" / "rsandrini-d20" / "manifest.jsonl"
)


def test_background_is_the_name_without_the_frame_number() -> None:
    assert background_of("images/d20_wood0606.jpg") == "d20_wood"
    assert background_of("images/d20_off-angle_1009.jpg") == "d20_off-angle_"
    assert background_of("d20_top_12.png") == "d20_top_"


def test_videos_go_whole_to_one_split() -> None:
    photos = [
        (f"images/d20_{bg}{n:04d}.jpg", face)
        for bg in ("color", "top_", "wood")
        for face in (3, 4)
        for n in range(5)
    ]
    photos += [("images/d20_wood0100.jpg", 7)]
    splits = d20_splits(photos)
    # face 3 on 3 backgrounds: one test, one val, one train; face 7 on one: train only
    assert Counter(splits[(bg, 3)] for bg in ("d20_color", "d20_top_", "d20_wood")) == Counter(
        ["test", "val", "train"]
    )
    assert splits[("d20_wood", 7)] == "train"
    for relpath, face in photos:
        assert d20_split(splits, relpath, face) == splits[(background_of(relpath), face)]


def test_two_backgrounds_give_a_test_video_and_no_val() -> None:
    splits = d20_splits([("images/d20_color1.jpg", 5), ("images/d20_wood1.jpg", 5)])
    assert sorted(splits.values()) == ["test", "train"]


def test_stray_photos_train() -> None:
    splits = d20_splits([("images/img1.jpg", 20), ("images/d20_top_1.jpg", 20), ("images/d20_wood1.jpg", 20)])
    assert d20_split(splits, "images/img1.jpg", 20) == "train"


@pytest.mark.skipif(not MANIFEST.is_file(), reason="rsandrini-d20 not present")
def test_on_the_dataset_no_video_straddles_and_every_test_face_is_trained() -> None:
    rows = [json.loads(line) for line in MANIFEST.read_text(encoding="utf-8").splitlines() if line.strip()]
    photos = [(r["image"], r["dice"][0]["face"]) for r in rows]
    splits = d20_splits(photos)
    seen: dict[tuple[str, int], set[str]] = {}
    for relpath, face in photos:
        seen.setdefault((background_of(relpath), face), set()).add(d20_split(splits, relpath, face))
    assert all(len(s) == 1 for s in seen.values())
    test_faces = {f for (_bg, f), s in seen.items() if s == {"test"}}
    train_faces = {f for (_bg, f), s in seen.items() if s == {"train"}}
    assert test_faces and test_faces <= train_faces
    counts = Counter(d20_split(splits, p, f) for p, f in photos)
    assert counts == Counter({"train": 1172, "test": 467, "val": 194})


def test_eval_selects_rsandrini_photos_by_whole_video(tmp_path: Path) -> None:
    from dicetower.vision.eval.evaluate import select_entries

    folder = tmp_path / "rsandrini-d20"
    (folder / "images").mkdir(parents=True)
    photos = [
        (f"images/d20_{bg}{n:04d}.jpg", face)
        for bg in ("color", "top_", "wood")
        for face in (3, 4)
        for n in range(40)
    ]
    rows = [{"image": p, "dice": [{"die": "d20", "face": f}]} for p, f in photos]
    (folder / "manifest.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    videos = d20_splits(photos)
    for split in ("train", "val", "test"):
        chosen = select_entries(folder, split=split)
        want = [p for p, f in photos if d20_split(videos, p, f) == split]
        assert [e.relpath for e in chosen] == want
    # frame blocks would split a 40-frame video; whole videos never are
    held = {(background_of(e.relpath), e.dice[0].face) for e in select_entries(folder, split="test")}
    assert held and all(d20_split(videos, f"images/{bg}0000.jpg", face) == "test" for bg, face in held)
