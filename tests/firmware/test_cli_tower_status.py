"""``tower status`` prints readable lines: no Python dict, no empty ``detail:``, nothing raw from outside."""

from __future__ import annotations

import pytest
from dicetower.firmware.cli import main
from dicetower.firmware.cli.tower_status import status_lines

HOSTILE = "\x1b]0;pwned\x07\x9b31m\u202eevil"


def test_the_sim_towers_status_reads_as_lines(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["tower", "status", "--tower", "sim"]) == 0
    out = capsys.readouterr().out
    lines = out.splitlines()
    assert not [line for line in lines if any(c in line for c in "{}[]'")], out  # no Python reprs
    assert not [line for line in lines if line.rstrip().endswith(":")], out  # no empty value
    assert "detail" not in out  # nothing to say beyond the state: no line for it
    assert [line.split(":", 1)[0].strip() for line in lines] == [
        "state",
        "camera",
        "pins",
        "solenoid",
        "dice",
        "calibrated",
        "throws",
        "config",
        "taught",
    ]
    assert "solenoid: GPIO17, off" in out and "calibrated: yes, at 640x480" in out
    assert "state: idle" in out and "dice: 4 white d6, 1 red d6 (wild)" in out


def _status(**changes: object) -> dict:
    status = {
        "state": "failed",
        "detail": "",
        "camera": "opencv",
        "pins": "lgpio",
        "solenoid": {"gpio": 17, "on": True},
        "dice": "4 white d6",
        "calibrated": False,
        "calibration_size": None,
        "throws": 3,
        "config": "/etc/dicetower/config.toml",
        "taught": None,
    }
    return {**status, **changes}


def test_a_detail_follows_its_state_and_an_uncalibrated_camera_says_what_to_do() -> None:
    lines = status_lines(_status(detail="camera gone: no frame in 4 s"))
    assert lines[0].strip() == "state: failed: camera gone: no frame in 4 s"
    assert "solenoid: GPIO17, on" in "\n".join(lines)
    assert "calibrated: no (dicetower tower calibrate, with the tray empty)" in "\n".join(lines)


def test_text_from_outside_is_escaped() -> None:
    taught = {
        "model": f"/models/m{HOSTILE}",
        "dice": [f"white d6{HOSTILE}"],
        "general": [f"red{HOSTILE} d6"],
        "drift": {"recent": 50, "sure": 20, "held_back_right_rate": 0.97},
        "drifting": True,
        "message": f"less sure{HOSTILE}",
    }
    out = "\n".join(
        status_lines(
            _status(
                detail=f"camera {HOSTILE}",
                camera=f"cam{HOSTILE}",
                dice=f"4 {HOSTILE} d6",
                config=f"/etc/{HOSTILE}.toml",
                taught=taught,
            )
        )
    )
    for raw in ("\x1b", "\x07", "\x9b", "\u202e"):
        assert raw not in out
    assert out.count("\\x1b") == 8 and "read surely: 20 of the last 50 taught dice" in out
