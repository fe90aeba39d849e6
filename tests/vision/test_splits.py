"""The honest dataset split: stable, grouped, and roughly 70/15/15."""

from __future__ import annotations

import collections
import json
from pathlib import Path

import pytest
from dicetower.vision.eval.splits import SPLITS, group_of, split_of

DATASETS = Path(__file__).parents[2] / ".." / "shared" / "datasets"


def test_augmented_copies_of_one_photo_share_a_split() -> None:
    a = split_of("epanemu-dice3", "images/dice_101_jpg.rf.9e69503db4a1230f791c4004b2080121.jpg")
    b = split_of("epanemu-dice3", "images/dice_101_jpg.rf.0000000000000000000000000000aaaa.jpg")
    assert a == b
    assert group_of("epanemu-dice3", "x/dice_101_jpg.rf.1.jpg") != group_of(
        "epanemu-dice3", "x/dice_102_jpg.rf.1.jpg"
    )


def test_neighbouring_video_frames_share_a_split() -> None:
    for i in range(0, 50, 10):
        assert len({split_of("matteop65-d6-wood", f"images/two_{i + k}.jpg") for k in range(10)}) == 1
    for name in ("00200_00000.bmp", "00201_00001.bmp", "00209_00009.bmp"):
        assert split_of("tomitomi3-gray-d6", f"images/{name}") == split_of(
            "tomitomi3-gray-d6", "images/00200_00000.bmp"
        )
    assert len({split_of("rsandrini-d20", f"images/d20_wood{n:04d}.jpg") for n in range(32, 64)}) == 1


def test_split_is_stable_and_named() -> None:
    names = [f"images/IMG_{i}.jpg" for i in range(400)]
    first = [split_of("byler-d6", n) for n in names]
    assert first == [split_of("byler-d6", n) for n in names]
    counts = collections.Counter(first)
    assert set(counts) == set(SPLITS)
    assert 0.6 < counts["train"] / 400 < 0.8


def test_tomitomi_faces_are_balanced_across_splits() -> None:
    per = collections.Counter()
    for face in range(6):
        for within in range(200):
            index = face * 200 + within
            name = f"{index:05d}.bmp" if face == 0 else f"{index:05d}_{within:05d}.bmp"
            per[(face, split_of("tomitomi3-gray-d6", f"images/{name}"))] += 1
    for face in range(6):
        assert per[(face, "train")] == 140 and per[(face, "val")] == 30 and per[(face, "test")] == 30


@pytest.mark.datasets
@pytest.mark.skipif(not DATASETS.is_dir(), reason="../shared/datasets not present")
def test_every_dataset_has_all_three_splits() -> None:
    for folder in sorted(DATASETS.iterdir()):
        manifest = folder / "manifest.jsonl"
        if not manifest.is_file():
            continue
        with manifest.open(encoding="utf-8") as fh:
            got = collections.Counter(
                split_of(folder.name, json.loads(line)["image"]) for line in fh if line.strip()
            )
        assert set(got) == set(SPLITS), folder.name
        assert got["train"] > got["val"] and got["train"] > got["test"]
