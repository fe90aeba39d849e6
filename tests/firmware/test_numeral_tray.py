"""A tray that holds numeral dice: the sim draws them, the tower reads them with the numeral reader."""

from __future__ import annotations

from dicetower.firmware.cameras.sim import SimCamera
from dicetower.firmware.clock import VirtualClock
from dicetower.firmware.config import DiceSet, TrayDie
from dicetower.firmware.tower import open_tower, reader_for_tray
from dicetower.rules.source import DiceRequest, DieSlot, Role
from dicetower.vision.reading import ReadStatus
from tower_helpers import sim_config


def _iou(a, b) -> float:
    ix = max(0.0, min(a[0] + a[2], b[0] + b[2]) - max(a[0], b[0]))
    iy = max(0.0, min(a[1] + a[3], b[1] + b[3]) - max(a[1], b[1]))
    return ix * iy / (a[2] * a[3] + b[2] * b[3] - ix * iy)


def test_a_pip_d6_tray_reads_without_the_numeral_reader() -> None:
    assert reader_for_tray([TrayDie("d6", "white"), TrayDie("d6", "red", "wild")]).numerals is None
    assert reader_for_tray([TrayDie("d6", "white"), TrayDie("d20", "blue")]).numerals is not None


def test_the_tower_reader_tells_the_sim_tray_s_kinds_apart() -> None:
    tray = [TrayDie("d20", "blue"), TrayDie("d10t", "red", "tens"), TrayDie("d6", "white")]
    sim = SimCamera(tray, seed=2, clock=VirtualClock())
    with sim.empty_tray():
        reference = sim.read_frame()
    reader = reader_for_tray(tray)
    kinds_right = total = faces_wrong = 0
    for _ in range(4):
        sim.throw()
        for _ in range(8):
            frame = sim.read_frame()
        reading = reader.read(frame, reference)
        for label in sim.truth:
            total += 1
            match = [d for d in reading.dice if _iou(d.box, label.box) > 0.5]
            if len(match) == 1 and match[0].kind == label.die:
                kinds_right += 1
                die = match[0]
                faces_wrong += die.status is ReadStatus.READ and die.face != label.face
    assert kinds_right >= total - 1 and faces_wrong == 0


def test_the_sim_tower_rolls_a_d20_beside_d6_and_reads_what_landed() -> None:
    tray = DiceSet((TrayDie("d20", "blue"), TrayDie("d6", "white"), TrayDie("d6", "white")))
    tower = open_tower(sim_config(5, dice=tray))
    slots = (DieSlot(0, "d20", Role.PLAIN), DieSlot(1, "d6", Role.PLAIN))
    try:
        for _ in range(3):
            answer = tower.roll(DiceRequest(slots=slots))
            truth = tower.camera.truth
            assert answer.faces[0] == next(label.face for label in truth if label.die == "d20")
            assert answer.faces[1] in {label.face for label in truth if label.die == "d6"}
            assert not tower.shaker.pin.state
    finally:
        tower.close()


def test_the_sim_tower_rolls_a_percentile_pair_and_tells_tens_from_units() -> None:
    tray = DiceSet((TrayDie("d10t", "red", "tens"), TrayDie("d10", "white", "units")))
    tower = open_tower(sim_config(11, dice=tray))
    slots = (DieSlot(0, "d10t", Role.TENS), DieSlot(1, "d10", Role.UNITS))
    try:
        for _ in range(4):
            answer = tower.roll(DiceRequest(slots=slots))
            landed = {label.die: label.face for label in tower.camera.truth}
            assert list(answer.faces) == [landed["d10t"], landed["d10"]]
            assert not tower.shaker.pin.state
    finally:
        tower.close()
