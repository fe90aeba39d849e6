"""The evaluated result tree every roll and check returns.

One shape for notation rolls and system checks, so the CLI, the JSON API, the overlay and
the roll log render any result without knowing which rules produced it. JSON keys are
part of the documented, stable schema (``docs/json-schema.md``): add keys, never rename.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from fractions import Fraction
from typing import Any

from .source import DieSlot

__all__ = ["CheckResult", "Flag", "Odds", "RolledDie", "number_json", "slot_json"]


class Flag(StrEnum):
    """What happened to one die."""

    KEPT = "kept"
    DROPPED = "dropped"
    EXPLODED = "exploded"  #: this die exploded (a follow-up die was thrown because of it)
    REROLLED = "rerolled"  #: this die was rerolled (its value no longer counts)
    SUCCESS = "success"
    ACE = "ace"
    ONE = "one"
    WILD = "wild"
    BOTCH = "botch"
    CRITICAL = "critical"
    SUBTRACTED = "subtracted"  #: counts against the total (Runic Flux botch reroll)


@dataclass(frozen=True, slots=True)
class RolledDie:
    """One die as thrown: its slot, the printed face, what it is worth, and its flags."""

    slot: DieSlot
    face: int
    value: int | float
    flags: frozenset[Flag] = frozenset()

    @property
    def counted(self) -> bool:
        """Whether the die's value is part of the total."""
        return Flag.DROPPED not in self.flags and Flag.REROLLED not in self.flags

    def to_json(self) -> dict[str, Any]:
        return {
            **slot_json(self.slot),
            "face": self.face,
            "value": number_json(self.value),
            "flags": sorted(f.value for f in self.flags),
        }


def slot_json(slot: DieSlot) -> dict[str, Any]:
    """A slot as every JSON document writes it: a rolled die, a throw record, a roll log row.

    One shape everywhere, so a roll from the RNG and one from the tower store the same slots
    and a reader of the log need not know which rolled. The kind is ``die``, the name
    :class:`~dicetower.rules.source.DieSlot` and the vision manifest give it.
    """
    return {
        "slot": slot.slot,
        "die": slot.die,
        "role": slot.role.value,
        "purpose": slot.purpose.value,
        "of_slot": slot.of_slot,
        "label": slot.label,
    }


def number_json(x: int | float | Fraction | None) -> int | float | None:
    """Numbers for JSON: ints stay ints, halves stay exact decimals (Duelling's 75.5%)."""
    if x is None:
        return None
    if isinstance(x, Fraction):
        return int(x) if x.denominator == 1 else float(x)
    if isinstance(x, float) and x.is_integer():
        return int(x)
    return x


@dataclass(frozen=True)
class Odds:
    """Probability of each outcome of a check, before it is rolled.

    ``probabilities`` sum to 1 (within ``truncation_error`` when explosions are cut at a
    depth). Keys are the same outcome names a :class:`CheckResult` uses.
    """

    probabilities: dict[str, Fraction | float]
    truncation_error: float = 0.0
    note: str = ""

    def to_json(self) -> dict[str, Any]:
        return {
            "probabilities": {k: float(v) for k, v in self.probabilities.items()},
            "truncation_error": self.truncation_error,
            "note": self.note,
        }


@dataclass
class CheckResult:
    """A system check, evaluated: the dice, the total and the system's outcome.

    ``outcome`` is a short name from the system's documented vocabulary (``success``,
    ``failure``, ``botch``, ``stalemate``, ``hit``, ``miss``…); ``details`` holds
    system-specific numbers (successes, aces, degree, damage parts) for formatters.
    """

    system: str
    check: str
    params: dict[str, Any]
    dice: list[RolledDie]
    total: int | float | Fraction
    outcome: str
    degree: int | None = None
    critical: bool = False
    botch: bool = False
    damage: int | float | Fraction | None = None
    details: dict[str, Any] = field(default_factory=dict)
    odds: Odds | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "schema": "dicetower.check/1",
            "system": self.system,
            "check": self.check,
            "params": self.params,
            "dice": [d.to_json() for d in self.dice],
            "total": number_json(self.total),
            "outcome": self.outcome,
            "degree": self.degree,
            "critical": self.critical,
            "botch": self.botch,
            "damage": number_json(self.damage),
            "details": {
                k: number_json(v) if isinstance(v, (int, float, Fraction)) else v
                for k, v in self.details.items()
            },
            "odds": self.odds.to_json() if self.odds else None,
        }
