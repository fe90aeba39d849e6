"""The command line against hostile input: narrow terminals, escape sequences, odd digits.

Encoding cases run the CLI in a child process with the terminal's encoding forced, since that
is fixed when the interpreter starts; the rest call ``main([...])`` in-process.
"""

from __future__ import annotations

import io
import os
import subprocess
import sys

import pytest
from dicetower.firmware.cli import main
from dicetower.firmware.cli.output import safe_streams, transliterate
from dicetower.firmware.cli.progress import LINE_EVERY_S, Progress


def _child(encoding: str, *argv: str) -> subprocess.CompletedProcess[bytes]:
    env = {**os.environ, "PYTHONIOENCODING": encoding, "LC_ALL": "C", "PYTHONUTF8": "0"}
    code = "import sys; from dicetower.firmware.cli import main; sys.exit(main(sys.argv[1:]))"
    return subprocess.run([sys.executable, "-c", code, *argv], capture_output=True, env=env, timeout=60)


@pytest.mark.parametrize("encoding", ["ascii", "latin-1"])
@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (("check", "wizard-quest", "pool", "--level", "5", "--faces", "6,4,1,3,6"), "6 4 1 3 6 -> 2 aces"),
        (("check", "duelling", "spell-damage", "--power", "3", "--resistance", "1", "--seed", "2"), " -> "),
        (("odds", "wizard-quest", "pool", "--level", "300"), "success  100% - 2.50e-12%  1 - 2.495102e-14"),
    ],
)
def test_a_narrow_terminal_degrades_the_text_and_keeps_the_result(
    encoding: str, argv: tuple[str, ...], expected: str
) -> None:
    done = _child(encoding, *argv)
    assert done.returncode == 0, done.stderr
    assert done.stderr == b""
    out = done.stdout.decode(encoding)
    assert expected in out, out
    assert "\u2192" not in out and "\u2212" not in out


def test_check_on_a_narrow_terminal_still_prints_the_probability_line() -> None:
    done = _child("ascii", "check", "wizard-quest", "pool", "--level", "5", "--faces", "6,4,1,3,6")
    lines = done.stdout.decode("ascii").splitlines()
    assert len(lines) == 2 and lines[1].startswith("P(success) = ") and " ~ " in lines[1], lines


def test_errors_on_a_narrow_terminal_are_one_readable_line() -> None:
    done = _child("ascii", "roll", "1d6\u2192")
    assert done.returncode == 1
    err = done.stderr.decode("ascii").splitlines()  # nothing the terminal cannot show
    assert len(err) == 3 and err[0].startswith("dicetower: error: unexpected character '\\u"), err
    assert err[2].index("^") == err[1].index("\\")


def test_transliteration_table() -> None:
    assert transliterate("6 \u2192 2 \u2248 3 \u2212 1 \u00b2 \u00d7 \u2264 \u2026 \u4e09", "ascii") == (
        "6 -> 2 ~ 3 - 1 ^2 x <= ... ?"
    )
    assert transliterate("caf\u00e9 \u2192", "latin-1") == "caf\u00e9 ->"  # what latin-1 holds stays
    stream = io.TextIOWrapper(io.BytesIO(), encoding="ascii")
    safe_streams(stream)
    stream.write("x \u2192 y\n")
    stream.flush()
    assert stream.buffer.getvalue() == b"x -> y\n"  # type: ignore[attr-defined]


# -- terminal injection -------------------------------------------------------------------------


def _roll_error(capsys: pytest.CaptureFixture[str], expr: str) -> list[str]:
    assert main(["roll", expr]) == 1
    captured = capsys.readouterr()
    assert captured.out == ""
    return captured.err.splitlines()


def test_escape_sequences_in_notation_are_shown_escaped(capsys: pytest.CaptureFixture[str]) -> None:
    lines = _roll_error(capsys, "1d6\x1b]0;owned\x07+2")
    assert "\x1b" not in "".join(lines) and "\x07" not in "".join(lines)
    assert lines == [
        "dicetower: error: unexpected '\\x1b' at column 4",
        "  1d6\\x1b]0;owned\\x07+2",
        "     ^",
    ]


def test_a_newline_in_the_expression_does_not_break_the_caret_block(
    capsys: pytest.CaptureFixture[str],
) -> None:
    lines = _roll_error(capsys, "1d6+\n2q")
    assert lines[1:] == ["  1d6+\\n2q", "      ^"]  # under the \n (shown as two characters)
    lines = _roll_error(capsys, "1d6 + 2\nq")
    assert len(lines) == 3 and lines[1] == "  1d6 + 2\\nq" and lines[2].index("^") == lines[1].index("\\n")


