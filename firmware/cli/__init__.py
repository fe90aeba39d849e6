"""The ``dicetower`` command line: one ``main(argv) -> int``, one module per subcommand.

Subcommand modules expose ``register(subparsers)``, which adds a parser whose ``func``
default takes the parsed args and returns an exit code. Errors from any layer are printed
as one ``dicetower: error: ...`` line on stderr with exit code 1 (re-raised with
``DICETOWER_DEBUG=1``), the shape of gpiozero's CLI.

Start-up is lazy: ``dicetower roll 1d6`` imports the ``roll`` module only, so a dice roll
never pays for OpenCV and numpy, which the photo commands load. ``build_parser`` with no
name (``dicetower --help``, an unknown command) imports every subcommand module.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from importlib import import_module

__all__ = ["SUBCOMMANDS", "build_parser", "main"]

#: module names under ``dicetower.firmware.cli``, each registering its subcommand(s). A module
#: named as its command is the only one imported when that command runs.
SUBCOMMANDS: tuple[str, ...] = (
    "roll",
    "check",
    "odds",
    "read",
    "eval",
    "calibrate",
    "tower",
    "record",
    "serve",
    "hub",
    "log",
    "fairness",
    "teach",
)


def build_parser(only: Sequence[str] | None = None) -> argparse.ArgumentParser:
    """The ``dicetower`` parser with the subcommand modules ``only`` (default: all of them)."""
    parser = argparse.ArgumentParser(
        prog="dicetower",
        description="Roll real (or simulated) dice, read them and apply the game's rules.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="Run 'dicetower COMMAND --help' for a command's options and examples.",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in SUBCOMMANDS if only is None else only:
        import_module(f"{__name__}.{name}").register(sub)
    return parser


def _modules_for(argv: Sequence[str]) -> tuple[str, ...] | None:
    """The one module a command line needs, when its first word names one; else None (all)."""
    if argv and argv[0] in SUBCOMMANDS:
        return (argv[0],)
    return None


def main(argv: Sequence[str] | None = None) -> int:
    from .output import safe_streams

    safe_streams()  # a terminal that cannot show "→" gets "->", never a lost roll
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser(_modules_for(argv))
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help(sys.stderr)
        return 2
    try:
        return int(args.func(args) or 0)
    except KeyboardInterrupt:
        print("dicetower: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        # `dicetower ... | head` closed the pipe: not an error worth a message. Point stdout
        # at devnull so the interpreter's final flush does not raise again.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except Exception as exc:  # one line for people; the traceback under DICETOWER_DEBUG
        if os.environ.get("DICETOWER_DEBUG"):
            raise
        from ...rules.errors import caret_lines, printable

        print(f"dicetower: error: {printable(str(exc) or type(exc).__name__)}", file=sys.stderr)
        expression, position = getattr(exc, "expression", None), getattr(exc, "position", None)
        if isinstance(expression, str) and isinstance(position, int):  # a syntax error: its caret
            for line in caret_lines(expression, position):
                print(f"  {line}", file=sys.stderr)
        return 1
