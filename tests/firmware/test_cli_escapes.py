"""Text from arguments and from storage reaches the terminal with its control characters escaped.

ESC (``\\x1b``) and the 8-bit CSI (``\\x9b``) start escape sequences that can retitle a terminal,
hide lines or move the cursor; BEL rings. Each command that echoes a path, a host or a stored
field is run with such characters in it, and its output is searched for them.
"""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path
from typing import Any

import pytest
from dicetower.firmware.cli import main
from dicetower.firmware.cli.output import EscapedWriter, escape_controls
from dicetower.firmware.rolllog import RollLog

#: What a hostile name carries: the 8-bit CSI, ESC with an OSC title, BEL, a bidi override.
HOSTILE = "x\x9b2J\x1b]0;pwned\x07\u202ey"
RAW = ("\x9b", "\x1b", "\x07", "\u202e")


def _assert_escaped(text: str) -> None:
    assert not any(ch in text for ch in RAW), repr(text)


def _log_with_a_hostile_row(data: Path) -> None:
    with RollLog(data, photo_cap_bytes=None) as log:
        rid = log.accept({"notation": "1d6", "note": HOSTILE}, roller=HOSTILE, client="127.0.0.1")
        log.mark_rolling(rid)
        log.commit(
            rid,
            status="done",
            source="rng",
            result={"total": 3, "text": HOSTILE},
            total=3,
            dice=[{"slot": 0, "kind": "d6", "face": 3, "die": "rng d6"}],
            throws=[{"index": 0, "photo": None, "retries": []}],
            photos=[],
        )


def test_log_export_json_escapes_stored_fields_and_reads_back_the_same(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _log_with_a_hostile_row(tmp_path)
    assert main(["log", "export", "--json", "--data", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    _assert_escaped(out)
    assert "\\u009b" in out and "\\u001b" in out
    row = json.loads(out.splitlines()[0])
    assert row["roller"] == HOSTILE  # JSON escapes: the same text once parsed


def test_log_export_csv_escapes_stored_fields(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _log_with_a_hostile_row(tmp_path)
    assert main(["log", "export", "--csv", "--data", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    _assert_escaped(out)
    rows = list(csv.DictReader(io.StringIO(out)))
    assert rows[0]["roller"] == "x\\x9b2J\\x1b]0;pwned\\x07\\u202ey"
    out_file = tmp_path / "export.csv"
    assert main(["log", "export", "--csv", "--data", str(tmp_path), "--out", str(out_file)]) == 0
    _assert_escaped(out_file.read_text(encoding="utf-8"))


def test_escaped_writer_keeps_lines_and_plain_text() -> None:
    buf = io.StringIO()
    writer = EscapedWriter(buf)
    csv.writer(writer).writerows([["a\tb", 'multi\nline "quoted"', "é ü"], ["\x1b[31m", "ok"]])
    assert buf.getvalue() == 'a\tb,"multi\nline ""quoted""",é ü\r\n\\x1b[31m,ok\r\n'
    assert escape_controls("plain text\n") == "plain text\n"


def test_record_echoes_its_folder_escaped(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / f"rec{HOSTILE}"
    assert main(["record", str(out), "--rolls", "1", "--tower", "sim", "--sim-seed", "2"]) == 0
    captured = capsys.readouterr()
    _assert_escaped(captured.out + captured.err)
    assert "rec" + escape_controls(HOSTILE) in captured.out


def test_save_paths_are_echoed_escaped(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    save = tmp_path / f"save{HOSTILE}"
    assert main(["roll", "1d6", "--tower", "sim", "--sim-seed", "3", "--save", str(save)]) == 0
    captured = capsys.readouterr()
    _assert_escaped(captured.out + captured.err)
    assert "photo: " in captured.out and escape_controls(HOSTILE) in captured.out


def test_serve_echoes_host_and_data_escaped(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from dicetower.firmware.server import listen

    ran: list[Any] = []
    monkeypatch.setattr(
        listen,
        "serve",
        lambda app, host, port, announce, **_: (announce(port), ran.append({"host": host, "port": port})),
    )
    data = tmp_path / f"data{HOSTILE}"
    assert main(["serve", "--rng", "--host", f"host{HOSTILE}", "--data", str(data)]) == 0
    assert ran and ran[0]["host"] == f"host{HOSTILE}"  # the value itself is passed on as given
    err = capsys.readouterr().err
    _assert_escaped(err)
    assert f"http://host{escape_controls(HOSTILE)}:8080" in err and f"data{escape_controls(HOSTILE)}" in err
