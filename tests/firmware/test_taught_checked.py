"""A taught model is checked whole at load: every value the reader uses, and every file by its hash.

Each hostile case edits a copy of a real fitted model (taught_helpers) as an owner or a stranger
could: once leaving the card's hashes as they were (a plain edit), and, for the values, once
writing the hashes anew (whoever rewrites the card can), so the value checks hold on their own.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import cv2
import numpy as np
import pytest
from dicetower.firmware.cli import main
from dicetower.vision.taught.card import card_digest
from dicetower.vision.taught.features import TaughtModelError
from dicetower.vision.taught.heldback import HELD_BACK_DIR
from dicetower.vision.taught.model import TaughtModel
from taught_helpers import write_card


def _copy(model: Path, out: Path) -> tuple[Path, dict[str, Any]]:
    shutil.copytree(model, out)
    return out, json.loads((out / "taught.json").read_text(encoding="utf-8"))


def _nan_lab(card: dict[str, Any]) -> None:
    card["dice"][0]["body"]["lab"][0] = float("nan")


def _side_zero(card: dict[str, Any]) -> None:
    card["dice"][0]["body"]["side"] = 0


def _faces_permuted(card: dict[str, Any]) -> None:
    faces = card["dice"][0]["faces"]
    faces[1], faces[4] = faces[4], faces[1]


def _rows_moved(card: dict[str, Any]) -> None:
    card["dice"][0]["rows"] = [r + 1 for r in card["dice"][0]["rows"]]


def _threshold_zero(card: dict[str, Any]) -> None:
    card["dice"][0]["threshold"] = 0.0


def _two_dice_one_id(card: dict[str, Any]) -> None:
    card["dice"].append(json.loads(json.dumps(card["dice"][0])))


def _kind_d4(card: dict[str, Any]) -> None:
    die = card["dice"][0]
    die.update(kind="d4", faces=[1, 2, 3, 4], rows=[die["rows"][0], die["rows"][0] + 4])


#: (edit, what the refusal says of a card whose hashes were written anew)
VALUES: list[tuple[Callable[[dict[str, Any]], None], str]] = [
    (_nan_lab, r"dice\[0\]\.body\.lab\[0\]: nan is not a finite number in \[0, 100\]"),
    (_side_zero, r"dice\[0\]\.body\.side: 0 is not a finite number in \(0, 20000\]"),
    (_faces_permuted, r"dice\[0\]\.faces: \[1, 5, 3, 4, 2, 6\] are not each once in a d6's order"),
    (_rows_moved, r"dice\[0\]\.rows: \[\d+, \d+\] are not the next rows of pips\.onnx"),
    (_threshold_zero, r"dice\[0\]\.threshold: 0\.0 is not a finite number in \(0\.5, 1\]"),
    (_two_dice_one_id, r"dice\[1\]\.id: 'white d6' is dice\[0\]'s id too"),
    (_kind_d4, r"dice\[0\]\.kind: 'd4': a d4 shows its result at its corners"),
]


@pytest.mark.parametrize(("edit", "says"), VALUES, ids=[e.__name__.strip("_") for e, _ in VALUES])
def test_a_value_out_of_range_is_refused_naming_its_field_even_with_fresh_hashes(
    taught_model: Path, tmp_path: Path, edit: Callable[[dict[str, Any]], None], says: str
) -> None:
    model, card = _copy(taught_model, tmp_path / "model")
    edit(card)
    write_card(model, card, seal=True)
    with pytest.raises(TaughtModelError, match=says) as refused:
        TaughtModel(model)
    assert str(refused.value).startswith(f"{model / 'taught.json'}: ")
    assert "\n" not in str(refused.value)


@pytest.mark.parametrize("edit", [e for e, _ in VALUES], ids=[e.__name__.strip("_") for e, _ in VALUES])
def test_a_plain_edit_of_the_card_is_refused(
    taught_model: Path, tmp_path: Path, edit: Callable[[dict[str, Any]], None]
) -> None:
    model, card = _copy(taught_model, tmp_path / "model")
    edit(card)
    write_card(model, card, seal=False)
    with pytest.raises(TaughtModelError):
        TaughtModel(model)


def test_an_edit_within_range_is_caught_by_the_card_hash(taught_model: Path, tmp_path: Path) -> None:
    model, card = _copy(taught_model, tmp_path / "model")
    card["dice"][0]["threshold"] = 0.51  # a valid threshold, not the fit's: it abstains less
    write_card(model, card, seal=False)
    with pytest.raises(TaughtModelError, match="card_sha256: the card does not match its hash"):
        TaughtModel(model)


def test_a_wrong_card_hash_is_refused(taught_model: Path, tmp_path: Path) -> None:
    model, card = _copy(taught_model, tmp_path / "model")
    card["card_sha256"] = "0" * 64
    write_card(model, card, seal=False)
    with pytest.raises(TaughtModelError, match="card_sha256: the card does not match its hash"):
        TaughtModel(model)


def test_a_card_without_hashes_is_refused_as_one_to_fit_again(taught_model: Path, tmp_path: Path) -> None:
    model, card = _copy(taught_model, tmp_path / "model")
    del card["files"], card["card_sha256"]
    write_card(model, card, seal=False)
    with pytest.raises(TaughtModelError, match="files: missing: the card does not hash its files"):
        TaughtModel(model)


def _other_fit(network: Path) -> None:
    """The same network with another fit's head: its last layer's weights changed."""
    onnx = pytest.importorskip("onnx")
    from onnx import numpy_helper

    model = onnx.load(str(network))
    gemm = [n for n in model.graph.node if n.op_type == "Gemm"][-1]
    for i, init in enumerate(model.graph.initializer):
        if init.name == gemm.input[2]:
            bias = numpy_helper.to_array(init) + np.float32(0.5)
            model.graph.initializer[i].CopyFrom(numpy_helper.from_array(bias, init.name))
    onnx.save(model, str(network))


def test_a_network_from_another_fit_is_refused(taught_model: Path, tmp_path: Path) -> None:
    model, _card = _copy(taught_model, tmp_path / "model")
    _other_fit(model / "pips.onnx")
    TaughtModel(taught_model)  # the original still loads
    with pytest.raises(TaughtModelError, match=r"pips\.onnx: does not match files\.pips\.onnx on the card"):
        TaughtModel(model)


def test_a_tray_from_another_folder_is_refused(taught_model: Path, tmp_path: Path) -> None:
    model, card = _copy(taught_model, tmp_path / "model")
    assert "tray.png" in card["files"]
    other = cv2.imread(str(model / "tray.png"))
    cv2.imwrite(str(model / "tray.png"), cv2.flip(other, 1))
    with pytest.raises(TaughtModelError, match=r"tray\.png: does not match files\.tray\.png on the card"):
        TaughtModel(model)
    del card["files"]["tray.png"]  # a card that lists no tray, and a tray dropped in beside it
    card["card_sha256"] = card_digest(card)
    write_card(model, card, seal=False)
    with pytest.raises(TaughtModelError, match=r"files: tray\.png is in the folder but not on the card"):
        TaughtModel(model)


def test_the_fit_writes_a_card_that_hashes_every_file(taught_model: Path) -> None:
    card = json.loads((taught_model / "taught.json").read_text(encoding="utf-8"))
    # the held-back photos are eval's folder beside the model (the card's figures), not a file it reads
    model_files = [p.name for p in taught_model.iterdir() if p.name not in ("taught.json", HELD_BACK_DIR)]
    assert sorted(card["files"]) == sorted(model_files)
    assert len(card["card_sha256"]) == 64
    TaughtModel(taught_model)


def test_config_check_runs_the_same_load(taught_model: Path, tmp_path: Path, capsys) -> None:
    model, card = _copy(taught_model, tmp_path / "model")
    _nan_lab(card)
    write_card(model, card, seal=False)
    config = tmp_path / "tower.toml"
    config.write_text('[reader]\ntaught = "model"\n', encoding="utf-8")
    assert main(["tower", "config", "--check", str(config)]) == 1
    err = capsys.readouterr().err
    assert "dice[0].body.lab[0]: nan is not a finite number" in err and len(err.splitlines()) == 1


def test_serve_refuses_a_bad_model_at_start(
    taught_model: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys
) -> None:
    from dicetower.firmware.server import listen

    served: list[Any] = []
    monkeypatch.setattr(listen, "serve", lambda app, host, port, **_: served.append(app))
    model, card = _copy(taught_model, tmp_path / "model")
    _nan_lab(card)
    write_card(model, card, seal=True)
    argv = ["serve", "--tower", "sim", "--taught", str(model), "--data", str(tmp_path / "data")]
    assert main(argv) == 1
    assert not served
    assert "body.lab[0]: nan is not a finite number" in capsys.readouterr().err


NAN_PAIRING = """
import numpy as np
from dicetower.vision.identity import assign
for cost in (np.array([[np.nan]]), np.array([[1.0, np.nan], [np.inf, 2.0]])):
    try:
        assign(cost)
    except ValueError as exc:
        print(exc)
