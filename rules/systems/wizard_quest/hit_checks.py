"""Wizard Quest hit checks: d20 or 4d6 hit dice, and the whole attack (hit, pools, damage)."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from fractions import Fraction
from itertools import product
from typing import Any

from ...errors import RuleParameterError
from ...result import CheckResult, Odds
from ...source import RollBudget
from ..base import Check
from .costs import DEATH_BLOW_STAMINA, botch_damage, damage, raw_damage
from .dice import (
    SYSTEM_NAME,
    compare_pools,
    d20_grades,
    hit_bonus_of,
    hit_die,
    odds_of,
    pool_details,
    pool_dice,
    throw_pool,
)
from .pools import opposed_weights, pool_weights, read_pool
from .scales import read_4d6, read_d20

__all__ = ["AttackCheck", "Hit4d6Check", "HitCheck"]


@dataclass
class HitCheck(Check):
    """1d20 + HB on the hit scale, with death blows."""

    def roll(self, budget: RollBudget, **p: Any) -> CheckResult:
        _check_death_blow(p)
        slot, face = budget.throw_one("d20", label="hit die", reason="hit dice")
        hb = hit_bonus_of(p)
        read = read_d20(
            face,
            hb,
            called=p["called"],
            death_blow=p["death_blow"],
            no_death_blow_game=p["no_death_blow_game"],
        )
        outcome = "death-blow" if read.death_blow else read.grade
        details = {
            "natural": face,
            "hb": hb,
            "hb_applied": read.hb_applied,
            "grade": read.grade,
            "death_blow_stamina": DEATH_BLOW_STAMINA if read.death_blow else 0,
            "summary": f"{read.total} ({read.grade})",
        }
        return CheckResult(
            SYSTEM_NAME,
            self.name,
            dict(p),
            [hit_die(slot, face, read)],
            read.total,
            outcome,
            critical=read.grade in ("critical", "triple-critical"),
            details=details,
        )

    def odds(self, **p: Any) -> Odds:
        _check_death_blow(p)
        c = d20_grades(hit_bonus_of(p), p["called"], p["death_blow"], p["no_death_blow_game"])
        return odds_of({k: Fraction(v, 20) for k, v in c.items()}, self.outcomes)


def _check_death_blow(p: dict[str, Any]) -> None:
    if p["hasted"] and p["death_blow"] != "no":
        raise RuleParameterError(
            "hit: death blows cannot be made with Hasted Combat, Haste or Holding spells"
        )


@dataclass
class Hit4d6Check(Check):
    """4d6 + HB hit dice, for when no d20 is at hand."""

    def roll(self, budget: RollBudget, **p: Any) -> CheckResult:
        slots = [budget.slot("d6", label=f"hit die {i + 1}") for i in range(4)]
        faces = budget.throw(slots, "4d6 hit dice")
        hb = hit_bonus_of(p)
        read = read_4d6(faces, hb, called=p["called"])
        dice = [hit_die(s, f, read) for s, f in zip(slots, faces, strict=True)]
        details = {
            "natural": read.natural,
            "hb": hb,
            "hb_applied": read.hb_applied,
            "ar_bonus": read.ar_bonus,
            "summary": f"{read.total} ({read.grade})" + (f", +{read.ar_bonus} AR" if read.ar_bonus else ""),
        }
        return CheckResult(
            SYSTEM_NAME,
            self.name,
            dict(p),
            dice,
            read.total,
            read.grade,
            critical=read.grade in ("critical", "triple-critical"),
            botch=read.grade == "botch",
            details=details,
        )

    def odds(self, **p: Any) -> Odds:
        hb = hit_bonus_of(p)
        c = Counter(read_4d6(f, hb, called=p["called"]).grade for f in product(range(1, 7), repeat=4))
        return odds_of({k: Fraction(v, 6**4) for k, v in c.items()}, self.outcomes)


# --- attack: hit dice, then the pools, then damage --------------------------------------------


@dataclass
class AttackCheck(Check):
    """A whole attack: d20 hit dice; if it lands, the attacker's pool (vs the defender's), then damage."""

    def roll(self, budget: RollBudget, **p: Any) -> CheckResult:
        slot, face = budget.throw_one("d20", label="hit die", reason="hit dice")
        hb = hit_bonus_of(p)
        hit = read_d20(face, hb, called=p["called"])
        dice = [hit_die(slot, face, hit)]
        details: dict[str, Any] = {"natural": face, "hb": hb, "grade": hit.grade, "hit_total": hit.total}
        if not hit.lands:  # "Do not roll Dice if hit roll fails."
            details["summary"] = f"hit {hit.total}: miss"
            return CheckResult(SYSTEM_NAME, self.name, dict(p), dice, 0, "miss", damage=0, details=details)
        level, other, rule = p["level"], p["opponent_level"], p["botch_rule"]
        s1, f1 = throw_pool(budget, level, who="", reason="action dice")
        mine = read_pool(f1, rule)
        dice += pool_dice(s1, f1, mine)
        details |= pool_details("", level, mine)
        theirs = None
        if other:
            s2, f2 = throw_pool(budget, other, who="defender", reason="defender's action dice")
            theirs = read_pool(f2, rule)
            dice += pool_dice(s2, f2, theirs)
            details |= pool_details("opponent_", other, theirs)
        own = raw_damage(p["kind"], hit.grade, p["power"], mine.successes)
        dealt = damage(p["kind"], hit.grade, p["power"], mine.successes, p["ac"], p["fortitude"])
        if mine.botch:
            outcome, dealt = "botch", 0
            details["self_damage"] = botch_damage(own, defending=False)
        elif theirs is None:
            outcome = hit.grade
        else:
            vs = compare_pools(mine, theirs)
            outcome = {"win": hit.grade, "lose": "defended", "stalemate": "stalemate"}[vs]
            if vs != "win":
                dealt = 0
            elif theirs.botch:
                dealt = int(botch_damage(dealt, defending=True))
        details["raw_damage"] = own if outcome in ("hit", "critical", "triple-critical") else 0
        details["summary"] = (
            f"hit {hit.total} ({hit.grade}), {mine.summary()}"
            + (f" vs {theirs.summary()}" if theirs else "")
            + f", {dealt} damage"
        )
        return CheckResult(
            SYSTEM_NAME,
            self.name,
            dict(p),
            dice,
            mine.successes,
            outcome,
            degree=mine.successes,
            critical=hit.grade != "hit",
            botch=mine.botch,
            damage=dealt,
            details=details,
        )

    def odds(self, **p: Any) -> Odds:
        grades = d20_grades(hit_bonus_of(p), p["called"])
        lands = {g: Fraction(grades[g], 20) for g in ("hit", "critical", "triple-critical")}
        probs: dict[str, Fraction] = {"miss": Fraction(grades["miss"], 20)}
        if p["opponent_level"]:
            pools = opposed_weights(p["level"], p["opponent_level"], p["botch_rule"]).probabilities()
            win = pools["win"]
            probs["defended"] = sum(lands.values(), Fraction(0)) * pools["lose"]
            probs["stalemate"] = sum(lands.values(), Fraction(0)) * pools["stalemate"]
        else:
            pools = pool_weights(p["level"], p["botch_rule"]).probabilities()
            win = 1 - pools["botch"]
        probs["botch"] = sum(lands.values(), Fraction(0)) * pools["botch"]
        for g, q in lands.items():
            probs[g] = q * win
        return odds_of(probs, self.outcomes)