def test_the_caret_stays_in_its_column_after_tabs(capsys: pytest.CaptureFixture[str]) -> None:
    lines = _roll_error(capsys, "1d6\t+\t\t2q")
    assert "\t" not in "".join(lines)
    assert lines[1] == "  1d6 +  2q"
    assert lines[2] == "  " + " " * 8 + "^"


def test_control_characters_in_other_messages_are_escaped(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:  # an unknown option: a usage error
        main(["check", "wizard-quest", "pool", "--\x1b[2J"])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert "\x1b" not in err and "--\\x1b[2J" in err
    assert len(err.splitlines()) == 2  # the error line and the hint


# -- internals in messages ----------------------------------------------------------------------


@pytest.mark.parametrize("command", [["roll", "1d6"], ["check", "wizard-quest", "pool", "--level", "1"]])
@pytest.mark.parametrize(
    ("seed", "why"),
    [
        ("9" * 5000, "--seed: 5000 characters; a seed has at most 100"),
        ("\u00b2", "--seed: '\\xb2' is not a seed: use a whole number (ASCII digits)"),
        ("\u0663", "--seed: '\\u0663' is not a seed"),
        ("a b", "--seed: 'a b' is not a seed"),
    ],
)
def test_bad_seeds_get_our_message(
    capsys: pytest.CaptureFixture[str], command: list[str], seed: str, why: str
) -> None:
    assert main([*command, "--seed", seed]) == 1
    err = capsys.readouterr().err
    assert len(err.splitlines()) == 1 and err.startswith(f"dicetower: error: {why}"), err
    assert "int()" not in err and "set_int_max_str_digits" not in err


@pytest.mark.parametrize("command", [["roll", "1d6"], ["check", "wizard-quest", "pool", "--level", "1"]])
def test_seeds_that_are_numbers_or_words_replay(
    capsys: pytest.CaptureFixture[str], command: list[str]
) -> None:
    for seed in ("7", "-7", "9" * 100, "release-12.b"):
        assert main([*command, "--seed", seed]) == 0
        first = capsys.readouterr().out
        assert main([*command, "--seed", seed]) == 0
        assert capsys.readouterr().out == first


@pytest.mark.parametrize("command", [["roll", "1d6"], ["check", "wizard-quest", "pool", "--level", "1"]])
@pytest.mark.parametrize("faces", ["\u0663", "1_0", "\u00b2", "+3", "3.0", "0x3", "12345"])
def test_faces_take_ascii_digits_only_as_the_notation_does(
    capsys: pytest.CaptureFixture[str], command: list[str], faces: str
) -> None:
    assert main([*command, "--faces", faces]) == 1
    err = capsys.readouterr().err
    assert len(err.splitlines()) == 1, err
    assert err.startswith("dicetower: error: --faces: face 1, ") and "is not a whole number" in err, err


def test_notation_refuses_the_same_digits() -> None:
    from dicetower.rules import RollSyntaxError, parse

    for text in ("\u0663d6", "1_0d6", "\u00b2d6"):
        with pytest.raises(RollSyntaxError):
            parse(text)


def test_faces_one_parser_for_both_commands() -> None:
    from dicetower.firmware.cli import check, roll
    from dicetower.rules.typed import parse_faces

    assert check.parse_faces is roll.parse_faces is parse_faces
    assert parse_faces("6, 3 1,4") == [6, 3, 1, 4]


# -- slow, not hung -----------------------------------------------------------------------------


class _Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_progress_off_a_terminal_prints_a_line_every_interval() -> None:
    out, clock = io.StringIO(), _Clock()
    progress = Progress(out, "big", 2000, clock=clock)
    for i in range(1, 2001):
        clock.now = i * 0.02  # 50 photos a second: 40 s in all
        progress.step(i)
    progress.close()
    lines = out.getvalue().splitlines()
    assert len(lines) == int(40 / LINE_EVERY_S)
    assert lines[0] == "dicetower: big: 500/2000 photos, 50.0/s, about 30 s left"


def test_progress_is_silent_for_a_short_run() -> None:
    out, clock = io.StringIO(), _Clock()
    progress = Progress(out, "small", 10, clock=clock)
    for i in range(1, 11):
        clock.now = i * 0.1
        progress.step(i)
    progress.close()
    assert out.getvalue() == ""
