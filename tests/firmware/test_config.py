"""The tower config: built-in defaults, a full file, and one clear error per kind of mistake."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from dicetower.firmware.cli import main
from dicetower.firmware.config import (
    DEFAULT_CONFIG,
    ConfigError,
    TrayDie,
    load_config,
    parse_config,
    tray_bgr,
)


def test_built_in_default_is_the_sim_tower_with_the_agreed_pins() -> None:
    cfg = load_config(None)
    assert cfg is DEFAULT_CONFIG
    assert (cfg.pins.solenoid, cfg.pins.button) == (17, 27)
    assert (cfg.pins.led_idle, cfg.pins.led_rolling, cfg.pins.led_attention, cfg.pins.tray_light) == (
        22,
        23,
        24,
        25,
    )
    assert cfg.pins.factory == "mock"
    assert cfg.camera.backend == "sim"
    assert cfg.dice.dice == (*(TrayDie("d6", "white"),) * 4, TrayDie("d6", "red", "wild"))
    assert cfg.dice.describe() == "4 white d6, 1 red d6 (wild)"


FULL = """
[pins]
factory = "lgpio"
solenoid = 5
button = 6
led_idle = 13
led_rolling = 19
led_attention = 26
tray_light = false

[shaker]
max_on_ms = 120
shake_on_ms = 100

[camera]
backend = "opencv"
device = "/dev/video2"

[dice]
plain = ["3 white d6", "blue d10"]
wild = "red d6"
tens = "green d10t"

[cycle]
max_taps = 1

