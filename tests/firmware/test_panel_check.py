"""``tower test-panel``: each light alone in turn, the button waited for, the solenoid's pin never claimed."""

from __future__ import annotations

import pytest
from dicetower.firmware.cli import main
from dicetower.firmware.clock import RealClock
from dicetower.firmware.config import DEFAULT_CONFIG
from dicetower.firmware.panel import Panel
from dicetower.firmware.panel_check import LIGHTS, check_panel
from gpiozero.pins.mock import MockFactory

PINS = DEFAULT_CONFIG.pins
LIGHT_KEYS = [key for _attr, _name, key in LIGHTS]


class SnapshotClock(RealClock):
    """Real time; each hold records which lights are on while it lasts."""

    def __init__(self, panel_pins: dict[str, object]) -> None:
        super().__init__()
        self.panel_pins = panel_pins
        self.holds: list[list[str]] = []

    def sleep(self, seconds: float) -> None:
        self.holds.append([key for key, pin in self.panel_pins.items() if pin.state])  # type: ignore[attr-defined]
        super().sleep(seconds)


def _claimed(factory: MockFactory) -> set[str]:
    return {info.name for info in factory.pins}


def test_each_light_is_on_alone_in_turn_and_a_press_is_seen() -> None:
    factory = MockFactory()
    lines: list[str] = []
    with Panel(PINS, pin_factory=factory) as panel:
        panel.led_idle.off()
        clock = SnapshotClock({key: getattr(panel, attr).pin for attr, _name, key in LIGHTS})

        def say(line: str) -> None:
            lines.append(line)
            if line.startswith("press the button"):
                panel.button.pin.drive_low()  # a person presses (pull-up: pressed is low)

        result = check_panel(panel, PINS, clock=clock, hold_s=0.01, wait_s=5, say=say)
        assert not any(getattr(panel, attr).is_lit for attr, _name, _key in LIGHTS)  # all off after
    assert clock.holds == [[key] for key in LIGHT_KEYS]
    assert result.lit == LIGHT_KEYS and result.pressed and result.waited_s < 5
    assert lines[0] == f"  green idle LED (GPIO{PINS.led_idle}): on for 0.01 s"
    assert lines[-1] == f"press the button (GPIO{PINS.button}) within 5 s"
    # the panel's pins only: the solenoid's is never claimed, so nothing here can drive it
    assert f"GPIO{PINS.solenoid}" not in _claimed(factory)
    assert f"GPIO{PINS.led_idle}" in _claimed(factory)


def test_no_press_within_the_wait_is_reported_and_every_light_ends_off() -> None:
    factory = MockFactory()
    with Panel(PINS, pin_factory=factory) as panel:
        result = check_panel(panel, PINS, clock=RealClock(), hold_s=0, wait_s=0.05, say=lambda _: None)
        assert not result.pressed and result.waited_s >= 0.04
        assert not any(getattr(panel, attr).is_lit for attr, _name, _key in LIGHTS[1:])


def test_a_button_that_reads_pressed_before_the_prompt_is_stuck_not_a_pass() -> None:
    factory = MockFactory()
    lines: list[str] = []
    with Panel(PINS, pin_factory=factory) as panel:
        panel.button.pin.drive_low()  # shorted to ground
        result = check_panel(panel, PINS, clock=RealClock(), hold_s=0, wait_s=5, say=lines.append)
    assert result.stuck and not result.pressed and result.lit == LIGHT_KEYS
    assert not any(line.startswith("press the button") for line in lines)


@pytest.mark.parametrize(("hold", "wait"), [(-1, 5), (61, 5), (1, 0), (1, 601), (float("nan"), 5)])
def test_bad_hold_or_wait_is_refused_before_any_light(hold: float, wait: float) -> None:
    factory = MockFactory()
    with Panel(PINS, pin_factory=factory) as panel:
        panel.led_idle.off()
        with pytest.raises(ValueError, match=r"hold must be|wait must be"):
            check_panel(panel, PINS, clock=RealClock(), hold_s=hold, wait_s=wait, say=lambda _: None)
        assert panel.led_rolling.pin.states[-1].state is False and len(panel.led_rolling.pin.states) == 1


def test_the_command_passes_with_a_press_and_fails_without(capsys: pytest.CaptureFixture[str]) -> None:
    args = ["tower", "test-panel", "--tower", "sim", "--hold", "0"]
    assert main([*args, "--autopress"]) == 0
    out, err = capsys.readouterr()
    assert f"the solenoid (GPIO{PINS.solenoid}) is not driven" in out
    assert out.count(": on for 0 s") == len(LIGHTS)
    assert f"panel ok: {len(LIGHTS)} light(s) lit in turn; the button (GPIO{PINS.button}) pressed" in out
    assert main([*args, "--wait", "0.05"]) == 1
    out, err = capsys.readouterr()
    assert err.startswith(f"dicetower: error: {len(LIGHTS)} light(s) lit in turn, but the button")
    assert err.count("\n") == 1


def test_the_command_refuses_a_bad_wait_in_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["tower", "test-panel", "--tower", "sim", "--wait", "0"]) == 1
    assert capsys.readouterr().err == (
        "dicetower: error: wait must be more than 0 and at most 600 seconds, got 0\n"
    )
