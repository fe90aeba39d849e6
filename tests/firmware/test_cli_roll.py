"""``dicetower roll``: text and JSON output, sources, and errors on stderr with exit 1."""

from __future__ import annotations

import json

import pytest
from dicetower.firmware.cli import main


def test_roll_with_typed_in_faces(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["roll", "4d6kh3+2", "--faces", "1,4,5,6"]) == 0
    out = capsys.readouterr()
    assert out.out.strip() == "4d6kh3 (~~1~~, 4, 5, 6) + 2 = 17"
    assert out.err == ""


def test_words_are_joined_and_faces_may_be_space_separated(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["roll", "--faces", "3 4", "2d6", "+", "1"]) == 0
    assert capsys.readouterr().out.strip() == "2d6 (3, 4) + 1 = 8"


def test_seed_replays(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["roll", "10d20", "--seed", "42"]) == 0
    first = capsys.readouterr().out
    assert main(["roll", "10d20", "--seed", "42"]) == 0
    assert capsys.readouterr().out == first


def test_json_document(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["roll", "d100", "--faces", "0,0", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["schema"] == "dicetower.roll/1"
    assert doc["total"] == 100
    assert doc["expression"] == "1d100"
    assert [d["die"] for d in doc["dice"]] == ["d10t", "d10"]
    assert doc["tree"]["type"] == "dice"


def test_negative_expression_after_double_dash(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["roll", "--faces", "2", "--", "-1d6+3"]) == 0
    assert capsys.readouterr().out.strip() == "-1d6 (2) + 3 = 1"


def test_syntax_error_prints_a_caret_and_fails(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["roll", "4d6q"]) == 1
    out = capsys.readouterr()
    assert out.out == ""
    lines = out.err.splitlines()
    assert lines[0].startswith("dicetower: error: unknown dice modifier 'q'")
    expr_line, caret_line = lines[1], lines[2]
    assert expr_line.index("4d6q") + 3 == caret_line.index("^")


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["roll", "10000d10000"], "limit"),
        (["roll", "1d6", "--faces", "7"], "not on a d6"),
        (["roll", "1d6", "--faces", "1,2"], "left over"),
        (["roll", "2d6", "--faces", "1"], "not enough faces"),
        (["roll", "1d6", "--faces", "x"], "not a whole number"),
        (["roll", "1d6!", "--faces", "6" + ",6" * 100], "exploded"),
    ],
)
def test_errors_go_to_stderr_with_exit_1(
    capsys: pytest.CaptureFixture[str], argv: list[str], message: str
) -> None:
    assert main(argv) == 1
    out = capsys.readouterr()
    assert out.out == ""
    assert out.err.startswith("dicetower: error:")
    assert message in out.err


def test_help_has_examples(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        main(["roll", "--help"])
    assert exc.value.code == 0
    out = capsys.readouterr().out
    assert "4d6kh3+2" in out and "--faces" in out and "examples:" in out


def test_seed_and_faces_are_exclusive(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        main(["roll", "1d6", "--seed", "1", "--faces", "3"])
    assert exc.value.code == 2