[roll]
default = "2d6"
"""


def test_a_full_file_reads_back(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    path.write_text(FULL)
    cfg = load_config(path)
    assert cfg.pins.factory == "lgpio" and cfg.pins.solenoid == 5 and cfg.pins.tray_light is None
    assert cfg.shaker.max_on_ms == 120.0 and cfg.shaker.min_off_ms == 40.0
    assert cfg.camera.device == "/dev/video2"
    assert cfg.dice.kinds() == {"d6": 4, "d10": 1, "d10t": 1}
    assert cfg.dice.role_die("tens") == TrayDie("d10t", "green", "tens")
    assert cfg.cycle.max_taps == 1 and cfg.roll.default == "2d6"
    assert cfg.source == str(path)


@pytest.mark.parametrize(
    ("doc", "names"),
    [
        ({"pins": {"solenod": 17}}, ["[pins] solenod", "unknown key", "solenoid"]),
        ({"pinz": {}}, ["[pinz]", "unknown section", "pins, shaker"]),
        ({"pins": {"solenoid": 40}}, ["[pins] solenoid = 40", "2..27"]),
        ({"pins": {"solenoid": True}}, ["[pins] solenoid = True", "2..27"]),
        ({"pins": {"button": 17}}, ["button and solenoid are both GPIO17"]),
        ({"pins": {"factory": "wiringpi"}}, ["[pins] factory", "mock, default, lgpio"]),
        ({"camera": {"backend": "webcam"}}, ["[camera] backend", "sim, replay, opencv, picamera2"]),
        ({"camera": {"backend": "replay"}}, ["replay = FOLDER"]),
        ({"shaker": {"max_duty": 0.9}}, ["[shaker] max_duty = 0.9", "0.01..0.5"]),
        ({"shaker": {"tap_on_ms": 400}}, ["tap_on_ms = 400 is over max_on_ms = 150"]),
        ({"sim": {"faults": ["gremlins"]}}, ["[sim] faults", "cocked, touching"]),
        ({"dice": {"wild": "crimson d6"}}, ["colour 'crimson'", "red, orange"]),
        (
            {"dice": {"plain": "4 white d7"}},
            ["kind 'd7'", "the tower reads d6, d10, d10t, d20, and d8, d12 once taught"],
        ),
        ({"dice": {"plain": "2 white d12"}}, ["kind 'd12'", "read only once taught", "set [reader] taught"]),
        ({"dice": {"plain": "white d4"}}, ["kind 'd4'", "at its corners", "taught or not"]),
        ({"reader": {"taught": 3}}, ["[reader] taught = 3", "a string"]),
        ({"reader": {"model": "x"}}, ["[reader] model", "unknown key", "allowed: taught"]),
        ({"dice": {"plain": "lots of dice"}}, ["'[COUNT] COLOUR KIND'"]),
        ({"dice": {"sidekick": "red d6"}}, ["[dice] sidekick", "plain, wild, tens, units"]),
        ({"dice": {"plain": "4 red d6", "wild": "red d6"}}, ["another red d6", "colour of its own"]),
        ({"dice": {"wild": "2 red d6"}}, ["a wild die is one die"]),
        ({"dice": {}}, ["at least one die"]),
        ({"camera": {"tray_colour": "blue"}}, ["[camera] tray_colour", "#RRGGBB"]),
        ({"camera": {"tray_colour": "#12345g"}}, ["[camera] tray_colour"]),
    ],
)
def test_each_mistake_names_the_key_and_what_is_allowed(doc: dict, names: list[str]) -> None:
    with pytest.raises(ConfigError) as exc:
        parse_config(doc, "t.toml")
    message = str(exc.value)
    assert message.startswith("t.toml: ")
    for name in names:
        assert name in message


def test_broken_files(tmp_path: Path) -> None:
    bad = tmp_path / "bad.toml"
    bad.write_text("[pins\nsolenoid = 17\n")
    with pytest.raises(ConfigError, match="not valid TOML"):
        load_config(bad)
    bad.write_bytes(b"\xff\xfe[pins]")
    with pytest.raises(ConfigError, match="not UTF-8"):
        load_config(bad)
    with pytest.raises(ConfigError, match="no such config file"):
        load_config(tmp_path / "missing.toml")
    bad.write_text("x = 1\n" * 20000)
    with pytest.raises(ConfigError, match="at most"):
        load_config(bad)


def test_config_check_command(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    good = tmp_path / "good.toml"
    good.write_text(FULL)
    assert main(["tower", "config", "--check", str(good)]) == 0
    assert "ok (opencv camera, lgpio pins" in capsys.readouterr().out
    bad = tmp_path / "bad.toml"
    bad.write_text("[shaker]\nmax_on_ms = -5\n")
    assert main(["tower", "config", "--check", str(bad)]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [f"dicetower: error: {bad}: [shaker] max_on_ms = -5: must be a number 1..1000"]


def test_printed_config_parses_back_to_the_same(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "c.toml"
    path.write_text(FULL)
    assert main(["tower", "config", "--config", str(path)]) == 0
    printed = tmp_path / "printed.toml"
    printed.write_text(capsys.readouterr().out)
    again = load_config(printed)
    original = load_config(path)
    assert again.with_changes(source="") == original.with_changes(source="")


def test_a_tray_colour_is_neutral_or_rgb_and_reaches_the_reader() -> None:
    from dicetower.firmware.tower import reader_for_tray

    assert parse_config({}, "t.toml").camera.tray_colour == ""
    assert parse_config({"camera": {"tray_colour": "neutral"}}, "t.toml").camera.tray_colour == "neutral"
    green = parse_config({"camera": {"tray_colour": "#1E5020"}}, "t.toml").camera.tray_colour
    assert green == "#1e5020" and tray_bgr(green) == (0x20, 0x50, 0x1E) and tray_bgr("neutral") is None
    dice = [TrayDie("d6", "white"), TrayDie("d6", "red", "wild")]
    assert not reader_for_tray(dice).white_balance
    balanced = reader_for_tray(dice, green)
    assert balanced.white_balance and balanced.tray_colour == (0x20, 0x50, 0x1E)


def test_camera_names_are_checked_against_the_backends_own_registry(monkeypatch: pytest.MonkeyPatch) -> None:
    from dicetower.firmware.cameras import BACKENDS

    with pytest.raises(ConfigError, match="one of sim, replay, opencv, picamera2"):
        parse_config({"camera": {"backend": "usb-hub-cam"}})
    monkeypatch.setitem(BACKENDS, "usb-hub-cam", "dicetower.firmware.cameras.opencv:OpenCVCamera")
    assert parse_config({"camera": {"backend": "usb-hub-cam"}}).camera.backend == "usb-hub-cam"


def test_checking_camera_names_imports_no_backend() -> None:
    code = (
        "import sys\nfrom dicetower.firmware.config import parse_config\n"
        "for name in ('sim', 'replay', 'opencv', 'picamera2'):\n"
        "    try:\n        parse_config({'camera': {'backend': name, 'replay': 'x'}})\n"
        "    except Exception as exc:\n        raise SystemExit(repr(exc))\n"
        "heavy = ('cv2', 'numpy', 'picamera2', 'dicetower.firmware.cameras.sim')\n"
        "print(sorted(m for m in heavy if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    assert out.stdout.strip() == "[]"


# -- what use needs is checked too, and every problem is reported


@pytest.mark.parametrize(
    ("doc", "names"),
    [
        ({"camera": {"tray_colour": "#1_2_34"}}, ["[camera] tray_colour = '#1_2_34'", "#RRGGBB"]),
        ({"camera": {"tray_colour": "# 12345"}}, ["[camera] tray_colour"]),
        (
            {"roll": {"default": "4d6kh3+"}},
            ["[roll] default = '4d6kh3+'", "expected a number, dice or '('", "at column 8"],
        ),
        ({"roll": {"default": "1d20"}}, ["[roll] default = '1d20'", "needs a d20", "holds 5 d6"]),
        (
            {"shaker": {"max_duty": 0.01, "duty_window_ms": 1000}},
            ["[shaker] max_on_ms = 150", "does not fit in the duty budget", "= 10 ms"],
        ),
        (
            {"shaker": {"shake_count": 50, "max_duty": 0.1, "duty_window_ms": 20000}},
            ["[shaker] shake_count = 50", "50 x 80 ms", "every shake would be cut short"],
        ),
        (
            {"shaker": {"max_on_ms": 5, "tap_on_ms": 2, "shake_on_ms": 4}},
            ["[shaker] max_on_ms = 5", "at least 15"],
        ),
    ],
)
def test_what_use_needs_is_checked_with_the_key(doc: dict, names: list[str]) -> None:
    with pytest.raises(ConfigError) as exc:
        parse_config(doc, "t.toml")
    message = str(exc.value)
    assert message.startswith("t.toml: ")
    for name in names:
        assert name in message, message


def test_a_checked_config_builds_its_shaker_and_tray_colour() -> None:
    """What --check lets through is what use takes: the pattern's limits and the colour's BGR."""
    from dicetower.firmware.pattern import ShakePattern

    shaker = {"max_on_ms": 15, "shake_on_ms": 15, "tap_on_ms": 10}
    cfg = parse_config({"camera": {"tray_colour": "#A0b1C2"}, "shaker": shaker}, "t.toml")
    assert tray_bgr(cfg.camera.tray_colour) == (0xC2, 0xB1, 0xA0)
    assert ShakePattern.from_config(cfg.shaker).limits.max_on_s == 0.015


MANY_PROBLEMS = """
[pins]
button = 17
led_idle = 17

