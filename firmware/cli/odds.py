"""``dicetower odds SYSTEM CHECK --param value … [--json]``: the exact outcome table of a check.

Options come from the check's parameters, parsed exactly as ``dicetower check`` does
(:func:`~dicetower.firmware.cli.check.parse_check_args`); nothing is rolled.
"""

from __future__ import annotations

import argparse
import json
import sys
from fractions import Fraction
from typing import Any

from ...rules.result import Odds
from ...rules.systems import validate_params
from ...rules.systems.format import format_exact, format_params, format_probability
from . import COMMANDS
from .check import add_front_arguments, parse_check_args

__all__ = ["format_table", "odds_json", "register"]


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "odds",
        add_help=False,
        help=COMMANDS["odds"],
        description="Print the exact probability of each outcome of a check, without rolling.",
    )
    add_front_arguments(p)
    p.set_defaults(func=run)


def format_table(title: str, odds: Odds) -> str:
    """A fixed-width table: outcome, percentage, exact fraction."""
    width = max([len("outcome"), *(len(k) for k in odds.probabilities)])
    lines = [title, f"{'outcome':<{width}}  {'probability':>12}  exact"]
    for name, p in odds.probabilities.items():
        lines.append(f"{name:<{width}}  {format_probability(p):>12}  {format_exact(p)}")
    if odds.truncation_error:
        lines.append(
            f"(explosions truncated: probabilities may be short by up to {odds.truncation_error:.3g})"
        )
    if odds.note:
        lines.append(f"note: {odds.note}")
    return "\n".join(lines)


def odds_json(system: str, check: str, params: dict[str, Any], odds: Odds) -> dict[str, Any]:
    """Schema ``dicetower.odds/1`` (docs/json-schema.md): floats plus exact ``"n/d"`` strings."""
    return {
        "schema": "dicetower.odds/1",
        "system": system,
        "check": check,
        "params": params,
        **odds.to_json(),
        "exact": {k: str(v) if isinstance(v, Fraction) else None for k, v in odds.probabilities.items()},
    }


def run(args: argparse.Namespace) -> int:
    parsed = parse_check_args(args, "odds")
    if isinstance(parsed, str):
        print(parsed)
        return 0
    system, check, params, ns = parsed
    clean = validate_params(check, params)
    odds = check.odds(**clean)
    if ns.json:
        json.dump(odds_json(system.name, check.name, clean, odds), sys.stdout, indent=2)
        print()
        return 0
    shown = format_params(clean, {p.name: p.default for p in check.params if not p.required})
    print(format_table(f"{system.name} {check.name}" + (f" {shown}" if shown else ""), odds))
    return 0
