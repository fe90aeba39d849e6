"""Text from a file, a database or a taught model reaches the terminal with its control characters escaped.

Each command that prints a stored field (a roll log's hash, a teach folder's die names, a taught
model's die ids) is run with ESC, the 8-bit CSI (U+009B), BEL and a bidi override (U+202E) in
that field, and its output is searched for them.
"""

from __future__ import annotations

import contextlib
import io
import json
import shutil
import sqlite3
from pathlib import Path

import pytest
from dicetower.firmware.cli import main
from dicetower.firmware.cli.output import escape_controls
from dicetower.firmware.server.rolllog import RollLog
from taught_helpers import write_card, write_teach_folder
from teach_folders import TeachFolder

#: What a hostile name carries: the 8-bit CSI, ESC with an OSC title, BEL, a bidi override.
HOSTILE = "x\x9b2J\x1b]0;pwned\x07\u202ey"
#: What a teach.json die name may carry (it refuses C0 controls, not C1 or bidi).
HOSTILE_NAME = "white\x9b2J\u202e d6"
RAW = ("\x9b", "\x1b", "\x07", "\u202e")


def _assert_escaped(text: str) -> None:
    assert not any(ch in text for ch in RAW), repr(text)


def test_log_verify_escapes_a_hash_from_the_database(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with RollLog(tmp_path, photo_cap_bytes=None) as log:
        rid = log.accept({"notation": "1d6"}, roller="me", client="127.0.0.1")
        log.mark_rolling(rid)
        log.commit(
            rid, status="done", source="rng", result={"total": 3}, total=3, dice=[], throws=[], photos=[]
        )
    db = sqlite3.connect(tmp_path / "rolls.sqlite3")
    forged = "\x1b[2K\x1b[1A" + HOSTILE
    with db:
        db.execute("UPDATE rolls SET hash = ? WHERE id = ?", (forged, rid))
    db.close()
    assert main(["log", "verify", "--data", str(tmp_path)]) == 1
    captured = capsys.readouterr()
    _assert_escaped(captured.out + captured.err)
    assert escape_controls(forged) in captured.out  # the head hash, shown escaped
    assert "edited" in captured.err


def test_teach_name_escapes_the_die_names_of_teach_json(
    teach_folder: TeachFolder, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = teach_folder.path / "teach.json"
    teach = json.loads(path.read_text(encoding="utf-8"))
    teach["dice"][0]["id"] = HOSTILE_NAME
    path.write_text(json.dumps(teach), encoding="utf-8")
    labels = tmp_path / "labels.json"
    labels.write_text(json.dumps({HOSTILE_NAME: {"groups": {"0": 3}}}), encoding="utf-8")
    assert main(["teach", "name", str(teach_folder.path), "--labels", str(labels)]) == 0
    captured = capsys.readouterr()
    _assert_escaped(captured.out + captured.err)
    assert escape_controls(HOSTILE_NAME) + ": 1 of 6 faces named" in captured.out


@pytest.fixture(scope="module")
def hostile_fit(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """A teach folder whose dice's colour name is hostile, fitted by ``teach fit``; its output."""
    pytest.importorskip("onnx")
    root = tmp_path_factory.mktemp("hostile")
    write_teach_folder(root / "teach", 40)
    manifest = root / "teach" / "manifest.jsonl"
    lines = [json.loads(line) for line in manifest.read_text(encoding="utf-8").splitlines()]
    for line in lines:
        for die in line["dice"]:
            die["colour"] = HOSTILE
    manifest.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    out, err = io.StringIO(), io.StringIO()
    argv = ["teach", "fit", str(root / "teach"), "--out", str(root / "model"), "--min-per-face", "2"]
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        assert main([*argv, "--max-wrong", "1"]) == 0, err.getvalue()
    return root / "model", out.getvalue() + err.getvalue()


def test_teach_fit_escapes_the_die_ids_it_prints(hostile_fit: tuple[Path, str]) -> None:
    model, printed = hostile_fit
    _assert_escaped(printed)
    assert f"  {escape_controls(HOSTILE)} d6: held back" in printed
    assert json.loads((model / "taught.json").read_text(encoding="utf-8"))["dice"][0]["id"] == f"{HOSTILE} d6"


def _hostile_model(taught_model: Path, out: Path) -> Path:
    """A copy of the small taught model whose die is called :data:`HOSTILE` (its card sealed anew)."""
    shutil.copytree(taught_model, out)
    card = json.loads((out / "taught.json").read_text(encoding="utf-8"))
    card["dice"][0]["id"] = HOSTILE
    write_card(out, card)
    return out


def test_read_taught_escapes_the_model_and_its_die_ids(
    taught_model: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    model = _hostile_model(taught_model, tmp_path / f"model{HOSTILE}")
    write_teach_folder(tmp_path / "new", 1, seed=7)
    photo = tmp_path / "new" / "images" / "roll-00001.jpg"
    empty = tmp_path / "new" / "images" / "empty.png"
    assert main(["read", str(photo), "--reference", str(empty), "--taught", str(model)]) == 0
    captured = capsys.readouterr()
    _assert_escaped(captured.out + captured.err)
    assert f"dice by their own reader; {escape_controls(HOSTILE)} 2" in captured.out


def test_tower_status_escapes_the_model_and_its_die_ids(
    taught_model: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    model = _hostile_model(taught_model, tmp_path / f"model{HOSTILE}")
    assert main(["tower", "status", "--tower", "sim", "--taught", str(model)]) == 0
    captured = capsys.readouterr()
    _assert_escaped(captured.out + captured.err)
    assert f"taught: {escape_controls(str(model))} ({escape_controls(HOSTILE)})" in captured.out
