"""The parser class every ``dicetower`` parser and subparser is made of.

argparse answers a command line it cannot parse with the whole usage block and a
``PROG: error:`` line that names the subcommand's prog (``dicetower tower config: error:``).
The README promises one ``dicetower: error: ...`` line, so :class:`CliParser` prints that
line and a hint naming the ``--help`` page to read, and exits 2: the code argparse and POSIX
utilities give a command line that does not parse, apart from the 1 of a command that ran and
failed. Subparsers are made of the same class (``add_subparsers`` uses ``type(self)``).

Help pages keep their examples and tables as written (argparse's raw description), but a prose
line wider than the terminal is wrapped (:class:`HelpFormatter`): a description written as one
long string reads as a paragraph, not as one line off the screen's edge.
"""

from __future__ import annotations

import argparse
import sys
import textwrap
from typing import Any, NoReturn

__all__ = ["USAGE_EXIT", "CliParser", "HelpFormatter"]

#: The exit code of a command line that does not parse.
USAGE_EXIT = 2


class HelpFormatter(argparse.RawDescriptionHelpFormatter):
    """Descriptions and epilogs as written, but for prose lines wider than the terminal, wrapped.

    A line that starts at the margin is prose and is filled to the width; an indented line (an
    example command, a table row) is kept whole, so it can be copied and pasted.
    """

    def _fill_text(self, text: str, width: int, indent: str) -> str:
        lines = []
        for line in text.splitlines():
            if len(line) > width and not line[:1].isspace():
                lines += textwrap.wrap(line, width, break_on_hyphens=False)
            else:
                lines.append(line)
        return "\n".join(indent + line for line in lines)


class CliParser(argparse.ArgumentParser):
    """An ``ArgumentParser`` whose usage errors are one ``dicetower: error:`` line and a hint.

    A parser asked for argparse's raw description gets :class:`HelpFormatter`, which wraps prose.
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        if kwargs.get("formatter_class") is argparse.RawDescriptionHelpFormatter:
            kwargs["formatter_class"] = HelpFormatter
        super().__init__(*args, **kwargs)

    def error(self, message: str) -> NoReturn:
        from ...rules.errors import printable

        command = self.prog.removeprefix("dicetower").strip()
        where = f"{command}: " if command else ""
        print(f"dicetower: error: {where}{printable(message)}", file=sys.stderr)
        print(f"  see '{printable(self.prog)} --help' for the options and examples", file=sys.stderr)
        raise SystemExit(USAGE_EXIT)
