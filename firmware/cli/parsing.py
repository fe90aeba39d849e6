"""The parser class every ``dicetower`` parser and subparser is made of.

argparse answers a command line it cannot parse with the whole usage block and a
``PROG: error:`` line that names the subcommand's prog (``dicetower tower config: error:``).
The README promises one ``dicetower: error: ...`` line, so :class:`CliParser` prints that
line and a hint naming the ``--help`` page to read, and exits 2: the code argparse and POSIX
utilities give a command line that does not parse, apart from the 1 of a command that ran and
failed. Subparsers are made of the same class (``add_subparsers`` uses ``type(self)``).
"""

from __future__ import annotations

import argparse
import sys
from typing import NoReturn

__all__ = ["USAGE_EXIT", "CliParser"]

#: The exit code of a command line that does not parse.
USAGE_EXIT = 2


class CliParser(argparse.ArgumentParser):
    """An ``ArgumentParser`` whose usage errors are one ``dicetower: error:`` line and a hint."""

    def error(self, message: str) -> NoReturn:
        from ...rules.errors import printable

        command = self.prog.removeprefix("dicetower").strip()
        where = f"{command}: " if command else ""
        print(f"dicetower: error: {where}{printable(message)}", file=sys.stderr)
        print(f"  see '{printable(self.prog)} --help' for the options and examples", file=sys.stderr)
        raise SystemExit(USAGE_EXIT)
