"""``dicetower roll/check --tower``, ``dicetower tower ...``, ``dicetower record``: output, files, errors."""

from __future__ import annotations

import json
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from dicetower.firmware.cli import main
from dicetower.vision.manifest import read_manifest


@pytest.fixture(autouse=True)
def state_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Throws saved without ``--save`` go under XDG_STATE_HOME; keep them in the test's folder."""
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    return tmp_path / "state" / "dicetower" / "throws"


def test_roll_on_the_sim_tower_prints_reading_rule_result_and_photo(
    capsys: pytest.CaptureFixture[str], state_dir: Path
) -> None:
    assert main(["roll", "4d6kh3+2", "--tower", "sim", "--sim-seed", "3"]) == 0
    out = capsys.readouterr().out
    lines = out.splitlines()
    assert lines[0].startswith("4d6kh3 (") and "+ 2 = " in lines[0]
    assert lines[1] == "tower (sim camera): 1 throw(s)"
    assert lines[2].startswith("throw 1: initial throw: read ")
    assert sum(1 for line in lines if " die at (" in line) == 4
    photo = Path(out.split("photo: ")[1].split()[0])
    assert photo.parent == state_dir and photo.read_bytes()[:2] == b"\xff\xd8"
    record = json.loads(photo.with_suffix(".json").read_text())
    assert record["schema"] == "dicetower.throw/1" and len(record["answers"]) == 4


