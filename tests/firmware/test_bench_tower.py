"""bench/tower.py's face-dependent reader: it rejects by the true face, once per landing; the tilt shows."""

from __future__ import annotations

import importlib.util
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from dicetower.firmware.server.rejects import accepted_shares

BENCH = Path(__file__).resolve().parents[2] / "bench" / "tower.py"


@pytest.fixture(scope="module")
def bench() -> Any:
    """``bench/tower.py`` loaded as a module (the bench folder is scripts, not a package)."""
    spec = importlib.util.spec_from_file_location("bench_tower", BENCH)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["bench_tower"] = module  # dataclasses look their module up
    try:
        spec.loader.exec_module(module)
        yield module
    finally:
        sys.modules.pop("bench_tower", None)


def test_the_measured_rates_are_the_eval_counts(bench: Any) -> None:
    what, rates = bench.reject_rates("measured")
    assert "byler-d6" in what and rates == [k / n for k, n in bench.MEASURED["byler-d6"]]
    assert bench.reject_rates("0,0,0,0,0,0.5")[1] == [0, 0, 0, 0, 0, 0.5]
    with pytest.raises(SystemExit):
        bench.reject_rates("0.1,0.2")


def test_a_face_always_rejected_never_counts_and_each_landing_is_decided_once(bench: Any) -> None:
    r = bench.bench_rolls(6, 0.0, 3, [0.0, 0.0, 0.0, 0.0, 0.0, 1.0])
    reader = r["reader"]
    assert isinstance(reader, bench.FaceRejectingReader)
    assert reader.looks[6] > 0 and reader.rejected[6] == reader.looks[6]  # every landing on a 6
    assert sum(reader.rejected.values()) == reader.rejected[6]  # and nothing else
    assert len(reader.decided) == sum(reader.looks.values())  # a tap's re-read reuses the landing's decision
    assert all(c.get(6, 0) == 0 for c in r["per_slot"])
    assert any(k.startswith("tap: ") for k in r["retries"])  # a tap happened, yet the 6 stayed rejected
    assert (
        sum(sum(c.values()) for c in r["per_slot"]) == 5 * r["outcome"]["read, every die equal to the truth"]
    )


def test_the_report_sets_observed_beside_predicted(bench: Any) -> None:
    rates = [0.0, 0.0, 0.0, 0.0, 0.0, 0.5]
    per_slot = [Counter({1: 20, 2: 20, 3: 20, 4: 20, 5: 20, 6: 10})]
    lines = bench.tilt_report(per_slot, rates, None, 1)
    text = "\n".join(lines)
    predicted = accepted_shares(rates)
    assert " ".join(f"{100 * p:5.2f}" for p in predicted) in text
    # the counts are the prediction exactly: the chi-squared against it finds nothing, against fair it does
    pooled = next(line for line in lines if line.strip().startswith("pooled  n=110"))
    assert "p predicted 1.000" in pooled and "p fair 1.000" not in pooled


def test_asking_the_table_keeps_the_faces_the_reader_rejects(bench: Any) -> None:
    """With ``--unreadable ask`` a die rejected for its face is answered (from the camera's truth),
    never thrown again: the face the reader always rejects is counted after all."""
    r = bench.bench_rolls(6, 0.0, 3, [0.0, 0.0, 0.0, 0.0, 0.0, 1.0], "ask")
    table, reader = r["table"], r["reader"]
    assert table.asked == table.answered == reader.rejected[6] > 0
    sixes = sum(c.get(6, 0) for c in r["per_slot"])
    assert sixes == table.answered  # every 6 came from the table, and every answer was a 6
    assert not any("low_confidence" in k for k in r["retries"])


def test_fair_counts_pass_and_a_tilted_slot_is_caught_by_the_test_that_looks_at_it(bench: Any) -> None:
    fair = Counter({f: 100 for f in range(1, 7)})
    tilted = Counter({1: 160, 2: 100, 3: 100, 4: 100, 5: 100, 6: 40})
    t = bench._faces.fair_tests([fair, fair, fair, fair, tilted])
    assert t["n"] == 3000 and t["pooled"] == [560, 500, 500, 500, 500, 440]
    assert t["p_slots"][:4] == [1.0, 1.0, 1.0, 1.0] and t["p_slots"][4] < 1e-6
    assert t["p_joint"] < 1e-4  # the one bad slot shows in the joint test
    assert 1e-6 < t["p_pooled"] < 0.05  # pooled, four fair slots dilute it
    # the smallest of five p, adjusted for having looked at five (Sidak)
    assert t["p_smallest_adjusted"] == pytest.approx(1 - (1 - t["p_slots"][4]) ** 5)
    untilted = bench._faces.fair_tests([fair] * 5)
    assert untilted["p_pooled"] == untilted["p_joint"] == untilted["p_smallest_adjusted"] == 1.0


