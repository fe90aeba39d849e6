"""One contract for every camera backend, then the simulated camera's faults one by one."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import cv2
import numpy as np
import pytest
from dicetower.firmware.cameras import BACKENDS, CameraBackend, camera_class, open_camera
from dicetower.firmware.cameras.opencv import OpenCVCamera
from dicetower.firmware.cameras.replay import ReplayCamera
from dicetower.firmware.cameras.sim import SimCamera
from dicetower.firmware.clock import VirtualClock, VirtualClockFactory
from dicetower.firmware.config import DEFAULT_CONFIG, TrayDie
from dicetower.firmware.errors import (
    CalibrationError,
    CameraDisconnectedError,
    CameraFrameError,
    CameraUnavailableError,
)
from dicetower.firmware.shaker import Shaker
from tower_helpers import write_replay_folder, write_video


@pytest.fixture(params=["sim", "replay", "opencv", "picamera2"])
def backend(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[CameraBackend]:
    name = request.param
    if name == "sim":
        cam: CameraBackend = SimCamera(seed=1, clock=VirtualClock())
    elif name == "replay":
        write_replay_folder(tmp_path / "rec", n=2)
        cam = ReplayCamera(tmp_path / "rec", clock=VirtualClock())
        cam.advance()
    elif name == "opencv":
        write_video(tmp_path / "v.avi")
        try:
            cam = OpenCVCamera(str(tmp_path / "v.avi"))
        except CameraUnavailableError as exc:
            pytest.skip(f"this OpenCV build cannot play MJPG files: {exc}")
    else:
        try:
            cam = camera_class("picamera2")()
        except CameraUnavailableError as exc:
            pytest.skip(f"no Raspberry Pi camera here: {exc}")
    with cam:
        yield cam


def test_every_backend_gives_checked_bgr_frames_and_closes_once(backend: CameraBackend) -> None:
    frame = backend.read_frame()
    assert frame.dtype == np.uint8 and frame.ndim == 3 and frame.shape[2] == 3
    assert isinstance(backend.lock_settings(), dict)
    t0 = backend.ticks()
    backend.wait(0.01)
    assert backend.ticks_diff(backend.ticks(), t0) >= 0
    backend.close()
    backend.close()
    assert backend.closed
    with pytest.raises(CameraUnavailableError):
        backend.read_frame()


def test_registry_names_every_backend_and_refuses_others() -> None:
    assert set(BACKENDS) == {"sim", "replay", "opencv", "picamera2"}
    assert camera_class("sim") is SimCamera
    with pytest.raises(CameraUnavailableError, match="unknown camera backend 'webcam'"):
        camera_class("webcam")


def test_a_missing_camera_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(CameraUnavailableError, match="cannot open camera"):
        OpenCVCamera(str(tmp_path / "no-such-video0"))
    with pytest.raises(CameraUnavailableError, match=r"no manifest\.jsonl"):
        ReplayCamera(tmp_path)


class GarbageCamera(CameraBackend):
    name = "garbage"

    def __init__(self, frame: Any) -> None:
        super().__init__()
        self.frame = frame

    def capture(self) -> Any:
        return self.frame


@pytest.mark.parametrize(
    "garbage", [None, "jpeg", np.zeros((0, 5, 3), np.uint8), np.zeros((4, 4, 7), np.uint8)]
)
def test_garbage_frames_are_camera_frame_errors(garbage: Any) -> None:
    with pytest.raises(CameraFrameError):
        GarbageCamera(garbage).read_frame()


def test_every_registered_backend_builds_itself_from_the_config() -> None:
    for name in BACKENDS:
        cls = camera_class(name)
        assert "from_config" in vars(cls), f"{name}: {cls.__name__} does not override from_config"
    with pytest.raises(NotImplementedError, match="GarbageCamera cannot be built from the config"):
        GarbageCamera.from_config(DEFAULT_CONFIG)


def test_open_camera_builds_the_named_backend_from_the_config() -> None:
    clock = VirtualClock()
    cfg = DEFAULT_CONFIG.with_changes(sim=replace(DEFAULT_CONFIG.sim, seed=2))
    with open_camera(cfg, clock=clock) as cam:
        assert isinstance(cam, SimCamera) and cam.clock is clock and cam.seed == 2


# -- the simulated camera


def settled(sim: SimCamera, frames: int = 8) -> np.ndarray:
    for _ in range(frames):
        frame = sim.read_frame()
    return frame


def test_sim_knows_the_truth_and_a_shake_on_the_pin_rethrows() -> None:
    # one virtual clock for the shaker, its pin and the camera: a tap is told from a shake by its
    # on-time, which real time stretches under load
    clock = VirtualClock()
    sim = SimCamera(seed=3, clock=clock)
    first = settled(sim)
    assert len(sim.truth) == 5 and all(d.die == "d6" and 1 <= d.face <= 6 for d in sim.truth)
    assert [die.colour for die, _ in sim.truth_dice] == ["red", "white", "white", "white", "white"]
    before = sim.truth
    with Shaker(17, pin_factory=VirtualClockFactory(clock), clock=clock) as shaker:
        sim.watch_solenoid(shaker.pin)
        shaker.shake(count=3, on_s=0.03, off_s=0.03)
        moving = sim.read_frame()
        assert not np.array_equal(moving, first)
        settled(sim)
        assert sim.truth != before
        sim.inject("cocked")
        settled(sim)
        assert [d.cocked for d in sim.truth].count(True) == 1
        shaker.tap(0.02)
        settled(sim)
        assert not any(d.cocked for d in sim.truth)


def test_sim_frame_faults() -> None:
    sim = SimCamera(seed=5, clock=VirtualClock())
    settled(sim)
    sim.inject("black")
    assert sim.read_frame().max() == 0
    before = sim.read_frame()
    sim.inject("frozen")
    assert np.array_equal(sim.read_frame(), before)
    assert not np.array_equal(sim.read_frame(), before)  # live frames differ by their noise
    sim.inject("blurred")
    blurred = sim.read_frame()
    sharp = sim.read_frame()
    lap = [cv2.Laplacian(cv2.cvtColor(f, cv2.COLOR_BGR2GRAY), cv2.CV_64F).var() for f in (blurred, sharp)]
    assert lap[0] < lap[1] / 2
    sim.inject("disconnect")
    with pytest.raises(CameraDisconnectedError):
        sim.read_frame()
    for _ in range(3):
        try:
            sim.read_frame()
            break
        except CameraDisconnectedError:
            continue
    assert sim.read_frame().shape == (480, 640, 3)


def test_sim_die_leaves_the_tray_until_returned_and_jam_keeps_faces() -> None:
    sim = SimCamera(seed=6, clock=VirtualClock())
    settled(sim)
    sim.inject("leaves_tray")
    settled(sim)
    assert len(sim.truth) == 4
    sim.throw()
    settled(sim)
    assert len(sim.truth) == 4
    sim.return_dice()
    settled(sim)
    assert len(sim.truth) == 5
    faces = list(sim.faces)
    sim.inject("jam")
    sim.throw()
    assert sim.faces == faces


def test_sim_refuses_what_it_cannot_draw() -> None:
    with pytest.raises(CameraUnavailableError, match="draws d6, d10, d10t, d20 only"):
        SimCamera([TrayDie("d8", "white")])
    with pytest.raises(CameraUnavailableError, match="one body colour"):
        SimCamera([TrayDie("d6", "white"), TrayDie("d6", "blue")])
    with pytest.raises(CameraUnavailableError, match="the tray has translucent"):
        SimCamera([TrayDie("d20", "translucent")])


def test_sim_draws_numeral_dice_in_their_own_colours_with_fair_faces() -> None:
    tray = [TrayDie("d20", "blue"), TrayDie("d10", "white", "units"), TrayDie("d10t", "red", "tens")]
    tray.append(TrayDie("d6", "green"))
    sim = SimCamera(tray, seed=4, clock=VirtualClock())
    frame = settled(sim)
    assert [(die.kind, die.colour) for die, _ in sim.truth_dice] == [(d.kind, d.colour) for d in tray]
    assert [label.die for label in sim.truth] == ["d20", "d10", "d10t", "d6"]
    with sim.empty_tray():
        empty = sim.read_frame()
    for label in sim.truth:  # each die is drawn where its label says, on the empty tray elsewhere
        x, y, w, h = (round(v) for v in label.box)
        assert np.abs(frame[y : y + h, x : x + w].astype(int) - empty[y : y + h, x : x + w]).mean() > 10
    seen: dict[str, set[int]] = {"d20": set(), "d10": set(), "d10t": set(), "d6": set()}
    for _ in range(60):
        sim.throw()
        for die, face in zip(sim.dice, sim.faces, strict=True):
            seen[die.kind].add(face)
    assert seen["d10t"] <= set(range(0, 100, 10)) and len(seen["d10t"]) >= 8
    assert seen["d10"] <= set(range(10)) and seen["d20"] <= set(range(1, 21)) and len(seen["d20"]) >= 14
    assert seen["d6"] <= set(range(1, 7))


def test_sim_faults_at_a_rate_are_seeded() -> None:
    def run() -> list[str]:
        sim = SimCamera(seed=9, fault_rate=0.5, clock=VirtualClock())
        for _ in range(40):
            sim.throw()
            sim.return_dice()
        return sim.injected

    first = run()
    assert first == run() and 10 < len(first) < 30


# -- replay


def test_replay_plays_the_folder_in_order_and_knows_each_truth(tmp_path: Path) -> None:
    truths = write_replay_folder(tmp_path / "rec", n=3)
    clock = VirtualClock()
    cam = ReplayCamera(tmp_path / "rec", clock=clock)
    with cam.empty_tray():
        assert cam.truth == ()
    with Shaker(17, pin_factory=VirtualClockFactory(clock), clock=clock) as shaker:
        cam.watch_solenoid(shaker.pin)
        for truth in truths:
            shaker.shake(count=2, on_s=0.02, off_s=0.02)
            cam.read_frame()
            assert cam.truth == truth
            shaker.tap(0.02)  # a photo's dice cannot fall flat
            cam.read_frame()
            assert cam.truth == truth
        shaker.shake(count=2, on_s=0.02, off_s=0.02)
        with pytest.raises(CameraUnavailableError, match="all 3 photos"):
            cam.read_frame()


def test_replay_without_a_reference_cannot_calibrate(tmp_path: Path) -> None:
    (tmp_path / "images").mkdir()
    cv2.imwrite(str(tmp_path / "images" / "a.png"), np.full((64, 64, 3), 100, np.uint8))
    (tmp_path / "manifest.jsonl").write_text('{"image": "images/a.png", "dice": []}\n')
    cam = ReplayCamera(tmp_path)
    with pytest.raises(CalibrationError, match="reference"), cam.empty_tray():
        pass
    (tmp_path / "manifest.jsonl").write_text('{"image": "images/missing.png", "dice": []}\n')
    cam = ReplayCamera(tmp_path)
    cam.advance()
    with pytest.raises(CameraFrameError):
        cam.read_frame()
