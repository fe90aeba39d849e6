"""The roll cycle on the simulated tower: faces equal the rendered truth, or a clear failure with a reason."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from dicetower.firmware.cameras import sim as sim_module
from dicetower.firmware.cameras.opencv import OpenCVCamera
from dicetower.firmware.config import DiceSet
from dicetower.firmware.errors import (
    CalibrationError,
    CameraDisconnectedError,
    CameraUnavailableError,
    ThrowFailedError,
    TrayKindError,
)
from dicetower.firmware.records import FailureReason, ThrowRecord
from dicetower.firmware.tower import open_tower, plan_rounds
from dicetower.rules.source import DiceRequest, DieSlot, Purpose, Role
from tower_helpers import sim_config, write_video


def plain(n: int, start: int = 0, die: str = "d6") -> list[DieSlot]:
    return [DieSlot(i, die) for i in range(start, start + n)]


def request(*slots: DieSlot, reason: str = "test") -> DiceRequest:
    return DiceRequest(tuple(slots), reason)


def truth_of(record: ThrowRecord, box: tuple[float, ...]) -> Any:
    """The rendered die nearest a read box (the sim knows where it drew each die)."""
    cx, cy = box[0] + box[2] / 2, box[1] + box[3] / 2
    assert record.truth
    return min(
        record.truth, key=lambda d: (d.box[0] + d.box[2] / 2 - cx) ** 2 + (d.box[1] + d.box[3] / 2 - cy) ** 2
    )


def assert_faces_are_the_truth(record: ThrowRecord) -> None:
    assert record.ok and record.reading is not None and record.truth is not None
    assert len(record.reading.dice) == len(record.truth)
    for d in record.reading.dice:
        assert d.face == truth_of(record, d.box).face


def pulses(tower: Any) -> int:
    return sum(1 for s in tower.shaker.pin.states if s.state)


def test_a_roll_reads_the_rendered_truth_left_to_right(sim_tower: Any) -> None:
    tower = sim_tower(seed=2)
    answer = tower.roll(request(*plain(4)))
    (record,) = answer.records
    assert_faces_are_the_truth(record)
    assert answer.faces == [a.face for a in record.answers]
    xs = [a.box[0] + a.box[2] / 2 for a in record.answers]
    assert xs == sorted(xs)  # plain slots take dice left to right
    assert set(record.timings_ms) >= {"shake", "settle", "camera", "read", "match", "total"}
    assert record.photo[:2] == b"\xff\xd8" and not record.retries
    assert not tower.shaker.pin.state


def test_the_wild_slot_is_the_red_die(sim_tower: Any) -> None:
    tower = sim_tower(seed=3)
    slots = [DieSlot(0, "d6", Role.WILD, label="wild die"), *plain(3, 1)]
    answer = tower.roll(request(*slots))
    wild = answer.answers[0]
    assert wild.role == "wild" and wild.colour == "red"
    (record,) = answer.records
    sim = tower.camera
    red_box = next(label.box for die, label in sim.truth_dice if die.role == "wild")
    assert truth_of(record, wild.box).box == red_box
    assert all(a.colour != "red" for a in answer.answers[1:])
    follow_up = DieSlot(4, "d6", Role.WILD, Purpose.EXPLOSION, of_slot=0, label="wild die explosion")
    again = tower.roll(request(follow_up, reason="wild die exploded"))
    assert again.answers[0].colour == "red" and len(again.faces) == 1


def test_more_dice_than_loaded_are_thrown_in_rounds(sim_tower: Any) -> None:
    tower = sim_tower(seed=4)
    answer = tower.roll(request(*plain(12)))
    assert [(r.round, r.rounds, len(r.answers)) for r in answer.records] == [(1, 3, 5), (2, 3, 5), (3, 3, 2)]
    for r in answer.records:
        assert_faces_are_the_truth(r)
    assert len(answer.faces) == 12


def test_rounds_come_from_kinds_and_roles_only() -> None:
    tray = sim_config().dice.dice
    wild = DieSlot(0, "d6", Role.WILD)
    assert [len(r) for r in plan_rounds([wild, *plain(9, 1)], tray)] == [
        5,
        4,
        1,
    ]  # the red die is kept for wild
    assert [len(r) for r in plan_rounds(plain(30), tray)] == [5] * 6
    tray10 = DiceSet.parse({"plain": "10 white d6"}).dice
    assert len(plan_rounds(plain(30), tray10)) == 3
    with pytest.raises(TrayKindError, match="needs a d20; the tray holds 5 d6"):
        plan_rounds([DieSlot(0, "d20")], tray)
    with pytest.raises(TrayKindError, match="needs a wild die"):
        plan_rounds([wild], tray10)


def test_a_kind_the_tray_lacks_fails_before_anything_moves(sim_tower: Any) -> None:
    tower = sim_tower(seed=5)
    before = pulses(tower)
    with pytest.raises(TrayKindError, match="d20"):
        tower.roll(request(DieSlot(0, "d20")))
    assert pulses(tower) == before and not tower.shaker.pin.state


def test_a_leaning_die_is_tapped_and_the_whole_new_reading_counts(sim_tower: Any) -> None:
    tower = sim_tower(seed=6, sim={"fault_rate": 1.0, "faults": ("cocked",)})
    answer = tower.roll(request(*plain(4)))
    (record,) = answer.records
    assert record.retries and record.retries[0].action == "tap"
    assert "unreadable" in record.retries[0].reason
    assert_faces_are_the_truth(record)  # against the truth of the photo after the tap: every die re-read
    assert len(record.pulses) > tower.config.shaker.shake_count  # the shake and the tap


@pytest.mark.parametrize(
    ("fault", "retry"), [("frozen", "frozen frame"), ("black", "black frame"), ("disconnect", "reconnect")]
)
def test_camera_faults_are_retried(sim_tower: Any, fault: str, retry: str) -> None:
    tower = sim_tower(seed=7, sim={"fault_rate": 1.0, "faults": (fault,)})
    (record,) = tower.roll(request(*plain(3))).records
    assert any(retry in f"{r.action} {r.reason}" for r in record.retries)
    assert_faces_are_the_truth(record)


def test_touching_and_blurred_frames_end_read_or_failed(sim_tower: Any) -> None:
    for seed, fault in enumerate(("touching", "blurred")):
        tower = sim_tower(seed=8 + seed, sim={"fault_rate": 1.0, "faults": (fault,)})
        try:
            (record,) = tower.roll(request(*plain(5))).records
        except ThrowFailedError as exc:
            assert exc.reason in set(FailureReason) and exc.record is not None
        else:
            assert_faces_are_the_truth(record)


def failure(tower: Any, req: DiceRequest) -> ThrowFailedError:
    with pytest.raises(ThrowFailedError) as exc:
        tower.roll(req)
    assert not tower.shaker.pin.state
    assert exc.value.record is not None and exc.value.record.photo[:2] == b"\xff\xd8"
    assert tower.panel.led_attention.is_lit and not tower.panel.led_rolling.is_lit
    return exc.value


def test_a_die_that_left_the_tray_is_a_clear_failure(sim_tower: Any) -> None:
    tower = sim_tower(seed=9)
    tower.camera.inject("leaves_tray")
    exc = failure(tower, request(*plain(3)))
    assert exc.reason is FailureReason.DIE_MISSING and "4 of the 5 dice" in str(exc)
    assert [r.action for r in exc.record.retries] == ["reshake", "reshake"]


def test_an_empty_tray_fails_at_once(sim_tower: Any) -> None:
    tower = sim_tower(seed=10)
    for _ in range(5):
        tower.camera.inject("leaves_tray")
    exc = failure(tower, request(*plain(1)))
    assert exc.reason is FailureReason.TRAY_EMPTY and not exc.record.retries


def test_a_jam_is_thrown_again_then_fails(sim_tower: Any) -> None:
    tower = sim_tower(seed=11, cycle={"max_reshakes": 0})
    tower.camera.inject("jam")
    exc = failure(tower, request(*plain(2)))
    assert exc.reason is FailureReason.JAM
    tower = sim_tower(seed=11)
    tower.camera.inject("jam")
    (record,) = tower.roll(request(*plain(2))).records
    assert record.retries[0].reason.startswith("jam") and record.ok


def test_settle_times_out_on_the_camera_clock_without_sleeping(sim_tower: Any, monkeypatch: Any) -> None:
    tower = sim_tower(seed=12)
    monkeypatch.setattr(sim_module, "MOVING_FRAMES", (10**6, 10**6))  # dice that never stop
    t0, c0 = time.monotonic(), tower.camera.ticks()
    exc = failure(tower, request(*plain(2)))
    assert exc.reason is FailureReason.SETTLE_TIMEOUT
    timeout = tower.config.cycle.settle_timeout_s
    assert tower.camera.ticks() - c0 >= timeout
    assert time.monotonic() - t0 < timeout


def test_a_camera_that_does_not_come_back(sim_tower: Any, monkeypatch: Any) -> None:
    tower = sim_tower(seed=13)

    def gone() -> None:
        raise CameraDisconnectedError("unplugged")

    monkeypatch.setattr(tower.camera, "capture", gone)
    exc = failure_without_photo(tower)
    assert exc.reason is FailureReason.CAMERA_LOST
    assert [r.action for r in exc.record.retries] == ["reconnect"] * (tower.config.cycle.camera_retries + 1)


def failure_without_photo(tower: Any) -> ThrowFailedError:
    with pytest.raises(ThrowFailedError) as exc:
        tower.roll(request(*plain(1)))
    assert not tower.shaker.pin.state
    return exc.value


def test_a_camera_returning_garbage(sim_tower: Any, monkeypatch: Any) -> None:
    tower = sim_tower(seed=14)
    monkeypatch.setattr(tower.camera, "capture", lambda: np.zeros((3, 3), np.float64) * np.nan)
    exc = failure_without_photo(tower)
    assert exc.reason is FailureReason.CAMERA_GARBAGE and "unusable frames" in str(exc)
    assert pulses(tower) == 0  # it never got as far as shaking


def test_a_real_camera_without_calibration_refuses_to_roll(tmp_path: Path, frame_reader: Any) -> None:
    write_video(tmp_path / "v.avi", frames=40)
    try:
        camera = OpenCVCamera(str(tmp_path / "v.avi"))
    except CameraUnavailableError as exc:
        pytest.skip(f"this OpenCV build cannot play MJPG files: {exc}")
    cfg = sim_config(calibration={"dir": str(tmp_path / "cal")})
    with open_tower(cfg, camera=camera, reader=frame_reader) as tower:
        assert tower.calibration is None
        with pytest.raises(CalibrationError, match="not calibrated"):
            tower.roll(request(*plain(1)))
        assert pulses(tower) == 0
        cal = tower.calibrate(save=True)
        assert (tmp_path / "cal" / "opencv" / "reference.png").is_file()
    with open_tower(cfg, camera=OpenCVCamera(str(tmp_path / "v.avi")), reader=frame_reader) as tower:
        assert tower.calibration is not None and tower.calibration.size == cal.size == (160, 120)
        np.testing.assert_array_equal(tower.calibration.reference, cal.reference)
        with pytest.raises(CalibrationError, match="160x120"):
            tower._read(ThrowRecord(), np.zeros((50, 60, 3), np.uint8))


def test_state_listeners_and_status(sim_tower: Any) -> None:
    tower = sim_tower(seed=15)
    seen: list[str] = []
    tower.listeners.append(lambda state, detail: seen.append(state.value))
    tower.roll(request(*plain(1)))
    assert seen[:2] == ["shaking", "settling"] and seen[-1] == "idle"
    assert {"reading", "capturing"} <= set(seen)
    status = tower.status()
    assert (
        status["state"] == "idle" and status["calibrated"] and status["solenoid"] == {"gpio": 17, "on": False}
    )
    tower.close()
    tower.close()
    assert tower.closed and seen[-1] == "closed"
