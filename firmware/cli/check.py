"""``dicetower check SYSTEM CHECK --param value … [--faces 6,3,1,4] [--seed N] [--json]``.

The options after CHECK are built from the check's :class:`~dicetower.rules.systems.Param`
list, so every registered system works without CLI code of its own. argparse cannot know
them before SYSTEM and CHECK are read, so the subcommand takes the rest of the line as a
remainder and parses it in a second pass (:func:`parse_check_args`), which ``odds`` shares.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from ...rules.errors import RuleParameterError
from ...rules.source import DiceSource, FixedSource, RandomSource
from ...rules.systems import Check, System, get_system, run_check, system_names
from ...rules.systems.format import format_exact, format_probability, format_result
from ...rules.typed import parse_faces, parse_seed
from . import COMMANDS
from .parsing import CliParser
from .tower import add_tower_arguments, check_on_tower

__all__ = [
    "build_check_parser",
    "describe_system",
    "describe_systems",
    "parse_check_args",
    "parse_faces",
    "register",
]


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "check",
        add_help=False,
        help=COMMANDS["check"],
        description="Run a rule system's check with dice from the RNG (--seed) or typed-in faces (--faces).",
    )
    add_front_arguments(p)
    p.set_defaults(func=run)


def add_front_arguments(p: argparse.ArgumentParser) -> None:
    """SYSTEM, CHECK, -h and the remainder that holds the check's own options."""
    p.add_argument("-h", "--help", action="store_true", help="show systems, checks or a check's options")
    p.add_argument("system", nargs="?", help="rule system, e.g. wizard-quest")
    p.add_argument("check", nargs="?", help="check of that system, e.g. pool")
    p.add_argument("rest", nargs=argparse.REMAINDER, help=argparse.SUPPRESS)


def describe_systems(command: str = "check") -> str:
    """``dicetower check --help``: every system and its checks."""
    lines = [
        f"usage: dicetower {command} SYSTEM CHECK [--PARAM VALUE ...] "
        + ("[--faces F,F,...] [--seed N] " if command == "check" else "")
        + "[--json]",
        "",
        "systems and checks:",
    ]
    for name in system_names():
        system = get_system(name)
        lines.append(f"  {name}  {system.title}")
        for check in system.checks.values():
            lines.append(f"      {check.name:<16} {check.help}")
    lines += ["", "examples:", *SYSTEMS_EXAMPLES[command].splitlines()]
    lines += ["", f"Run 'dicetower {command} SYSTEM --help' for a system's checks, parameters and examples."]
    return "\n".join(lines)


#: The examples of ``dicetower check --help`` and ``dicetower odds --help``.
SYSTEMS_EXAMPLES = {
    "check": """\
  dicetower check wizard-quest pool --level 5          a Wizard Quest pool rolled with the RNG
  dicetower check wcrpg check --dc 45 --skill 35 --faces 40,7   faces rolled by hand
  dicetower check runic-flux skill --level 3 --stat 4 --difficulty 15 --tower sim   real (simulated) dice
  dicetower check wizard-quest pool --level 5 --seed 7 --json   a replayable roll, as JSON
  dicetower check wizard-quest --help                  a system's checks and their parameters""",
    "odds": """\
  dicetower odds wizard-quest pool --level 100         exact odds of a 100d6 pool
  dicetower odds wcrpg check --dc 45 --skill 35 --json   as JSON, with exact fractions
  dicetower odds runic-flux skill --level 3 --stat 4 --difficulty 15
  dicetower odds wizard-quest --help                   a system's checks and their parameters""",
}


def example_for(check: Check, command: str = "check") -> str | None:
    """The check's example command line as ``command`` takes it.

    Examples are written for ``check``; ``odds`` rolls nothing, so its example drops the
    options that choose the dice (``--faces``, ``--seed``, ``--tower`` and the like).
    """
    if not check.example or command == "check":
        return check.example
    words = check.example.split()
    out, skip = [], False
    for word in words:
        if skip:
            skip = False
            continue
        if word in _DICE_OPTIONS:
            skip = True
            continue
        out.append(word)
    if out[:2] == ["dicetower", "check"]:
        out[1] = command
    return " ".join(out)


#: ``check`` options (each with a value) that say where the dice come from.
_DICE_OPTIONS = frozenset({"--faces", "--seed", "--tower", "--replay", "--config", "--save", "--sim-seed"})


def describe_system(system: System, command: str = "check") -> str:
    """``dicetower check wizard-quest --help``: checks with their parameters and examples."""
    lines = [f"{system.name}: {system.title} (rule book {system.rule_book})", ""]
    for check in system.checks.values():
        lines.append(f"  {check.name} - {check.help}")
        for p in check.params:
            lines.append(f"      --{p.name:<20} {_param_help(p)}")
        example = example_for(check, command)
        if example:
            lines.append(f"      example: {example}")
        lines.append(f"      outcomes: {', '.join(check.outcomes)}")
        lines.append("")
    return "\n".join(lines).rstrip()


