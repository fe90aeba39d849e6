"""What keeps a fit small enough for a Pi: the head's projection in chunks, and the features it lets go."""

from __future__ import annotations

import ctypes.util
from pathlib import Path

import numpy as np
import pytest
from dicetower.vision.taught.features import NETWORKS, Backbone, Network
from dicetower.vision.taught.head import CHUNK_ROWS, fit_head, project
from dicetower.vision.taught.memory import return_freed_memory
from dicetower.vision.taught.photo_store import PhotoStore
from dicetower.vision.taught.samples import TELL_TURN, WHOLE_TURN, SampleCache
from dicetower.vision.taught.teaching import held_back_line, read_teaching_set, split_at
from teach_helpers import sim_folder


def test_the_projection_in_chunks_is_the_whole_standardisation() -> None:
    rng = np.random.default_rng(3)
    x = (rng.gamma(2.0, size=(CHUNK_ROWS * 2 + 37, 24)) * rng.uniform(0.1, 9, size=24)).astype(np.float32)
    p = project(x, rank=6)
    spread = x.std(axis=0) + 1e-3
    assert np.allclose(p.mean, x.mean(axis=0), rtol=1e-5)
    assert np.allclose(p.spread, spread, rtol=1e-4)
    assert np.allclose(p.basis.T @ p.basis, np.eye(6), atol=1e-4)
    assert np.allclose(p.z, ((x - x.mean(axis=0)) / spread) @ p.basis, atol=1e-3)


def test_a_head_fitted_on_a_given_projection_is_the_head_fitted_without() -> None:
    rng = np.random.default_rng(4)
    labels = np.repeat([1, 2, 3], 50)
    x = (rng.normal(size=(3, 12)) * 3)[labels - 1] + rng.normal(size=(150, 12))
    prior = (np.zeros((3, 12), np.float32), np.zeros(3, np.float32))
    alone = fit_head(x, labels, (1, 2, 3), prior, strength=1e-2)
    shared = fit_head(x, labels, (1, 2, 3), prior, strength=1e-2, projection=project(x))
    assert np.array_equal(alone.weights, shared.weights) and np.array_equal(alone.bias, shared.bias)


@pytest.fixture(scope="module")
def cache(tmp_path_factory: pytest.TempPathFactory) -> tuple[SampleCache, list]:
    folder = sim_folder(tmp_path_factory.mktemp("sizes") / "teach", 12, 3, [("d20", "blue"), ("d6", "white")])
    teaching = read_teaching_set(folder)
    cut = held_back_line((e.line for d in teaching.dice for e in d.examples), 0.3)
    nets = {Network.NUMERALS: Backbone(NETWORKS[Network.NUMERALS])}
    return SampleCache(nets, PhotoStore(teaching.photos()), cut), teaching.dice


def test_released_features_keep_the_telling_turns_as_sampled(cache: tuple[SampleCache, list]) -> None:
    samples, dice = cache
    d20 = next(d for d in dice if d.kind == "d20")
    faces = d20.faces
    full = samples.get(d20, faces, Network.NUMERALS, fitted=True)
    turns = 360 // WHOLE_TURN
    assert len(full.features) == turns * full.examples == turns * len(split_at(d20.examples, samples.cut)[0])
    samples.release(d20, keep=(Network.NUMERALS,))
    kept = samples.telling(d20, faces, Network.NUMERALS)
    every = TELL_TURN // WHOLE_TURN
    assert kept.features.dtype == np.float16 and len(kept.features) == (360 // TELL_TURN) * full.examples
    assert np.allclose(kept.features, full.features[::every], rtol=2e-3, atol=1e-3)
    assert list(kept.labels) == list(full.labels[::every])
    # what was let go is sampled again if asked: the same features
    again = samples.get(d20, faces, Network.NUMERALS, fitted=True)
    assert again is not full and np.array_equal(again.features, full.features)


def test_telling_turns_sampled_alone_are_those_of_every_turn(cache: tuple[SampleCache, list]) -> None:
    samples, dice = cache
    d6 = next(d for d in dice if d.kind == "d6")
    alone = samples.telling(d6, d6.faces, Network.NUMERALS)  # never sampled at every turn
    full = samples.get(d6, d6.faces, Network.NUMERALS, fitted=True)
    assert np.allclose(alone.features, full.features[:: TELL_TURN // WHOLE_TURN], rtol=2e-3, atol=1e-3)


def _resident_mb() -> float:
    with open("/proc/self/status", encoding="ascii") as fh:
        return next(int(line.split()[1]) / 1024 for line in fh if line.startswith("VmRSS:"))


def test_freed_heap_memory_is_handed_back() -> None:
    if not Path("/proc/self/status").is_file() or ctypes.util.find_library("c") is None:
        pytest.skip("needs Linux's /proc and a C library")
    big = np.ones(16 << 20, np.uint8)  # freeing a mapped array (under 32 MB) raises glibc's mapping threshold
    del big
    arrays = [np.ones(300_000, np.uint8) for _ in range(600)]  # ~180 MB of mid-sized arrays, on the heap
    arrays = arrays[-1:]  # the last kept: the heap cannot shrink from its top, only trim its middle
    held = _resident_mb()
    return_freed_memory()
    assert held - _resident_mb() > 100, (held, _resident_mb())
    del arrays