print(assign(np.array([[3.0, 1.0], [1.0, 3.0]])))
"""


def test_the_pairing_ends_whatever_its_costs() -> None:
    done = subprocess.run([sys.executable, "-c", NAN_PAIRING], capture_output=True, text=True, timeout=120)
    lines = done.stdout.splitlines()
    assert lines[:2] == ["assign: the costs must be finite numbers (NaN or infinity given)"] * 2, done
    assert lines[2] == "[(0, 1), (1, 0)]"


def test_a_die_whose_body_is_no_number_pairs_with_nothing(taught_model: Path) -> None:
    """Past the load's checks (a card built in code), the reader still ends and pairs nothing with NaN."""
    from dataclasses import replace

    from dicetower.vision.reading import DieReading, ReadStatus
    from dicetower.vision.taught.reader import open_taught_reader

    reader = open_taught_reader(taught_model)
    die = reader.model.dice[0]
    reader.model.dice = (replace(die, body=replace(die.body, lab=(float("nan"), 0.0, 0.0))),)
    located = DieReading(
        kind="d6", face=3, status=ReadStatus.READ, box=(10.0, 10.0, 40.0, 40.0), hsv=(0, 0, 230)
    )
    frame = np.full((120, 120, 3), 200, np.uint8)
    assert reader.match(frame, [located, located]) == [None, None]
