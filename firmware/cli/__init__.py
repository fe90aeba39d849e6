"""The ``dicetower`` command line: one ``main(argv) -> int``, one module per subcommand.

Subcommand modules expose ``register(subparsers)``, which adds a parser whose ``func``
default takes the parsed args and returns an exit code. Errors from any layer are printed
as one ``dicetower: error: ...`` line on stderr with exit code 1 (re-raised with
``DICETOWER_DEBUG=1``), the shape of gpiozero's CLI.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from importlib import import_module

__all__ = ["SUBCOMMANDS", "build_parser", "main"]

#: module names under ``dicetower.firmware.cli``, each registering its subcommand(s)
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
    "log",
    "fairness",
)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="dicetower",
        description="Roll real (or simulated) dice, read them and apply the game's rules.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="Run 'dicetower COMMAND --help' for a command's options and examples.",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in SUBCOMMANDS:
        try:
            module = import_module(f"{__name__}.{name}")
        except ModuleNotFoundError as exc:  # a subcommand not written yet
            if exc.name == f"{__name__}.{name}":
                continue
            raise
        module.register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
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
        pretty = getattr(exc, "pretty", None)
        message = pretty() if callable(pretty) else str(exc) or type(exc).__name__
        print(f"dicetower: error: {message}", file=sys.stderr)
        return 1
