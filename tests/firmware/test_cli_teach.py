"""``dicetower teach name DIR --labels FILE`` through ``main([...])``: the headless naming path."""

from __future__ import annotations

import json
import sys
import types
from pathlib import Path

import numpy as np
import pytest
from dicetower.firmware.cli import main
from dicetower.vision.manifest import read_manifest
from dicetower.vision.reading import Reading
from teach_folders import TeachFolder

LABELS = {
    "white d6": {"groups": {"0": 3, "1": 5, "2": 1, "3": 6}, "crops": {"crops/white-d6/00007.png": 2}},
    "blue d20": {
        "groups": {"0": 17, "1": 4, "2": 12, "3": 20},
        "crops": {"crops/blue-d20/00006.png": 9, "crops/blue-d20/00007.png": 9},
    },
}


class Blind:
    """A reader that finds nothing: eval still counts every labelled die (as missed)."""

    def read(self, frame: np.ndarray, reference: np.ndarray | None = None, tray: object = None) -> Reading:
        h, w = frame.shape[:2]
        return Reading((), w, h, timings_ms={"total": 1.0})


@pytest.fixture
def blind(monkeypatch: pytest.MonkeyPatch) -> str:
    module = types.ModuleType("blind_reader")
    module.Blind = Blind  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "blind_reader", module)
    return "blind_reader:Blind"


def _labels(tmp_path: Path, labels: object) -> str:
    path = tmp_path / "labels.json"
    path.write_text(json.dumps(labels))
    return str(path)


def test_name_writes_the_labelled_manifest_that_eval_reads(
    teach_folder: TeachFolder, tmp_path: Path, blind: str, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = str(teach_folder.path)
    assert main(["eval", folder, "--json", "--reader", blind]) == 1
    assert "dicetower teach name" in capsys.readouterr().err  # unnamed dice are refused, naming the command
    assert main(["teach", "name", folder, "--labels", _labels(tmp_path, LABELS)]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out == [
        "white d6: 5 of 6 faces named, 0 crops left; touched 1 of 10 crops (10.0 %); "
        "names 5, moves 1, splits 0, undos 0",
        "blue d20: 5 of 20 faces named, 0 crops left; touched 2 of 10 crops (20.0 %); "
        "names 6, moves 2, splits 0, undos 0",
        f"wrote {teach_folder.path / 'manifest.jsonl'}: 20 dice named in 10 photos, 0 without a face",
    ]
    entries = list(read_manifest(teach_folder.path))
    assert [e.dice[1].face for e in entries] == teach_folder.truth["blue d20"]
    assert main(["eval", folder, "--json", "--reader", blind]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["dice"] == 20 and report["missed"] == 20


@pytest.mark.parametrize(
    ("labels", "message"),
    [
        ({"green d6": {}}, "labels.green d6: no die 'green d6' in this teach folder"),
        ({"white d6": {"groups": {"0": 7}}}, "labels.white d6.groups.0: 7 is not a face of white d6"),
        ([], "must be an object"),
    ],
)
def test_bad_labels_are_one_error_line_and_change_nothing(
    teach_folder: TeachFolder,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    labels: object,
    message: str,
) -> None:
    before = (
        (teach_folder.path / "teach.json").read_bytes(),
        (teach_folder.path / "manifest.jsonl").read_bytes(),
    )
    assert main(["teach", "name", str(teach_folder.path), "--labels", _labels(tmp_path, labels)]) == 1
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1 and err[0].startswith("dicetower: error: ") and message in err[0]
    after = (
        (teach_folder.path / "teach.json").read_bytes(),
        (teach_folder.path / "manifest.jsonl").read_bytes(),
    )
    assert after == before


def test_a_folder_without_teach_json_says_what_makes_one(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["teach", "name", str(tmp_path), "--labels", _labels(tmp_path, {})]) == 1
    assert "no teach.json (group the crops first: dicetower teach group)" in capsys.readouterr().err


@pytest.mark.parametrize("action", ["", "collect", "group", "name", "fit"])
def test_every_help_page_has_examples(action: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        main(["teach", *([action] if action else []), "--help"])
    assert exc.value.code == 0
    out = capsys.readouterr().out
    assert "examples:\n  dicetower teach " in out
    assert f"dicetower teach {action}" in out
