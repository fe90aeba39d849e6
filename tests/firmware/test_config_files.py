"""What a config file is read as, and what ``tower config --check`` finds missing beside it."""

from __future__ import annotations

from pathlib import Path

import pytest
from dicetower.firmware.cli import main
from dicetower.firmware.config import load_config


def test_a_byte_order_mark_is_read_past(tmp_path: Path) -> None:
    path = tmp_path / "tower.toml"
    path.write_bytes(b"\xef\xbb\xbf" + b'[dice]\nplain = "3 white d6"\n')
    assert load_config(path).dice.describe() == "3 white d6"


def test_check_fails_on_a_replay_folder_that_is_not_there(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)  # the replay camera opens its folder as given, from where it runs
    path = tmp_path / "tower.toml"
    path.write_text('[camera]\nbackend = "replay"\nreplay = "recorded"\n', encoding="utf-8")
    assert main(["tower", "config", "--check", str(path)]) == 1
    assert capsys.readouterr().err == (
        f"dicetower: error: {path}: [camera] replay = 'recorded': no such folder\n"
    )
    (tmp_path / "recorded").mkdir()
    assert main(["tower", "config", "--check", str(path)]) == 1
    assert "replay = 'recorded': no manifest.jsonl in it" in capsys.readouterr().err
    (tmp_path / "recorded" / "manifest.jsonl").write_text("", encoding="utf-8")
    assert main(["tower", "config", "--check", str(path)]) == 0
    assert capsys.readouterr().out.startswith(f"{path}: ok (replay camera")