[shaker]
max_duty = 0.9

[camera]
tray_colour = "#1_2_34"

[dice]
wild = "crimson d6"
plain = "4 white d7"

[roll]
default = "4d6kh3+"
"""


def test_check_reports_every_problem_and_use_fails_on_the_first(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "many.toml"
    path.write_text(MANY_PROBLEMS)
    assert main(["tower", "config", "--check", str(path)]) == 1
    err = capsys.readouterr().err.splitlines()
    assert all(line.startswith(f"dicetower: error: {path}: [") for line in err), err
    for where in (
        "[pins] button = 17: button and solenoid are both GPIO17",
        "[pins] led_idle = 17: led_idle and solenoid are both GPIO17",
        "[shaker] max_duty = 0.9",
        "[camera] tray_colour = '#1_2_34'",
        "[dice] wild = 'crimson d6'",
        "[dice] plain = '4 white d7'",
    ):
        assert sum(where in line for line in err) == 1, (where, err)
    assert len(err) == 6  # the roll default is not tried on a tray that did not parse
    with pytest.raises(ConfigError) as exc:
        load_config(path)
    assert str(exc.value) == err[0].removeprefix("dicetower: error: ")
    assert len(exc.value.problems) == 6


def test_check_names_a_bad_roll_default_with_its_position(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "roll.toml"
    path.write_text('[roll]\ndefault = "4d6kh3+"\n\n[camera]\ntray_colour = "#12345z"\n')
    assert main(["tower", "config", "--check", str(path)]) == 1
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 2
    assert err[1] == (
        f"dicetower: error: {path}: [roll] default = '4d6kh3+': expression ends too soon:"
        " expected a number, dice or '(' at column 8"
    )