def _param_help(p: Any) -> str:
    bits = [p.help or p.type.__name__]
    if p.choices:
        bits.append(f"one of {', '.join(map(str, p.choices))}")
    if p.min is not None or p.max is not None:
        lo = "" if p.min is None else f"{p.min:g}"
        hi = "" if p.max is None else f"{p.max:g}"
        bits.append(f"range {lo}..{hi}")
    bits.append("required" if p.required else "optional" if p.default is None else f"default {p.default}")
    return "; ".join(bits)


class _CheckParser(CliParser):
    """The second pass's parser: a usage error is the first pass's one line, hint and exit 2.

    Its prog names the check (``dicetower check wizard-quest pool``), so the hint names that
    check's help page, which lists its parameters.
    """


def build_check_parser(system: System, check: Check, command: str = "check") -> argparse.ArgumentParser:
    """The second-pass parser: one ``--name`` per parameter, plus faces/seed/json."""
    parser = _CheckParser(
        prog=f"dicetower {command} {system.name} {check.name}",
        description=check.help,
        epilog=f"examples:\n  {example}" if (example := example_for(check, command)) else None,
        formatter_class=argparse.RawDescriptionHelpFormatter,
        add_help=False,
        allow_abbrev=False,
    )
    group = parser.add_argument_group("check parameters")
    for p in check.params:
        flags = [f"--{p.name}"]
        if "_" in p.name:
            flags.append(f"--{p.name.replace('_', '-')}")
        kw: dict[str, Any] = {
            "dest": p.name,
            "default": None,
            "help": _param_help(p).replace("%", "%%"),  # argparse %-formats help ("health % before")
            "metavar": p.type.__name__.upper(),
        }
        if p.type is bool:  # --called (true), --called no
            kw.update(nargs="?", const="true", metavar="yes|no")
        group.add_argument(*flags, **kw)
    if command == "check":
        parser.add_argument("--faces", help="typed-in faces in the order asked, e.g. 6,3,1,4")
        parser.add_argument("--seed", help="seed the RNG for a repeatable roll")
        add_tower_arguments(parser)
    parser.add_argument("--json", action="store_true", help="print JSON instead of text")
    return parser


def parse_check_args(
    args: argparse.Namespace, command: str = "check"
) -> tuple[System, Check, dict[str, Any], argparse.Namespace] | str:
    """Resolve SYSTEM, CHECK and the check's options; a ``str`` is help text to print instead."""
    wants_help = args.help or any(a in ("-h", "--help") for a in args.rest)
    if not args.system:
        if wants_help:
            return describe_systems(command)
        raise RuleParameterError(f"which system? Run 'dicetower {command} --help' for the list")
    system = get_system(args.system)
    if not args.check or args.check.startswith("-"):
        if wants_help:
            return describe_system(system, command)
        raise RuleParameterError(
            f"which check of {system.name}? choose from {', '.join(system.checks)}"
            f" (dicetower {command} {system.name} --help)"
        )
    check = system.check(args.check)
    parser = build_check_parser(system, check, command)
    if wants_help:
        return parser.format_help()
    ns, unknown = parser.parse_known_args(args.rest)
    if unknown:
        parser.error(
            f"unknown option(s) {' '.join(unknown)}; "
            f"known: {', '.join('--' + p.name for p in check.params) or 'none'}"
        )
    params = {p.name: getattr(ns, p.name) for p in check.params if getattr(ns, p.name) is not None}
    return system, check, params, ns


def make_source(ns: argparse.Namespace) -> DiceSource:
    if ns.faces is not None and ns.seed is not None:
        raise RuleParameterError("give --faces or --seed, not both")
    if ns.faces is not None:
        return FixedSource(parse_faces(ns.faces))
    if ns.seed is not None:
        return RandomSource(parse_seed(ns.seed))
    return RandomSource()


def run(args: argparse.Namespace) -> int:
    parsed = parse_check_args(args, "check")
    if isinstance(parsed, str):
        print(parsed)
        return 0
    system, check, params, ns = parsed
    if ns.tower:
        return check_on_tower(ns, system, check.name, params)
    result = run_check(system, check.name, make_source(ns), params)
    if ns.json:
        json.dump(result.to_json(), sys.stdout, indent=2)
        print()
        return 0
    print(format_result(result))
    if result.odds and result.outcome in result.odds.probabilities:
        p = result.odds.probabilities[result.outcome]
        print(f"P({result.outcome}) = {format_exact(p)} ≈ {format_probability(p)}")
    return 0
