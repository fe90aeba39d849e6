"""The ``dicetower`` command line: one ``main(argv) -> int``, one module per subcommand.

Subcommand modules expose ``register(subparsers)``, which adds a parser whose ``func``
default takes the parsed args and returns an exit code. Errors from any layer are printed
as one ``dicetower: error: ...`` line on stderr with exit code 1 (re-raised with
``DICETOWER_DEBUG=1``), the shape of gpiozero's CLI.

A command line argparse cannot parse is one ``dicetower: error:`` line, a hint naming the
``--help`` page, and exit code 2 (:class:`~.parsing.CliParser`).

Start-up is lazy: ``dicetower roll 1d6`` imports the ``roll`` module only, so a dice roll
never pays for OpenCV and numpy, which the photo commands load. ``dicetower --help`` (or an
unknown command) imports no subcommand module: the command list comes from :data:`COMMANDS`,
which each module's ``register`` also reads its one-line help from.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from importlib import import_module

from .parsing import CliParser

__all__ = ["COMMANDS", "SUBCOMMANDS", "build_parser", "main"]

#: Each subcommand and its one-line help, in the order ``dicetower --help`` lists them. The
#: module of the same name under ``dicetower.firmware.cli`` registers it (and is the only one
#: imported when that command runs); its ``register`` takes the help from here.
COMMANDS: dict[str, str] = {
    "roll": "roll dice notation, e.g. 4d6kh3+2",
    "check": "run a rule system's check (dicetower check --help lists them)",
    "odds": "exact outcome probabilities of a check (dicetower odds --help lists them)",
    "read": "read the dice in one photo",
    "eval": "score the dice reader on folders of labelled photos",
    "calibrate": "choose the reader's thresholds on your own labelled photos",
    "tower": "drive the tower: shake, tap, capture, calibrate, status, run, watch, config, test-panel",
    "record": "throw the tray N times and write photos + manifest.jsonl (a dataset folder)",
    "serve": "run the HTTP/WebSocket API, the OBS overlay and the roll log",
    "hub": "show every tower's rolls from an MQTT broker in one overlay and one checked log",
    "log": "verify or export the roll log, or write the table's labelled examples",
    "fairness": "fairness statistics per physical die, from the roll log",
    "teach": "teach the tower its owner's dice: collect, group, name, fit",
}

#: The subcommand module names, in :data:`COMMANDS` order.
SUBCOMMANDS: tuple[str, ...] = tuple(COMMANDS)


EXAMPLES = """\
examples:
  dicetower roll 4d6kh3+2                   roll dice notation with the RNG
  dicetower roll 4d6kh3+2 --tower sim       roll real (here simulated) dice on the tower
  dicetower check wizard-quest pool --level 5   a rule system's check
  dicetower serve                           the API and the OBS overlay on http://127.0.0.1:8080

Run 'dicetower COMMAND --help' for a command's options and examples.
"""


def build_parser(only: Sequence[str] | None = None) -> argparse.ArgumentParser:
    """The ``dicetower`` parser with the subcommand modules ``only`` (default: all of them).

    A command not in ``only`` is listed with its help from :data:`COMMANDS` and no options,
    so the top-level help and the "invalid choice" error need no module imported.
    """
    parser = CliParser(
        prog="dicetower",
        description="Roll real (or simulated) dice, read them and apply the game's rules.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog=EXAMPLES,
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name, help in COMMANDS.items():
        if only is None or name in only:
            import_module(f"{__name__}.{name}").register(sub)
        else:
            sub.add_parser(name, help=help, add_help=False)
    return parser


def _modules_for(argv: Sequence[str]) -> tuple[str, ...]:
    """The one module a command line needs, when its first word names one; else none."""
    if argv and argv[0] in COMMANDS:
        return (argv[0],)
    return ()


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