def test_roll_json_and_save_dir(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert (
        main(["roll", "2d6", "--tower", "sim", "--sim-seed", "4", "--json", "--save", str(tmp_path / "s")])
        == 0
    )
    doc = json.loads(capsys.readouterr().out)
    assert doc["schema"] == "dicetower.roll/1"
    (throw,) = doc["tower"]["throws"]
    assert [a["face"] for a in throw["answers"]] == [d["value"] for d in doc["dice"]]
    assert (tmp_path / "s" / throw["photo"]).is_file()


def test_check_on_the_sim_tower(capsys: pytest.CaptureFixture[str]) -> None:
    args = [
        "check",
        "runic-flux",
        "skill",
        "--level",
        "2",
        "--stat",
        "1",
        "--difficulty",
        "9",
        "--tower",
        "sim",
    ]
    assert main([*args, "--sim-seed", "5"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("runic-flux skill") and "wild die (d6, wild): red die at" in out


def test_without_tower_the_rng_stays_and_sources_do_not_mix(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["roll", "3d6", "--seed", "1"]) == 0
    assert "tower" not in capsys.readouterr().out
    assert main(["roll", "3d6", "--seed", "1", "--tower", "sim"]) == 1
    assert "--seed and --tower" in capsys.readouterr().err


def test_tower_config_without_a_file_says_what_to_do(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    if Path("/etc/dicetower/config.toml").exists():
        pytest.skip("this machine has a tower config")
    assert main(["roll", "1d6", "--tower", "config"]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--tower sim" in err


def test_a_kind_the_tray_lacks_is_one_clear_error(
    capsys: pytest.CaptureFixture[str], state_dir: Path
) -> None:
    assert main(["roll", "1d20", "--tower", "sim"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("dicetower: error: the tower cannot roll this: the roll needs a d20")
    assert not state_dir.exists()  # nothing was thrown, nothing written


def test_a_broken_config_is_one_clear_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "c.toml"
    bad.write_text('[camera]\nbackend = "sim"\nfps = 30\n')
    assert main(["roll", "1d6", "--tower", "config", "--config", str(bad)]) == 1
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1 and "[camera] fps: unknown key" in err[0]


def test_a_missing_camera_is_one_clear_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cfg = tmp_path / "c.toml"
    cfg.write_text(f'[camera]\nbackend = "opencv"\ndevice = "{tmp_path / "video9"}"\n')
    assert main(["tower", "status", "--config", str(cfg)]) == 1
    assert "cannot open camera" in capsys.readouterr().err


def test_a_failed_throw_shows_its_last_photo(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    cfg = tmp_path / "c.toml"
    cfg.write_text('[sim]\nseed = 2\nfault_rate = 1.0\nfaults = ["leaves_tray"]\n')
    assert main(["roll", "5d6", "--tower", "sim", "--config", str(cfg), "--save", str(tmp_path / "s")]) == 1
    err = capsys.readouterr().err
    assert "die missing" in err and "last photo: " in err
    photo = Path(err.split("last photo: ")[1].split()[0])
    assert photo.is_file()
    assert not list((tmp_path / "s").glob(".*tmp"))  # nothing half-written


def test_record_then_replay_gives_the_recorded_truth(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "rec"
    assert main(["record", str(out), "--rolls", "3", "--tower", "sim", "--sim-seed", "8"]) == 0
    assert "3 photos with the camera's truth" in capsys.readouterr().out
    entries = list(read_manifest(out))
    assert len(entries) == 3 and all(e.reference == (out / "images" / "empty.png").resolve() for e in entries)
    assert main(["roll", "3d6", "--tower", "replay", "--replay", str(out), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    first = sorted(entries[0].dice, key=lambda d: d.box[0] + d.box[2] / 2)
    assert [d["value"] for d in doc["dice"]] == [d.face for d in first[:3]]
    assert main(["record", str(out), "--rolls", "1", "--tower", "sim"]) == 1
    assert "not an empty folder" in capsys.readouterr().err


def test_tower_subcommands_on_the_sim(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["tower", "shake", "--tower", "sim"]) == 0
    assert capsys.readouterr().out.count("pulse 80 ms of 80 asked") == 6
    assert main(["tower", "tap", "--tower", "sim"]) == 0
    assert capsys.readouterr().out.startswith("tap 25 ms")
    assert main(["tower", "status", "--tower", "sim", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["dice"] == "4 white d6, 1 red d6 (wild)"
    assert main(["tower", "capture", "--tower", "sim", "--out", str(tmp_path / "a.png")]) == 0
    out = capsys.readouterr().out
    assert (tmp_path / "a.png").is_file() and '"schema": "dicetower.reading/1"' in out
    assert main(["tower", "calibrate", "--tower", "sim"]) == 0
    assert "kept in memory" in capsys.readouterr().out
    assert main(["tower", "watch", "2d6", "--tower", "sim", "--sim-seed", "1"]) == 0
    out = capsys.readouterr().out
    assert "settling" in out and out.count("die at (") == 2


def test_tower_shake_and_tap_give_the_configs_pattern(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cfg = tmp_path / "c.toml"
    cfg.write_text("[shaker]\nshake_count = 3\nshake_on_ms = 50\nshake_off_ms = 60\ntap_on_ms = 15\n")
    assert main(["tower", "shake", "--tower", "sim", "--config", str(cfg)]) == 0
    assert capsys.readouterr().out.splitlines() == ["pulse 50 ms of 50 asked"] * 3
    assert main(["tower", "tap", "--tower", "sim", "--config", str(cfg)]) == 0
    assert capsys.readouterr().out.splitlines() == ["tap 15 ms of 15 asked"]


def test_sigterm_ends_the_tower_service_cleanly(tmp_path: Path) -> None:
    """systemd stops the tower's service with SIGTERM: the rolls it took finish, the log closes whole."""
    data = tmp_path / "data"
    argv = ["serve", "--tower", "sim", "--port", "0", "--data", str(data), "--autopress", "--presses", "2"]
    child = subprocess.Popen(
        [sys.executable, "-m", "dicetower.firmware.cli", *argv],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert child.stderr is not None
        line = child.stderr.readline()  # printed once it serves, with the port --port 0 got
        assert re.match(r"dicetower: serving on http://127\.0\.0\.1:[1-9]\d* \(", line), line
        time.sleep(1.0)  # the presses are accepted once it serves
        child.terminate()
        _, err = child.communicate(timeout=60)
    finally:
        if child.poll() is None:
            child.kill()
            child.communicate(timeout=60)
    # uvicorn re-raises the SIGTERM once shut down: systemd counts that a clean stop
    assert child.returncode in (0, -signal.SIGTERM), err
    assert main(["log", "verify", "--data", str(data)]) == 0


@pytest.fixture
def default_config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Where ``tower config --check`` looks without a path, moved into the test's folder."""
    import dicetower.firmware.config as config

    path = tmp_path / "etc" / "config.toml"
    monkeypatch.setattr(config, "DEFAULT_PATH", path)
    return path


def test_config_check_without_a_path_checks_the_default_file(
    default_config: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["tower", "config", "--check"]) == 1  # no file there yet
    assert (
        capsys.readouterr().err
        == f"dicetower: error: no config file at {default_config}: give --check FILE\n"
    )
    default_config.parent.mkdir()
    default_config.write_text('[camera]\nbackend = "sim"\nfps = 30\n[shaker]\nmax_on_ms = 5000\n')
    assert main(["tower", "config", "--check"]) == 1
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 2 and all(line.startswith("dicetower: error: ") for line in err)  # every problem
    default_config.write_text('[camera]\nbackend = "sim"\n')
    assert main(["tower", "config", "--check"]) == 0
    assert capsys.readouterr().out.startswith(f"{default_config}: ok (sim camera")


def test_config_check_takes_a_path_or_the_config_option(
    default_config: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    mine = tmp_path / "mine.toml"
    mine.write_text('[dice]\nplain = "2 white d6"\nwild = "red d6"\n')
    assert main(["tower", "config", "--check", str(mine)]) == 0
    assert main(["tower", "config", "--config", str(mine), "--check"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert len(out) == 2 and all(
        line.startswith(f"{mine}: ok (sim camera, mock pins, dice: 2 white d6") for line in out
    )
