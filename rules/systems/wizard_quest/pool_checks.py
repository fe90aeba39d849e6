"""Wizard Quest pool checks: Level d6 alone (with focus rerolls) and pool against pool."""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from ...errors import RuleParameterError
from ...result import CheckResult, Flag, Odds, RolledDie
from ...source import MAX_DICE, RollBudget
from ..base import Check
from .costs import MAX_FOCUS, focus_stamina_cost
from .dice import SYSTEM_NAME, compare_pools, odds_of, pool_details, pool_dice, throw_pool
from .pools import opposed_weights, pool_weights, read_pool

__all__ = ["OpposedCheck", "PoolCheck"]


@dataclass
class PoolCheck(Check):
    """Action / check dice: Level d6, with optional focus rerolls of a failed or botched pool."""

    def roll(self, budget: RollBudget, **p: Any) -> CheckResult:
        level, rule, focus, used = p["level"], p["botch_rule"], p["focus"], p["focus_used"]
        _check_focus(level, focus, used)
        slots, faces = throw_pool(budget, level, who="", reason="action dice")
        read = read_pool(faces, rule)
        dice: list[RolledDie] = []
        rerolls = stamina = 0
        while rerolls < focus and (read.botch or read.successes == 0):
            rerolls += 1
            stamina += focus_stamina_cost(used + rerolls)
            dice.extend(
                RolledDie(d.slot, d.face, d.value, d.flags | {Flag.REROLLED})
                for d in pool_dice(slots, faces, read)
            )
            slots, faces = throw_pool(budget, level, who="focus", reason=f"reroll {rerolls}", replaces=slots)
            read = read_pool(faces, rule)
        dice.extend(pool_dice(slots, faces, read))
        outcome = "botch" if read.botch else ("success" if read.successes else "failure")
        details = pool_details("", level, read)
        summary = read.summary()
        if rerolls:
            summary += f", {rerolls} focus reroll{'s' if rerolls != 1 else ''}, {stamina} stamina"
        details.update(focus_rerolls=rerolls, focus_stamina=stamina, summary=summary)
        return CheckResult(
            SYSTEM_NAME,
            self.name,
            dict(p),
            dice,
            read.successes,
            outcome,
            degree=read.successes,
            botch=read.botch,
            details=details,
        )

    def odds(self, **p: Any) -> Odds:
        _check_focus(p["level"], p["focus"], p["focus_used"])
        w = pool_weights(p["level"], p["botch_rule"])
        base = w.probabilities()
        bad = base["botch"] + base["failure"]
        k = p["focus"]
        # reroll while bad: success can happen on any of the k+1 throws; a bad end needs all k+1 bad
        probs = {
            "success": base["success"] * sum((bad**i for i in range(k + 1)), Fraction(0)),
            "failure": base["failure"] * bad**k,
            "botch": base["botch"] * bad**k,
        }
        return odds_of(probs, self.outcomes)


def _check_focus(level: int, focus: int, used: int) -> None:
    if focus + used > MAX_FOCUS:
        raise RuleParameterError(
            f"pool: up to {MAX_FOCUS} focus rerolls per conflict; {used} used, {focus} more asked"
        )
    if level * (focus + 1) > MAX_DICE:  # refuse up front rather than stop mid-roll
        raise RuleParameterError(
            f"pool: {level} dice with {focus} focus rerolls could need {level * (focus + 1)} dice;"
            f" a check may throw at most {MAX_DICE}"
        )


@dataclass
class OpposedCheck(Check):
    """Pool vs pool: most Aces wins, then most successes, then stalemate; a botch fails."""

    def roll(self, budget: RollBudget, **p: Any) -> CheckResult:
        level, other, rule = p["level"], p["opponent_level"], p["botch_rule"]
        s1, f1 = throw_pool(budget, level, who="", reason="action dice")
        s2, f2 = throw_pool(budget, other, who="opponent", reason="opponent's action dice")
        mine, theirs = read_pool(f1, rule), read_pool(f2, rule)
        outcome = compare_pools(mine, theirs)
        details = pool_details("", level, mine) | pool_details("opponent_", other, theirs)
        details["summary"] = f"{mine.summary()} vs {theirs.summary()}"
        return CheckResult(
            SYSTEM_NAME,
            self.name,
            dict(p),
            pool_dice(s1, f1, mine) + pool_dice(s2, f2, theirs),
            mine.successes,
            outcome,
            degree=mine.successes,
            botch=mine.botch,
            details=details,
        )

    def odds(self, **p: Any) -> Odds:
        w = opposed_weights(p["level"], p["opponent_level"], p["botch_rule"])
        return odds_of(w.probabilities(), self.outcomes, note="win includes every opponent botch")
