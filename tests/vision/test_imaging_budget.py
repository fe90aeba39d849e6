"""The imaging budget: one number per kind in the table, numeral dice below it refused, the bench's choice."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from dicetower.firmware.cameras.sim import TOWER
from dicetower.vision.kinds import KINDS, Reader, min_px_of
from dicetower.vision.reader import below_budget, open_reader
from dicetower.vision.reading import DieReading, ReadStatus, UnreadableReason
from dicetower.vision.synth.numerals import NumeralStyle, TrayDie, render_tray
from dicetower.vision.taught.reader import rereads

BENCH = Path(__file__).resolve().parents[2] / "bench" / "imaging_budget.py"


@pytest.fixture(scope="module")
def bench() -> Any:
    """``bench/imaging_budget.py`` loaded as a module (the bench folder is scripts, not a package)."""
    spec = importlib.util.spec_from_file_location("bench_imaging_budget", BENCH)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["bench_imaging_budget"] = module
    try:
        spec.loader.exec_module(module)
        yield module
    finally:
        sys.modules.pop("bench_imaging_budget", None)


def test_every_kind_a_reader_reads_has_its_budget_and_numerals_need_more_than_pips() -> None:
    for name in ("d6", "d10", "d10t", "d20"):
        assert KINDS[name].min_px > 0, name
    assert min_px_of("d6") == KINDS["d6"].min_px  # a config's d6 is the pip d6
    assert min_px_of("d20") > min_px_of("d10") >= min_px_of("d6")
    assert all(k.min_px == 0 for k in KINDS.values() if k.reader is Reader.NONE)


def test_a_numeral_die_below_its_budget_is_too_small_not_read() -> None:
    need = KINDS["d20"].min_px
    small = DieReading(box=(5.0, 5.0, need - 1, need - 3), kind="d20", face=7, confidence=0.97)
    refused = below_budget(small, "d20")
    assert refused.face is None and refused.status is ReadStatus.UNREADABLE
    assert refused.reason is UnreadableReason.TOO_SMALL
    big = DieReading(box=(5.0, 5.0, need, need - 3), kind="d20", face=7, confidence=0.97)
    assert below_budget(big, "d20") == big
    # the pip reader keeps its own floor: a small pip d6 it read stays read
    pip = DieReading(box=(5.0, 5.0, 12.0, 12.0), kind="d6", face=4, confidence=0.9)
    assert below_budget(pip, "d6") == pip


def test_a_taught_die_reads_again_what_only_the_budget_refused() -> None:
    need = KINDS["d20"].min_px
    refused = below_budget(DieReading(box=(5.0, 5.0, need - 10, need - 10), kind="d20", face=3), "d20")
    assert rereads(refused)  # the budget is the general reader's, not a taught die's
    tiny = DieReading(
        box=(5.0, 5.0, 8.0, 8.0), status=ReadStatus.UNREADABLE, reason=UnreadableReason.TOO_SMALL
    )
    assert not rereads(tiny)  # under the pixel floor nothing reads it
    cut = DieReading(
        box=(0.0, 5.0, 50.0, 90.0), status=ReadStatus.UNREADABLE, reason=UnreadableReason.CUT_OFF
    )
    assert not rereads(cut)


def test_the_reader_refuses_small_d20_rather_than_guessing() -> None:
    reader = open_reader(numerals=True)
    side = 0.8 * KINDS["d20"].min_px * 640 / 480  # the renderer's unit is a 640 px short side
    style = NumeralStyle(blur=0.0, noise=1.0, perspective=0.0, tilt=10.0, tower=TOWER)
    reasons = []
    unrefused: list[DieReading] = []
    for seed in range(3):
        rng = np.random.default_rng(seed)
        dice = [TrayDie("d20", int(rng.integers(1, 21)), "blue", "solid", side=side) for _ in range(4)]
        frame, reference, labels = render_tray(seed, dice, (640, 480), style=style)
        assert all(max(label.box[2:]) < KINDS["d20"].min_px for label in labels if label.box)
        reader.budget = False  # the same reader without its refusal reads some of these small d20
        unrefused += [d for d in reader.read(frame, reference).dice if d.kind == "d20" and d.face is not None]
        reader.budget = True
        for die in reader.read(frame, reference).dice:
            if die.kind == "d20":
                assert die.face is None, die  # never a face from a d20 this small
                reasons.append(die.reason)
    assert UnreadableReason.TOO_SMALL in reasons
    assert unrefused  # so the refusal is what kept their faces out


def test_the_bench_chooses_the_smallest_size_that_keeps_the_reading(bench: Any) -> None:
    def row(px: float, dice: int, right: int, wrong: int, wrong_upper: float) -> dict[str, float | int]:
        rates = {"right_rate": right / dice, "wrong_rate": wrong / dice}
        return {"px": px, "dice": dice, **rates, "wrong_upper": wrong_upper}

    rows = [row(96, 100, 96, 0, 0.03), row(80, 100, 95, 0, 0.03), row(64, 100, 92, 0, 0.03)]
    rows.append(row(48, 100, 70, 0, 0.03))
    assert bench.minimum(rows) == 64
    # a size with more wrong reads than the full size's bound stops the choice, even if right enough
    rows[2] = row(64, 100, 92, 5, 0.05)
    assert bench.minimum(rows) == 80
    # the full size is the largest row with at least half the dice (a real set has few large dice)
    rows = [row(48, 10, 10, 0, 0.3), row(40, 100, 90, 0, 0.03), row(32, 100, 86, 0, 0.03)]
    rows.append(row(20, 100, 80, 0, 0.03))
    assert bench.minimum(rows) == 32
    # a full size that reads a quarter right: only the wrong reads judge
    rows = [row(96, 156, 39, 1, 0.03), row(64, 156, 26, 4, 0.058), row(48, 156, 18, 9, 0.099)]
    assert bench.minimum(rows) == 64
    assert bench.minimum([]) is None
