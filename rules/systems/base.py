"""One interface for the four rule systems; each system is one module behind it.

A :class:`System` is a named dict of :class:`Check` objects. A check declares its
parameters (named as in the rule book), rolls against a :class:`~dicetower.rules.source.RollBudget`
and computes the exact :class:`~dicetower.rules.result.Odds` of its outcomes.
:func:`run_check` is the one entry point the CLI, API and tower use.
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ..errors import RuleParameterError, UnknownCheckError
from ..result import CheckResult, Odds
from ..source import DiceSource, RollBudget

__all__ = ["Check", "Param", "System", "run_check", "validate_params"]


@dataclass(frozen=True)
class Param:
    """A check parameter: ``--level 3`` on the CLI, ``{"level": 3}`` in JSON."""

    name: str
    type: type = int  #: int, float, bool or str
    default: Any = None  #: ``None`` with ``required=True`` means the caller must give it
    required: bool = False
    help: str = ""
    min: float | None = None
    max: float | None = None
    choices: tuple[Any, ...] = ()


@dataclass
class Check(ABC):
    """One kind of roll in a system (a Runic Flux skill roll, a WCRPG d% check…).

    Subclasses *must* set ``name``/``help``/``params`` and override :meth:`roll` and
    :meth:`odds`; ``outcomes`` lists every outcome name :meth:`roll` can return.
    """

    name: str = ""
    help: str = ""
    params: tuple[Param, ...] = ()
    outcomes: tuple[str, ...] = ()
    example: str = ""  #: a CLI example, shown in --help
    #: representative parameter sets; property tests run odds/frequency checks over them
    sample_params: tuple[dict[str, Any], ...] = ()

    @abstractmethod
    def roll(self, budget: RollBudget, **params: Any) -> CheckResult:
        """Throw the dice through ``budget`` and apply the rules."""

    @abstractmethod
    def odds(self, **params: Any) -> Odds:
        """Exact probability of each outcome for these parameters."""


@dataclass
class System:
    """A rule system: a name, the rule book it implements (a file of ``../shared/seeds/``), and its checks."""

    name: str
    title: str
    rule_book: str
    checks: dict[str, Check] = field(default_factory=dict)

    def check(self, name: str) -> Check:
        try:
            return self.checks[name]
        except KeyError:
            raise UnknownCheckError(
                f"{self.name} has no check {name!r}; choose from {', '.join(sorted(self.checks))}"
            ) from None


def validate_params(check: Check, given: Mapping[str, Any]) -> dict[str, Any]:
    """Fill defaults, cast, range-check and reject unknown parameters, with clear errors."""
    known = {p.name: p for p in check.params}
    unknown = sorted(set(given) - set(known))
    if unknown:
        raise RuleParameterError(
            f"{check.name}: unknown parameter(s) {', '.join(unknown)}; known: {', '.join(known) or 'none'}"
        )
    out: dict[str, Any] = {}
    for p in check.params:
        if p.name not in given or given[p.name] is None:
            if p.required:
                raise RuleParameterError(f"{check.name}: missing parameter {p.name} ({p.help})")
            out[p.name] = p.default
            continue
        v = given[p.name]
        try:
            if isinstance(v, bool) is not (p.type is bool) and not isinstance(v, str):
                # bool is an int in Python: ``"level": true`` must not be level 1, nor 5 a yes
                raise ValueError(v)
            if p.type is bool and isinstance(v, str):
                if v.lower() not in ("1", "0", "true", "false", "yes", "no"):
                    raise ValueError(v)
                v = v.lower() in ("1", "true", "yes")
            elif p.type is int and isinstance(v, float) and not v.is_integer():
                raise ValueError(v)
            else:
                v = p.type(v)
        except (TypeError, ValueError):
            raise RuleParameterError(
                f"{check.name}: {p.name} must be {p.type.__name__}, got {given[p.name]!r}"
            ) from None
        if isinstance(v, float) and not math.isfinite(v):
            raise RuleParameterError(f"{check.name}: {p.name} must be a finite number, got {v}")
        if p.min is not None and v < p.min:
            raise RuleParameterError(f"{check.name}: {p.name} must be at least {p.min}, got {v}")
        if p.max is not None and v > p.max:
            raise RuleParameterError(f"{check.name}: {p.name} must be at most {p.max}, got {v}")
        if p.choices and v not in p.choices:
            raise RuleParameterError(f"{check.name}: {p.name} must be one of {p.choices}, got {v!r}")
        out[p.name] = v
    return out


def run_check(
    system: System, check_name: str, source: DiceSource, params: Mapping[str, Any], *, with_odds: bool = True
) -> CheckResult:
    """Validate parameters, roll through ``source``, attach the exact odds."""
    check = system.check(check_name)
    clean = validate_params(check, params)
    budget = RollBudget(source)
    result = check.roll(budget, **clean)
    source.finish()
    if with_odds:
        result.odds = check.odds(**clean)
    return result
