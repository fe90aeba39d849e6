"""Regression guard: the real reader on the shared datasets must keep the issue's figures.

Runs the same code as ``dicetower eval`` (``--split test`` by default: the reader is
trained on the other splits, so only the test split is honest). ``DICETOWER_EVAL_SPLIT=all``
evaluates every photo instead. Skips cleanly when ``<repo>/../shared/datasets`` is absent.

Thresholds (from the issue), per dataset: correct >= the floor below, confidently wrong
<= 0.3%, per-face reject-rate ratio <= 1.5 (rates floored at 1%, see
``dicetower.vision.evaluate``).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from dicetower.vision.evaluate import (
    DEFAULT_READER,
    FolderReport,
    evaluate_folder,
    resolve_reader,
    select_entries,
)

DATASETS = Path(__file__).resolve().parents[2].parent / "shared" / "datasets"

#: dataset -> minimum share of dice read correctly
MIN_CORRECT = {
    "byler-d6": 0.99,
    "tomitomi3-gray-d6": 0.99,
    "matteop65-d6-wood": 0.97,
    "epanemu-dice3": 0.90,
}
MAX_WRONG = 0.003
MAX_REJECT_RATIO = 1.5

pytestmark = [
    pytest.mark.datasets,
    pytest.mark.slow,
    pytest.mark.skipif(not DATASETS.is_dir(), reason=f"no shared datasets at {DATASETS}"),
]

_cache: dict[str, dict[str, Any]] = {}


def _evaluate(name: str) -> dict[str, Any]:
    if name not in _cache:
        folder = DATASETS / name
        if not (folder / "manifest.jsonl").is_file():
            pytest.skip(f"{folder} has no manifest.jsonl")
        split = os.environ.get("DICETOWER_EVAL_SPLIT", "test")
        entries = select_entries(folder, split=None if split == "all" else split, kinds=["d6"])
        report = FolderReport(name)
        for result in evaluate_folder(folder, resolve_reader(DEFAULT_READER), entries=entries):
            report.add(result)
        _cache[name] = report.to_json()
    return _cache[name]


def _summary(d: dict[str, Any]) -> str:
    faces = {f: (v["accuracy"], v["reject_rate"]) for f, v in d["per_face"].get("d6", {}).items()}
    return (
        f"{d['dataset']}: {d['photos']} photos, {d['dice']} dice, correct {d['accuracy']:.4f}, "
        f"wrong {d['wrong']} ({d['wrong_rate']:.4f}), rejected {d['rejected']}, missed {d['missed']}, "
        f"fp {d['false_positives']}, reject ratio {d['reject_ratio']}, median {d['median_ms']} ms, "
        f"per face (acc, rej) {faces}, errors {d['error_examples'][:2]}"
    )


@pytest.mark.parametrize("name", sorted(MIN_CORRECT))
def test_correct_share(name: str) -> None:
    d = _evaluate(name)
    assert d["dice"] > 0, _summary(d)
    assert d["accuracy"] >= MIN_CORRECT[name], _summary(d)


@pytest.mark.parametrize("name", sorted(MIN_CORRECT))
def test_confidently_wrong_share(name: str) -> None:
    d = _evaluate(name)
    assert d["dice"] > 0 and d["wrong_rate"] <= MAX_WRONG, _summary(d)


@pytest.mark.parametrize("name", sorted(MIN_CORRECT))
def test_reject_rate_is_even_across_faces(name: str) -> None:
    d = _evaluate(name)
    assert d["dice"] > 0 and d["reject_ratio"] <= MAX_REJECT_RATIO, _summary(d)
