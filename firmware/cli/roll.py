"""``dicetower roll EXPR [--seed N | --faces 6,3,1,4] [--json]``: roll dice notation.

The dice come from the secure RNG, a seeded RNG (``--seed``, for replays) or faces the user
rolled by hand (``--faces``, consumed in the order the roll asks for them). A syntax error
is printed with a caret under the offending character.
"""

from __future__ import annotations

import argparse
import json
import sys

from ...rules.errors import RollSyntaxError, caret_lines
from ...rules.notation import Roller
from ...rules.source import DiceSource, FixedSource, RandomSource
from ...rules.typed import parse_faces, parse_seed
from . import COMMANDS
from .tower import add_tower_arguments, roll_on_tower

__all__ = ["EXAMPLES", "parse_faces", "register", "run"]

EXAMPLES = """\
examples:
  dicetower roll 4d6kh3+2                   ability score: best three of 4d6, plus 2
  dicetower roll 4d6kh3+2 --faces 1,4,5,6   faces you rolled by hand -> 17
  dicetower roll "2d20kl1 + 5" --seed 7     a replayable roll at disadvantage
  dicetower roll "6d6>=4w6:5f1"             Wizard Quest pool: 4-5 one success, a 6 five, count ones
  dicetower roll d% --json                  percentile (00-99) as a dicetower.roll/1 document
  dicetower roll d6x4                       Rolz: four separate d6 rolls
  dicetower roll --seed 3 -- -1d6+3         an expression starting with "-" goes after "--" (options first)
  dicetower roll 4d6kh3+2 --tower sim       roll real (simulated) dice: the tower shakes, photographs, reads
  dicetower roll 2d6 --tower config --taught my-dice   the dice my-dice knows read by their own reader

notation: docs/notation.md (NdX, d%, d100, + - * /, kh kl dh dl, !, r ro, mi ma, >=N wV:W, fN, xN)
"""


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "roll",
        help=COMMANDS["roll"],
        description="Roll dice notation with the RNG, a seed, or faces rolled by hand.",
        epilog=EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("expression", nargs="+", help="dice notation; several words are joined with spaces")
    src = p.add_mutually_exclusive_group()
    src.add_argument("--seed", help="seed the RNG so the roll can be replayed")
    src.add_argument("--faces", help="printed faces rolled by hand, in order, e.g. 6,3,1,4")
    p.add_argument("--json", action="store_true", help="print the dicetower.roll/1 JSON document")
    add_tower_arguments(p)
    p.set_defaults(func=run)


def _source(args: argparse.Namespace) -> DiceSource:
    if args.faces is not None:
        return FixedSource(parse_faces(args.faces))
    if args.seed is not None:
        return RandomSource(parse_seed(args.seed))
    return RandomSource()


def run(args: argparse.Namespace) -> int:
    expr = " ".join(args.expression)
    try:
        if args.tower:
            return roll_on_tower(args, Roller(cache_size=0).parse(expr))
        result = Roller(cache_size=0).roll(expr, _source(args))
    except RollSyntaxError as exc:
        # the caret must line up under the expression, so it is not prefixed like other errors
        print(f"dicetower: error: {exc}", file=sys.stderr)
        for line in caret_lines(exc.expression, exc.position):
            print(f"  {line}", file=sys.stderr)
        return 1
    if args.json:
        print(json.dumps(result.to_json(), indent=2))
    else:
        print(result.text)
    return 0
