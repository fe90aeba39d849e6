"""Reading with a taught model: ``--taught`` and ``[reader] taught``, the fallback, d8/d12/d4, and drift."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest
from dicetower.firmware.cli import main
from dicetower.firmware.config import ConfigError, load_config, parse_config
from dicetower.firmware.errors import ThrowFailedError
from dicetower.firmware.taught_watch import DRIFT_FILE, TaughtWatch, watch_reader
from dicetower.firmware.tower import open_tower
from dicetower.vision.reading import Reading
from taught_helpers import TRAY, edit_card, write_teach_folder


def _config(tmp_path: Path, text: str, name: str = "tower.toml") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


# -- reading


def test_read_a_photo_with_the_taught_model(taught_model: Path, tmp_path: Path, capsys) -> None:
    write_teach_folder(tmp_path / "new", 2, seed=7)  # throws it was not taught on
    line = json.loads((tmp_path / "new" / "manifest.jsonl").read_text().splitlines()[1])
    photo, empty = tmp_path / "new" / line["image"], tmp_path / "new" / line["reference"]
    argv = ["read", str(photo), "--reference", str(empty), "--taught", str(taught_model)]
    assert main([*argv, "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert [t["die"] for t in data["taught"]] == ["white d6", "white d6"]
    assert all(t["confidence"] >= 0.5 for t in data["taught"])
    assert sorted(d["face"] for d in data["dice"]) == sorted(d["face"] for d in line["dice"])
    assert main(argv) == 0
    assert "2 dice by their own reader; white d6 2" in capsys.readouterr().out


def test_read_refuses_a_broken_model_and_a_second_reader(tmp_path: Path, capsys) -> None:
    write_teach_folder(tmp_path / "new", 1, seed=7)
    photo = str(tmp_path / "new" / "images" / "roll-00001.jpg")
    (tmp_path / "empty-model").mkdir()
    assert main(["read", photo, "--taught", str(tmp_path / "empty-model")]) == 1
    assert "no taught.json; a taught model is written by 'dicetower teach fit'" in capsys.readouterr().err
    reader = "dicetower.vision.eval.baseline:ClassicReader"
    assert main(["read", photo, "--taught", str(tmp_path), "--reader", reader]) == 1
    assert "--taught and --reader cannot be combined" in capsys.readouterr().err


def test_roll_on_the_sim_tower_with_a_taught_model(taught_model: Path, tmp_path: Path, capsys) -> None:
    cfg = _config(tmp_path, f"[dice]\n{TRAY}\n")
    argv = ["roll", "2d6", "--tower", "sim", "--sim-seed", "3", "--config", str(cfg), "--json"]
    assert main([*argv, "--taught", str(taught_model), "--save", str(tmp_path / "throws")]) == 0
    doc = json.loads(capsys.readouterr().out)
    throw = doc["tower"]["throws"][-1]
    assert throw["failure"] is None and len(throw["answers"]) == 2
    assert sorted(a["face"] for a in throw["answers"]) == sorted(t["face"] for t in throw["truth"])


def test_tower_status_shows_the_model_and_the_dice_it_leaves_to_the_general_reader(
    taught_model: Path, capsys
) -> None:
    argv = ["tower", "status", "--tower", "sim", "--taught", str(taught_model)]
    assert main([*argv, "--json"]) == 0
    taught = json.loads(capsys.readouterr().out)["taught"]
    assert taught["model"] == str(taught_model) and taught["dice"] == ["white d6"]
    assert taught["general"] == ["red d6"]  # the built-in tray's wild die was not taught
    assert taught["drifting"] is False and taught["message"] is None
    assert taught["drift"]["window"] == 50 and taught["drift"]["dice"][0]["held_back_right_rate"] == 1.0
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert f"taught: {taught_model} (white d6)" in out and "general reader: red d6" in out
    assert main(["tower", "status", "--tower", "sim"]) == 0
    assert "taught: none (the general reader reads every die)" in capsys.readouterr().out


# -- the config


def test_reader_taught_resolves_against_the_config_folder(taught_model: Path, tmp_path: Path, capsys) -> None:
    (tmp_path / "models").mkdir()
    (tmp_path / "models" / "dice").symlink_to(taught_model, target_is_directory=True)
    path = _config(tmp_path, f'[reader]\ntaught = "models/dice"\n\n[dice]\n{TRAY}\n')
    assert load_config(path).reader.taught == str(tmp_path / "models" / "dice")
    assert main(["tower", "config", "--check", str(path)]) == 0
    assert f"ok (sim camera, mock pins, dice: 2 white d6, taught: {tmp_path / 'models' / 'dice'})" in (
        capsys.readouterr().out
    )
    assert main(["tower", "config", "--config", str(path)]) == 0
    assert f'[reader]\ntaught = "{tmp_path / "models" / "dice"}"' in capsys.readouterr().out


@pytest.mark.parametrize(
    ("make", "says"),
    [
        (lambda m, d: d / "nowhere", "[reader] taught = 'nowhere': no such folder"),
        (lambda m, d: (d / "nowhere").mkdir() or d / "nowhere", "nowhere: no taught.json"),
        (
            lambda m, d: (edit_card(m, d / "nowhere") / "pips.onnx").unlink() or d / "nowhere",
            "[reader] taught = 'nowhere': " + "{d}/nowhere: pips.onnx is missing",
        ),
        (
            lambda m, d: edit_card(m, d / "nowhere", threshold=2.0),
            "dice[0].threshold: 2.0 is not a finite number in (0.5, 1]",
        ),
    ],
)
def test_config_check_reports_a_broken_model_with_the_file_and_key(
    taught_model: Path, tmp_path: Path, capsys, make, says: str
) -> None:
    make(taught_model, tmp_path)
    path = _config(tmp_path, '[reader]\ntaught = "nowhere"\n')
    assert main(["tower", "config", "--check", str(path)]) == 1
    err = capsys.readouterr().err
    assert err.startswith(f"dicetower: error: {path}: [reader] taught = 'nowhere': ")
    assert says.format(d=tmp_path) in err


def test_a_taught_flag_names_the_flag_when_its_model_is_broken(tmp_path: Path, capsys) -> None:
    assert main(["roll", "1d6", "--tower", "sim", "--taught", str(tmp_path / "none")]) == 1
    assert f"--taught {tmp_path / 'none'}: no such folder" in capsys.readouterr().err


def test_d8_is_refused_untaught_and_loaded_once_taught(taught_model: Path, tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"kind 'd8' is read only once taught: teach it \(dicetower teach"):
        parse_config({"dice": {"plain": "white d8"}})
    with pytest.raises(ConfigError, match=r"teaches no white d8 \(it teaches white d6\)"):
        parse_config({"dice": {"plain": "white d8"}}, taught=taught_model)
    d8 = edit_card(taught_model, tmp_path / "d8", id="white d8", kind="d8")
    cfg = parse_config({"dice": {"plain": "2 white d8"}}, taught=d8)
    assert cfg.dice.describe() == "2 white d8" and cfg.reader.taught == str(d8)
    with pytest.raises(ConfigError, match="teaches no green d8"):
        parse_config({"dice": {"plain": "green d8"}}, taught=d8)
    anycolour = edit_card(taught_model, tmp_path / "any", id="d12", kind="d12", colour="")
    assert parse_config({"dice": {"plain": "green d12"}}, taught=anycolour).dice.kinds() == {"d12": 1}


def test_d4_is_refused_even_taught(taught_model: Path) -> None:
    with pytest.raises(ConfigError, match="a d4 shows its result at its corners"):
        parse_config({"dice": {"plain": "white d4"}}, taught=taught_model)


def test_a_config_without_a_taught_model_is_checked_without_opencv(tmp_path: Path) -> None:
    path = _config(tmp_path, '[dice]\nplain = "2 white d8"\n')
    code = (
        "import sys\nfrom dicetower.firmware.config import ConfigError, load_config\n"
        f"try:\n    load_config({str(path)!r})\nexcept ConfigError as exc:\n    print(exc)\n"
        "print('cv2' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    assert out.stdout.splitlines() == [
        f"{path}: [dice] plain = '2 white d8': kind 'd8' is read only once taught: teach it (dicetower"
        " teach collect --tower config --rolls N --out DIR) and set [reader] taught",
        "False",
    ]


# -- drift


def test_the_sim_tower_says_when_the_taught_reader_drifts(taught_model: Path, tmp_path: Path) -> None:
    # a die the taught reader is never sure of: as if the light changed after teaching
    unsure = edit_card(taught_model, tmp_path / "unsure", threshold=1.0)
    cfg = parse_config({"dice": {"plain": "2 white d6"}, "sim": {"seed": 2}}, taught=unsure)
    with open_tower(cfg) as tower:
        assert tower.taught is not None and not tower.taught.drifting
        for _ in range(3):
            with pytest.raises(ThrowFailedError, match="unreadable"):
                tower.throw()
        status = tower.status()["taught"]
    assert status["drifting"] is True
    white = status["drift"]["dice"][0]
    assert white["recent"] >= 20 and white["sure"] == 0 and white["drifting"]
    assert status["message"].startswith(
        "the taught reader is less sure than when it was taught: the white d6 is read surely 0 % of the time"
    )
    assert "teach again (dicetower teach collect --tower config" in status["message"]


def test_a_real_cameras_tower_keeps_the_figure_beside_its_calibration(
    taught_model: Path, tmp_path: Path
) -> None:
    from dicetower.vision.taught.reader import open_taught_reader

    reader = open_taught_reader(taught_model)
    cfg = parse_config({"calibration": {"dir": str(tmp_path / "state")}}, taught=taught_model)
    watch = watch_reader(reader, cfg, SimpleNamespace(can_show_empty_tray=False))
    assert watch is not None and watch.store == tmp_path / "state" / DRIFT_FILE
    assert watch_reader(reader, cfg, SimpleNamespace(can_show_empty_tray=True)).store is None
    reader.last_taught = [("white d6", 0.2)] * 25
    watch.feed(Reading())
    again = TaughtWatch(reader, cfg.dice.dice, store=watch.store)
    assert again.drifting and again.monitor.figures()[0].recent == 25
    retaught = open_taught_reader(edit_card(taught_model, tmp_path / "retaught", threshold=0.6))
    assert TaughtWatch(retaught, cfg.dice.dice, store=watch.store).monitor.figures()[0].recent == 0
    watch.store.write_text("{not json", encoding="utf-8")
    assert TaughtWatch(reader, cfg.dice.dice, store=watch.store).monitor.figures()[0].recent == 0
