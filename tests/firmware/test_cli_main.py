"""The CLI shell: help, unknown commands, error lines and exit codes."""

from __future__ import annotations

import pytest
from dicetower.firmware.cli import main


def test_no_command_prints_help_and_fails(capsys: pytest.CaptureFixture[str]) -> None:
    assert main([]) == 2
    assert "usage: dicetower" in capsys.readouterr().err


def test_help_lists_commands(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        main(["--help"])
    assert exc.value.code == 0
    assert "COMMAND" in capsys.readouterr().out


def test_unknown_command_is_an_argparse_error(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        main(["frobnicate"])
    assert exc.value.code == 2
    assert "invalid choice" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("argv", "where", "what"),
    [
        (["frobnicate"], "", "invalid choice: 'frobnicate'"),
        (["roll"], "roll: ", "the following arguments are required: expression"),
        (["tower", "shake", "--tower", "moon"], "tower shake: ", "argument --tower: invalid choice"),
        (["log", "export", "--csv", "--json"], "log export: ", "not allowed with argument"),
        (["record", "out"], "record: ", "required: --rolls"),
        (["teach", "fit"], "teach fit: ", "required"),
    ],
)
def test_a_command_line_that_does_not_parse_is_one_error_line_a_hint_and_exit_2(
    argv: list[str], where: str, what: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exc:
        main(argv)
    assert exc.value.code == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    error, hint = captured.err.splitlines()  # the README's one line, and where to read on
    assert error.startswith(f"dicetower: error: {where}") and what in error, error
    command = " ".join(["dicetower", *where.rstrip(": ").split()])
    assert hint == f"  see '{command} --help' for the options and examples"


def test_usage_errors_escape_what_the_user_typed(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["\x1b]0;pwned\x07"])
    err = capsys.readouterr().err
    assert "\x1b" not in err and "\\x1b" in err


def test_a_notation_error_names_its_column_and_draws_the_caret_under_it(
    capsys: pytest.CaptureFixture[str],
) -> None:
    from dicetower.rules.errors import RollSyntaxError
    from dicetower.rules.notation import Roller

    assert main(["roll", "2d6 + * 3"]) == 1
    error, shown, caret = capsys.readouterr().err.splitlines()
    assert error.endswith("at column 7") and shown == "  2d6 + * 3"
    assert caret.index("^") - 2 == 6 and shown[2 + 6] == "*"  # column 7 is the 7th character
    with pytest.raises(RollSyntaxError) as exc:
        Roller().parse("2d6 + * 3")
    assert exc.value.position == 6 and exc.value.column == 7  # 0-based offset, 1-based column
