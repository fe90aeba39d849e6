"""Wizard Quest resistance, saving throws and initiative: single rolls against a number."""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from ...result import CheckResult, Flag, Odds, RolledDie
from ...source import Role, RollBudget
from ..base import Check
from .dice import SYSTEM_NAME, d20_grades, hit_die, odds_of, throw_pool
from .scales import read_d20

__all__ = [
    "SAVE_TARGET",
    "InitiativeCheck",
    "ResistanceCheck",
    "ResistanceHitCheck",
    "Save4d6Check",
    "SaveCheck",
    "percentile",
]


def percentile(tens: int, units: int) -> int:
    """A d10t + d10 pair read 1-100: 00 and 0 is 100, otherwise tens + units (00 and 7 is 7)."""
    value = tens + units
    return 100 if value == 0 else value


@dataclass
class ResistanceCheck(Check):
    """1d100 (tens die + units die) at or under the resistance % resists."""

    def roll(self, budget: RollBudget, **p: Any) -> CheckResult:
        t = budget.slot("d10t", role=Role.TENS, label="d100 tens")
        u = budget.slot("d10", role=Role.UNITS, label="d100 units")
        tens, units = budget.throw([t, u], "d100 resistance")
        value = percentile(tens, units)
        ok = value <= p["resistance"]
        dice = [
            RolledDie(t, tens, tens, frozenset({Flag.KEPT})),
            RolledDie(u, units, units, frozenset({Flag.KEPT})),
        ]
        return CheckResult(
            SYSTEM_NAME,
            self.name,
            dict(p),
            dice,
            value,
            "resisted" if ok else "affected",
            details={"summary": f"{value} vs {p['resistance']}%"},
        )

    def odds(self, **p: Any) -> Odds:
        q = Fraction(p["resistance"], 100)
        return odds_of({"resisted": q, "affected": 1 - q}, self.outcomes)


@dataclass
class ResistanceHitCheck(Check):
    """No d100: hit dice + 1 HB per 10% resistance; resistance fails on a miss."""

    def roll(self, budget: RollBudget, **p: Any) -> CheckResult:
        hb = p["resistance"] // 10
        slot, face = budget.throw_one("d20", label="resistance hit die", reason="resistance hit dice")
        read = read_d20(face, hb, called=False)
        outcome = "resisted" if read.lands else "affected"
        return CheckResult(
            SYSTEM_NAME,
            self.name,
            dict(p),
            [hit_die(slot, face, read)],
            read.total,
            outcome,
            details={"hb": hb, "natural": face, "summary": f"{read.total} ({read.grade})"},
        )

    def odds(self, **p: Any) -> Odds:
        c = d20_grades(p["resistance"] // 10, False)
        q = Fraction(20 - c["miss"], 20)
        return odds_of({"resisted": q, "affected": 1 - q}, self.outcomes)


#: "11+ succeeds" on a d20 saving throw.
SAVE_TARGET = 11


@dataclass
class SaveCheck(Check):
    """Saving throw vs death blows or capture: 1d20 + save bonus, 11+ succeeds."""

    def roll(self, budget: RollBudget, **p: Any) -> CheckResult:
        slot, face = budget.throw_one("d20", label="saving throw", reason="saving throw")
        total = face + p["bonus"]
        outcome = "success" if total >= SAVE_TARGET else "failure"
        return CheckResult(
            SYSTEM_NAME,
            self.name,
            dict(p),
            [RolledDie(slot, face, face, frozenset({Flag.KEPT}))],
            total,
            outcome,
            details={"summary": f"{total} vs {SAVE_TARGET}"},
        )

    def odds(self, **p: Any) -> Odds:
        q = Fraction(sum(1 for f in range(1, 21) if f + p["bonus"] >= SAVE_TARGET), 20)
        return odds_of({"success": q, "failure": 1 - q}, self.outcomes)


@dataclass
class Save4d6Check(Check):
    """Saving throw without a d20: 4d6 plus 1d6 per +1 save bonus; one Ace succeeds."""

    def roll(self, budget: RollBudget, **p: Any) -> CheckResult:
        slots, faces = throw_pool(budget, 4 + p["bonus"], who="save", reason="4d6 saving throw")
        aces = sum(1 for f in faces if f == 6)
        dice = [
            RolledDie(s, f, 1 if f == 6 else 0, frozenset({Flag.ACE} if f == 6 else ()))
            for s, f in zip(slots, faces, strict=True)
        ]
        return CheckResult(
            SYSTEM_NAME,
            self.name,
            dict(p),
            dice,
            aces,
            "success" if aces else "failure",
            details={"aces": aces, "summary": f"{aces} ace{'s' if aces != 1 else ''}"},
        )

    def odds(self, **p: Any) -> Odds:
        n = 4 + p["bonus"]
        none = Fraction(5**n, 6**n)
        return odds_of({"success": 1 - none, "failure": none}, self.outcomes)


@dataclass
class InitiativeCheck(Check):
    """1d6 each; the highest roll attacks first (a tie is reported, the table rerolls)."""

    def roll(self, budget: RollBudget, **p: Any) -> CheckResult:
        a = budget.slot("d6", label="your initiative")
        b = budget.slot("d6", label="opponent's initiative")
        mine, theirs = budget.throw([a, b], "initiative")
        outcome = "first" if mine > theirs else ("second" if mine < theirs else "tie")
        dice = [
            RolledDie(a, mine, mine, frozenset({Flag.KEPT})),
            RolledDie(b, theirs, theirs, frozenset({Flag.KEPT})),
        ]
        return CheckResult(
            SYSTEM_NAME,
            self.name,
            dict(p),
            dice,
            mine,
            outcome,
            details={"opponent": theirs, "summary": f"{mine} vs {theirs}"},
        )

    def odds(self, **p: Any) -> Odds:
        return odds_of(
            {"first": Fraction(15, 36), "second": Fraction(15, 36), "tie": Fraction(6, 36)}, self.outcomes
        )
