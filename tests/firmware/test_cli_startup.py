"""Lazy start-up: a command imports its own module only, and its help is unchanged by that."""

from __future__ import annotations

import argparse
import contextlib
import io
import subprocess
import sys

import pytest
from dicetower.firmware.cli import SUBCOMMANDS, build_parser, main

HEAVY = ("cv2", "numpy")


def _modules_after(argv: list[str]) -> set[str]:
    """The heavy modules imported by a fresh interpreter that runs ``dicetower ARGV``."""
    code = (
        "import sys\nfrom dicetower.firmware.cli import main\n"
        "try:\n    rc = main(sys.argv[1:])\nexcept SystemExit as exc:\n    rc = exc.code\n"
        f"print(' '.join(m for m in {HEAVY!r} if m in sys.modules)); sys.exit(rc)"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code, *argv], capture_output=True, text=True, timeout=60, check=False
    )
    assert proc.returncode == 0, proc.stderr
    return set(proc.stdout.splitlines()[-1].split())


@pytest.mark.parametrize(
    "argv",
    [
        ["roll", "1d6"],
        ["roll", "4d6kh3", "--json"],
        ["check", "wizard-quest", "pool", "--level", "3", "--seed", "1"],
        ["odds", "wizard-quest", "pool", "--level", "3"],
    ],
)
def test_rules_commands_import_neither_opencv_nor_numpy(argv: list[str]) -> None:
    assert _modules_after(argv) == set()


def test_the_probe_sees_a_command_that_loads_opencv() -> None:
    # the photo commands read with OpenCV: if this fails, the probe above proves nothing
    assert _modules_after(["read", "--help"]) == set(HEAVY)


def _help(argv: list[str], parser: argparse.ArgumentParser | None = None) -> str:
    out = io.StringIO()
    with contextlib.redirect_stdout(out), pytest.raises(SystemExit) as exc:
        if parser is None:
            main(argv)
        else:
            parser.parse_args(argv)
    assert exc.value.code in (0, None)
    return out.getvalue()


def _subparsers(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    (action,) = (a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return dict(action.choices)


@pytest.mark.parametrize("name", SUBCOMMANDS)
def test_lazy_help_is_the_full_parsers_help_and_lists_every_option(name: str) -> None:
    full = build_parser()
    sub = _subparsers(full)[name]
    if sub.add_help:  # check and odds print their own systems/checks help
        lazy = _help([name, "--help"])
        assert lazy == _help([name, "--help"], full)
        for action in sub._actions:
            if action.help == argparse.SUPPRESS:
                continue
            for flag in action.option_strings:
                assert flag in lazy, (name, flag)
    else:
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            assert main([name, "--help"]) == 0
        assert f"usage: dicetower {name}" in out.getvalue()


def test_top_level_help_lists_every_command() -> None:
    text = _help(["--help"])
    for name in SUBCOMMANDS:
        assert name in _subparsers(build_parser()), name
        assert name in text


def test_top_level_help_is_the_full_parsers_and_imports_no_subcommand_module() -> None:
    # the lazy page lists each command with the help its module registers
    assert _help(["--help"]) == _help(["--help"], build_parser())
    code = (
        "import sys\nfrom dicetower.firmware.cli import main\n"
        "try:\n    main(['--help'])\nexcept SystemExit:\n    pass\n"
        "print(' '.join(m for m in sys.modules if m.startswith('dicetower.firmware.cli.')))"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=False
    )
    assert proc.returncode == 0, proc.stderr
    loaded = set(proc.stdout.splitlines()[-1].split())
    assert loaded and not loaded & {f"dicetower.firmware.cli.{name}" for name in SUBCOMMANDS}, loaded
    assert _modules_after(["--help"]) == set()