def test_the_uniformity_report_says_how_many_tests_it_ran(bench: Any) -> None:
    fair = [Counter({f: 10 for f in range(1, 7)})] * 5
    lines = bench._faces.uniformity_lines(fair, fair, Counter({f: 50 for f in range(1, 7)}))
    assert lines[0].startswith("uniformity against fair dice (Pearson's chi-squared): 15 tests")
    assert "equal to the final faces, slot by slot" in lines[3]
    assert "smallest adjusted for 5 slots (Sidak) 1.000" in lines[2]
    assert lines[-1].strip().startswith("drawn by the camera on every landing n=300")


def test_true_faces_pair_each_read_die_with_the_label_under_it(bench: Any) -> None:
    from dicetower.vision.manifest import LabelledDie
    from dicetower.vision.reading import DieReading, Reading

    truth = (LabelledDie("d6", 2, (10, 10, 20, 20)), LabelledDie("d6", 5, (100, 10, 20, 20)))
    reading = Reading(
        dice=(DieReading((101, 11, 20, 20), face=6), DieReading((9, 9, 20, 20), face=2)),
        width=200,
        height=100,
    )
    assert bench.true_faces(truth, reading) == [5, 2]  # the read 6 is a misread 5, whatever the order
    far = Reading(dice=(DieReading((300, 300, 20, 20), face=1),), width=400, height=400)
    assert bench.true_faces(truth, far) == [None]


def test_with_nothing_to_retry_the_faces_counted_are_the_faces_drawn(bench: Any) -> None:
    """No faults and no rejects: each roll is one landing of each die, so the counted faces are exactly
    the camera's draws, the true faces slot by slot equal the final ones, and nothing is misread."""
    r = bench.bench_rolls(4, 0.0, 3)
    pooled = sum(r["per_slot"], Counter())
    assert sum(pooled.values()) == 20 and pooled == r["drawn"]
    assert r["true_per_slot"] == r["per_slot"]
    assert r["wrong_dice"] == 0 and not r["wrong_by_face"]


def test_the_simulated_camera_draws_fair_faces_die_by_die(bench: Any) -> None:
    """The world the bench rolls in: 20,000 shakes of the five-die tray (no rendering), each die's
    faces and all of them together, against fair at a threshold a fair RNG passes 999 times in 1,000."""
    from dicetower.firmware.server.stats import chi2_sf

    camera = bench.LandingCamera(seed=11)
    per_die: list[Counter[int]] = [Counter() for _ in camera.dice]
    for _ in range(20_000):
        camera.throw()
        for counts, face in zip(per_die, camera.faces, strict=True):
            counts[face] += 1
    assert camera.drawn == sum(per_die, Counter()) and sum(camera.drawn.values()) == 100_000
    for counts in [*per_die, camera.drawn]:
        assert chi2_sf(bench._faces.chi2([counts[f] for f in range(1, 7)]), 5) > 0.001


def test_the_seeds_table_lists_every_run_and_pools_each_mode_s_seeds(bench: Any) -> None:
    rates = [0.0, 0.0, 0.0, 0.0, 0.0, 0.5]
    tilted = Counter({1: 20, 2: 20, 3: 20, 4: 20, 5: 20, 6: 10})  # the tilt ``rates`` predict
    run = {"per_slot": [tilted] * 5, "true_per_slot": [tilted] * 5, "drawn": Counter(), "wall_s": 1.0}
    lines = bench._faces.seeds_table([("rethrow", 1, run), ("rethrow", 2, run)], rates)
    assert [line.split()[:3] for line in lines[2:4]] == [["rethrow", "1", "110"], ["rethrow", "2", "110"]]
    assert "all 2 seeds pooled: n=1100 faces 1-6 200 200 200 200 200 100" in lines[4]
    assert lines[5].strip().startswith("against the predicted tilt p 1;")


def test_a_jammed_shake_draws_nothing_and_a_tap_draws_the_leaning_die_only(bench: Any) -> None:
    camera = bench.LandingCamera(seed=4)
    camera.throw()
    assert sum(camera.drawn.values()) == 5
    camera.inject("jam")
    camera.throw()  # the dice did not move: no landing, no face drawn
    assert sum(camera.drawn.values()) == 5
    camera.inject("cocked")
    (leaning,) = camera.cocked
    camera.tap()
    assert sum(camera.drawn.values()) == 6 and camera.landings[leaning] == 2
