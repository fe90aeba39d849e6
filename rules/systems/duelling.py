"""Duelling: stat + modifiers + 1d6/2d6 against 10, and percent damage with an opposed 1d6.

Rule book: ``../shared/seeds/001_62e8bc74b5c8f6db.txt``; decisions (the double negatives in
"subtract -4", negative damage, half damage kept exact) are quoted in
``docs/rules/duelling.md``. Every modifier the rule book lists is its own parameter, and a
result's ``details["terms"]`` shows each one's signed contribution, so a referee can read
the sum back term by term.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from ..errors import RuleParameterError
from ..odds import Dist
from ..result import CheckResult, Flag, Odds, RolledDie
from ..source import DieSlot, RollBudget
from .base import Check, Param, System, validate_params
from .format import MINUS, format_number

__all__ = [
    "CAST_LEVEL_MOD",
    "D6_DAMAGE_SOURCES",
    "DAMAGE_LEVEL_MOD",
    "SYSTEM",
    "TARGET",
    "D6Check",
    "DamageCheck",
    "ThresholdCheck",
]

RULE_BOOK = "001_62e8bc74b5c8f6db.txt"

#: "If this number is 10 or higher, the spell is successfully cast" (and every other action).
TARGET = 10

#: Casting and brewing: "Level Mod: 0 for simple spells, -2 for advanced spells, or -4 for difficult spells".
CAST_LEVEL_MOD = {"simple": 0, "advanced": -2, "difficult": -4}
#: Damage: "Level Mod: +1 for advanced spells, +2 for difficult spells".
DAMAGE_LEVEL_MOD = {"simple": 0, "advanced": 1, "difficult": 2}
LEVELS = tuple(CAST_LEVEL_MOD)

#: Casting: "Silent Mod: If it's a silent cast, subtract -4" (the total drops by 4).
SILENT_CAST = -4
#: Damage: "- (opponent resistance + resistance mod - silent mod + 1d6)" with "subtract -2":
#: a silent cast lowers the opponent's resistance side by 2.
SILENT_RESISTANCE = -2
#: Auto-dodge: "- silent mod - specialized spell", each "subtract -2".
SILENT_AUTO_DODGE = -2
SPECIALIZED_AUTO_DODGE = -2

#: What the rule book rolls "using just a 1d6" for damage.
D6_DAMAGE_SOURCES = (
    "wingardium-leviosa",  # fall damage
    "levicorpus",  # fall damage
    "liberacorpus",
    "sonorus",
    "commutati-sonum-acutus",
    "occurromorsus",
    "ally",  # "Damage from allies is rolled using just a 1d6."
)

_KEPT = frozenset({Flag.KEPT})
_STAT = (-100, 100)

Terms = Callable[[Mapping[str, Any]], dict[str, int]]


def _int(name: str, help: str, *, required: bool = True) -> Param:
    return Param(
        name, int, default=None if required else 0, required=required, help=help, min=_STAT[0], max=_STAT[1]
    )


def _flag(name: str, help: str) -> Param:
    return Param(name, bool, default=False, help=help)


def _level(name: str, help: str) -> Param:
    return Param(name, str, default="simple", choices=LEVELS, help=help)


_RP = _flag("rp_bonus", "the post meets the 3x3 requirement (+1)")
_SPECIALIZED = _flag("specialized", "a specialized spell (+2)")
_SILENT = _flag("silent", "a silent cast")
_HALF = _flag("half", "half damage/health, kept exact (75.5 stays 75.5)")
_RESISTANCE = (
    _int("resistance", "the opponent's resistance"),
    _int("resistance_mod", "the opponent's resistance modifiers from previous rounds", required=False),
)
_HEALTH_RANGE = (-1000.0, 1000.0)


def _exact(x: float | int | None) -> Fraction | None:
    """A typed-in health such as 74.5 as an exact fraction (via its decimal text, not its binary float).

    ``nan`` passes every range check (it compares false), so it is refused here by name.
    """
    if x is None:
        return None
    if isinstance(x, float) and not math.isfinite(x):
        raise RuleParameterError(f"health must be a finite number, got {x}")
    return Fraction(str(x))


def _health_text(before: Fraction, after: Fraction) -> str:
    return f"{format_number(before)} → {format_number(after)}"


def _throw_d6(budget: RollBudget, n: int, what: str) -> tuple[list[DieSlot], list[int]]:
    slots = [budget.slot("d6", label=f"{what} {i + 1}" if n > 1 else what) for i in range(n)]
    return slots, budget.throw(slots, what)


def _kept(slots: list[DieSlot], faces: list[int], sign: int = 1) -> list[RolledDie]:
    flags = _KEPT if sign > 0 else frozenset({Flag.KEPT, Flag.SUBTRACTED})
    return [RolledDie(s, f, sign * f, flags) for s, f in zip(slots, faces, strict=True)]


@dataclass
class ThresholdCheck(Check):
    """Named terms + ``dice`` d6; the action works if the sum is :data:`TARGET` (10) or higher."""

    dice: int = 2
    terms: Terms = field(default=lambda p: {})

    def roll(self, budget: RollBudget, **params: Any) -> CheckResult:
        params = validate_params(self, params)  # also fills defaults for direct calls
        terms = self.terms(params)
        slots, faces = _throw_d6(budget, self.dice, f"{self.name} die")
        total = sum(terms.values()) + sum(faces)
        return CheckResult(
            system="duelling",
            check=self.name,
            params=dict(params),
            dice=_kept(slots, faces),
            total=total,
            outcome="success" if total >= TARGET else "failure",
            degree=total - TARGET,
            details={
                "terms": terms,
                "dice_total": sum(faces),
                "target": TARGET,
                "margin": total - TARGET,
                "summary": f"total {total} vs {TARGET}",
            },
        )

    def odds(self, **params: Any) -> Odds:
        params = validate_params(self, params)
        dist = Dist.die("d6").repeat(self.dice) + sum(self.terms(params).values())
        win = dist.prob(lambda t: t >= TARGET)
        return Odds(_nonzero({"success": win, "failure": 1 - win}))


@dataclass
class DamageCheck(Check):
    """Percent damage: attack terms + 2d6 - (resistance terms + 1d6); at most 0 does no damage.

    A zero or negative number is fully resisted: ``damage`` is 0 (it never heals the
    target) while ``total`` keeps the signed number. ``half`` halves the damage exactly.
    """

    attack: Terms = field(default=lambda p: {})
    defence: Terms = field(default=lambda p: {})
    outcomes: tuple[str, ...] = ("damage", "no-damage")

    def roll(self, budget: RollBudget, **params: Any) -> CheckResult:
        params = validate_params(self, params)  # also fills defaults for direct calls
        attack, defence = self.attack(params), self.defence(params)
        a_slots, a_faces = _throw_d6(budget, 2, "attack die")
        d_slots, d_faces = _throw_d6(budget, 1, "opponent's resistance die")
        a_total = sum(attack.values()) + sum(a_faces)
        d_total = sum(defence.values()) + sum(d_faces)
        raw = a_total - d_total
        damage = _damage(max(raw, 0), params["half"])
        details: dict[str, Any] = {
            "attack_terms": attack,
            "resistance_terms": defence,
            "attack": a_total,
            "resistance": d_total,
            "percent": raw,
        }
        summary = f"{a_total} {MINUS} {d_total} = {_signed(raw)}%"
        summary += f" → {format_number(damage)}% damage" if raw > 0 else " → no damage"
        health = _exact(params.get("target_health"))
        if health is not None:
            details["new_health"] = health - damage
            summary += f", health {_health_text(health, health - damage)}"
        details["summary"] = summary
        return CheckResult(
            system="duelling",
            check=self.name,
            params=dict(params),
            dice=[*_kept(a_slots, a_faces), *_kept(d_slots, d_faces, -1)],
            total=raw,
            outcome="damage" if raw > 0 else "no-damage",
            degree=raw,
            damage=damage,
            details=details,
        )

    def odds(self, **params: Any) -> Odds:
        params = validate_params(self, params)
        const = sum(self.attack(params).values()) - sum(self.defence(params).values())
        dist = Dist.die("d6").repeat(2) - Dist.die("d6") + const
        hit = dist.prob(lambda t: t > 0)
        return Odds(
            _nonzero({"damage": hit, "no-damage": 1 - hit}), note="a number at or under 0 does no damage"
        )


def _signed(x: int) -> str:
    return f"{MINUS}{-x}" if x < 0 else str(x)


def _nonzero(p: dict[str, Fraction]) -> dict[str, Fraction]:
    """Only outcomes these parameters can produce (as :class:`Dist` drops impossible values)."""
    return {k: Fraction(v) for k, v in p.items() if v}


def _damage(points: int, half: bool) -> int | Fraction:
    return Fraction(points, 2) if half else points


@dataclass
class D6Check(Check):
    """One d6 read as health gained or percent damage; ``half`` halves it without rounding."""

    gain: bool = True  #: health added (True) or damage taken (False)

    def roll(self, budget: RollBudget, **params: Any) -> CheckResult:
        params = validate_params(self, params)  # also fills defaults for direct calls
        slots, faces = _throw_d6(budget, 1, f"{self.name} die")
        amount = _damage(faces[0], params["half"])
        details: dict[str, Any] = {}
        summary = f"+{format_number(amount)}% health" if self.gain else f"{format_number(amount)}% damage"
        health = _exact(params.get("current_health" if self.gain else "target_health"))
        if health is not None:
            after = health + amount if self.gain else health - amount
            details["new_health"] = after
            summary += (
                f" ({_health_text(health, after)})"
                if self.gain
                else f", health {_health_text(health, after)}"
            )
        details["summary"] = summary
        return CheckResult(
            system="duelling",
            check=self.name,
            params=dict(params),
            dice=_kept(slots, faces),
            total=faces[0],
            outcome=self.outcomes[0],
            damage=None if self.gain else amount,
            details={"amount": amount, **details},
        )

    def odds(self, **params: Any) -> Odds:
        params = validate_params(self, params)
        return Odds({self.outcomes[0]: Fraction(1)}, note="one d6: 1-6 each 1/6 (halved: 0.5-3)")


def _on(flag: bool, amount: int) -> int:
    return amount if flag else 0


def _spell_terms(p: Mapping[str, Any]) -> dict[str, int]:
    return {
        "level": p["level"],
        "ability": p["ability"],
        "ability_mod": p["ability_mod"],
        "rp_bonus": _on(p["rp_bonus"], 1),
        "specialized": _on(p["specialized"], 2),
        "level_mod": CAST_LEVEL_MOD[p["spell_level"]],
        "silent_mod": _on(p["silent"], SILENT_CAST),
    }


def _spell_attack(p: Mapping[str, Any]) -> dict[str, int]:
    return {
        "power": p["power"],
        "power_mod": p["power_mod"],
        "specialized": _on(p["specialized"], 2),
        "level_mod": DAMAGE_LEVEL_MOD[p["spell_level"]],
    }


def _resistance(p: Mapping[str, Any], silent: bool = False) -> dict[str, int]:
    terms = {"resistance": p["resistance"], "resistance_mod": p["resistance_mod"]}
    if silent:
        terms["silent_mod"] = _on(p["silent"], SILENT_RESISTANCE)
    return terms


_TARGET_HEALTH = Param(
    "target_health",
    float,
    help="the target's health % before the damage (optional)",
    min=_HEALTH_RANGE[0],
    max=_HEALTH_RANGE[1],
)
_CURRENT_HEALTH = Param(
    "current_health",
    float,
    help="health % before the gain (optional)",
    min=_HEALTH_RANGE[0],
    max=_HEALTH_RANGE[1],
)


SPELL = ThresholdCheck(
    name="spell",
    help="Charms, Conjuring/Summoning, Transfiguration: level + ability + mods + 1d6 >= 10",
    dice=1,
    terms=_spell_terms,
    params=(
        _int("level", "the caster's C/T/S level"),
        _int("ability", "the caster's ability"),
        _int("ability_mod", "ability modifiers from previous rounds", required=False),
        _RP,
        _SPECIALIZED,
        _level("spell_level", "simple (0), advanced (-2) or difficult (-4)"),
        Param("silent", bool, default=False, help="a silent cast (-4)"),
    ),
    outcomes=("success", "failure"),
    example="dicetower check duelling spell --level 3 --ability 4 --spell-level advanced --rp-bonus true",
    sample_params=(
        {"level": 3, "ability": 4, "spell_level": "advanced", "rp_bonus": True},
        {"level": 4, "ability": 4, "ability_mod": -1, "silent": True, "specialized": True},
        {"level": 5, "ability": 5, "spell_level": "difficult"},
    ),
)

SPELL_DAMAGE = DamageCheck(
    name="spell-damage",
    help="power + mods + 2d6 - (resistance + mods - silent + 1d6) = percent damage",
    attack=_spell_attack,
    defence=lambda p: _resistance(p, silent=True),
    params=(
        _int("power", "the caster's power"),
        _int("power_mod", "power modifiers from previous rounds", required=False),
        _SPECIALIZED,
        _level("spell_level", "simple (0), advanced (+1) or difficult (+2)"),
        *_RESISTANCE,
        Param("silent", bool, default=False, help="a silent cast (the opponent's resistance side -2)"),
        _HALF,
        _TARGET_HEALTH,
    ),
    example="dicetower check duelling spell-damage --power 4 --resistance 3 --spell-level difficult",
    sample_params=(
        {"power": 4, "resistance": 3, "spell_level": "difficult"},
        {"power": 1, "resistance": 6, "resistance_mod": 1, "half": True},
        {"power": 1, "power_mod": -1, "resistance": 5, "silent": True, "specialized": True},
    ),
)

PHYSICAL = ThresholdCheck(
    name="physical",
    help="physical action (rearming, a snowball, tripping): strength + mod + RP + 2d6 >= 10",
    terms=lambda p: {
        "strength": p["strength"],
        "strength_mod": p["strength_mod"],
        "rp_bonus": _on(p["rp_bonus"], 1),
    },
    params=(
        _int("strength", "the duellist's strength"),
        _int("strength_mod", "strength modifiers from previous rounds", required=False),
        _RP,
    ),
    outcomes=("success", "failure"),
    example="dicetower check duelling physical --strength 2 --rp-bonus true",
    sample_params=({"strength": 2, "rp_bonus": True}, {"strength": 0}, {"strength": 5, "strength_mod": -2}),
)

PHYSICAL_DAMAGE = DamageCheck(
    name="physical-damage",
    help="strength + mod + 2d6 - (resistance + mod + 1d6) = percent damage",
    attack=lambda p: {"strength": p["strength"], "strength_mod": p["strength_mod"]},
    defence=_resistance,
    params=(
        _int("strength", "the duellist's strength"),
        _int("strength_mod", "strength modifiers from previous rounds", required=False),
        *_RESISTANCE,
        _HALF,
        _TARGET_HEALTH,
    ),
    example="dicetower check duelling physical-damage --strength 3 --resistance 2",
    sample_params=({"strength": 3, "resistance": 2}, {"strength": 0, "resistance": 4, "half": True}),
)

DODGE = ThresholdCheck(
    name="dodge",
    help="dodge (before the spell it protects against): agility + mod + RP + 2d6 >= 10",
    terms=lambda p: {
        "agility": p["agility"],
        "agility_mod": p["agility_mod"],
        "rp_bonus": _on(p["rp_bonus"], 1),
    },
    params=(
        _int("agility", "the duellist's agility"),
        _int("agility_mod", "agility modifiers from previous rounds", required=False),
        _RP,
    ),
    outcomes=("success", "failure"),
    example="dicetower check duelling dodge --agility 3",
    sample_params=({"agility": 3}, {"agility": 1, "agility_mod": 2, "rp_bonus": True}),
)

AUTO_DODGE = ThresholdCheck(
    name="auto-dodge",
    help="auto-dodge of a direct spell or physical action: agility + mod + 1d6 - silent - specialized >= 10",
    dice=1,
    terms=lambda p: {
        "agility": p["agility"],
        "agility_mod": p["agility_mod"],
        "silent_mod": _on(p["silent"], SILENT_AUTO_DODGE),
        "specialized": _on(p["specialized"], SPECIALIZED_AUTO_DODGE),
    },
    params=(
        _int("agility", "the target's agility"),
        _int("agility_mod", "agility modifiers from previous rounds", required=False),
        Param("silent", bool, default=False, help="the incoming spell is a silent cast (-2)"),
        Param("specialized", bool, default=False, help="the incoming spell is specialized (-2)"),
    ),
    outcomes=("success", "failure"),
    example="dicetower check duelling auto-dodge --agility 6 --silent true",
    sample_params=({"agility": 6, "silent": True}, {"agility": 8}, {"agility": 9, "specialized": True}),
)

POTION = ThresholdCheck(
    name="potion",
    help="potion: potions + mod + RP - level + 2d6 >= 10",
    terms=lambda p: {
        "potions": p["potions"],
        "potions_mod": p["potions_mod"],
        "rp_bonus": _on(p["rp_bonus"], 1),
        "level_mod": CAST_LEVEL_MOD[p["potion_level"]],
    },
    params=(
        _int("potions", "the duellist's potions score"),
        _int("potions_mod", "potions modifiers from previous rounds", required=False),
        _RP,
        _level("potion_level", "simple (0), advanced (-2) or difficult (-4)"),
    ),
    outcomes=("success", "failure"),
    example="dicetower check duelling potion --potions 4 --potion-level advanced",
    sample_params=({"potions": 4, "potion_level": "advanced"}, {"potions": 2, "rp_bonus": True}),
)

POTION_DAMAGE = DamageCheck(
    name="potion-damage",
    help="potions + mod + level + 2d6 - (resistance + mod + 1d6) = percent damage",
    attack=lambda p: {
        "potions": p["potions"],
        "potions_mod": p["potions_mod"],
        "level_mod": DAMAGE_LEVEL_MOD[p["potion_level"]],
    },
    defence=_resistance,
    params=(
        _int("potions", "the duellist's potions score"),
        _int("potions_mod", "potions modifiers from previous rounds", required=False),
        _level("potion_level", "simple (0), advanced (+1) or difficult (+2)"),
        *_RESISTANCE,
        _HALF,
        _TARGET_HEALTH,
    ),
    example="dicetower check duelling potion-damage --potions 3 --resistance 2 --potion-level difficult",
    sample_params=(
        {"potions": 3, "resistance": 2, "potion_level": "difficult"},
        {"potions": 1, "resistance": 5, "half": True},
    ),
)

HEALTH = D6Check(
    name="health",
    help="health requested for a creative spell, physical action or original potion: 1d6",
    gain=True,
    params=(_HALF, _CURRENT_HEALTH),
    outcomes=("health",),
    example="dicetower check duelling health --half true --current-health 74",
    sample_params=({}, {"half": True, "current_health": 74}),
)

D6_DAMAGE = D6Check(
    name="d6-damage",
    help="damage rolled with just 1d6 (falls from Wingardium Leviosa/Levicorpus, Liberacorpus, "
    "Sonorus, Commutati Sonum Acutus, Occurromorsus, allies)",
    gain=False,
    params=(
        Param("source", str, choices=D6_DAMAGE_SOURCES, help="what deals the damage (optional)"),
        _HALF,
        _TARGET_HEALTH,
    ),
    outcomes=("damage",),
    example="dicetower check duelling d6-damage --source levicorpus --half true",
    sample_params=({"source": "levicorpus"}, {"source": "ally", "half": True, "target_health": 80}),
)

SYSTEM = System(
    name="duelling",
    title="Duelling",
    rule_book=RULE_BOOK,
    checks={
        c.name: c
        for c in (
            SPELL,
            SPELL_DAMAGE,
            PHYSICAL,
            PHYSICAL_DAMAGE,
            DODGE,
            AUTO_DODGE,
            POTION,
            POTION_DAMAGE,
            HEALTH,
            D6_DAMAGE,
        )
    },
)
