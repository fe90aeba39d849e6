"""The Wizard Quest checks: each one rolls through a RollBudget and knows its exact odds.

Pools use :mod:`.pools` (multinomial counting), hit rolls use :mod:`.scales`, damage and
stamina use :mod:`.costs`. Outcome names are the check's whole vocabulary; the odds of
every check are exact :class:`~fractions.Fraction` values.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from itertools import product
from typing import Any

from ...errors import RuleParameterError
from ...result import CheckResult, Flag, Odds, RolledDie
from ...source import MAX_DICE, DieSlot, Purpose, Role, RollBudget
from ..base import Check, Param
from .costs import (
    DAMAGE_KINDS,
    DEATH_BLOW_STAMINA,
    MAX_FOCUS,
    botch_damage,
    damage,
    focus_stamina_cost,
    raw_damage,
)
from .pools import BOTCH_RULES, MAX_LEVEL, PoolRead, opposed_weights, pool_weights, read_pool
from .scales import DEATH_BLOW_TARGETS, HitRead, hit_bonus, read_4d6, read_d20

__all__ = [
    "AttackCheck",
    "Hit4d6Check",
    "HitCheck",
    "InitiativeCheck",
    "OpposedCheck",
    "PoolCheck",
    "ResistanceCheck",
    "ResistanceHitCheck",
    "Save4d6Check",
    "SaveCheck",
    "build_checks",
    "percentile",
]

SYSTEM_NAME = "wizard-quest"

_LEVEL = Param("level", int, required=True, min=1, max=MAX_LEVEL, help="Level = number of d6 in the pool")
_BOTCH_RULE = Param(
    "botch_rule",
    str,
    default="dice",
    choices=BOTCH_RULES,
    help="botch when ones exceed: 'dice' = 4-5 dice + 6s (default), 'total' = total successes",
)
_HB = Param(
    "hb",
    int,
    default=None,
    min=0,
    max=100,
    help="hit bonus (several skills or stats summed); not given: level // 10, or 0 without a level",
)
#: The hit checks' optional skill level: "+1 HB per 10 Levels for each skill or stat".
_HIT_LEVEL = Param(
    "level", int, default=None, min=0, max=10 * 100, help="skill or stat level; HB = level // 10 unless --hb"
)
_CALLED = Param("called", bool, default=True, help="a critical was called (16+ crits only if called)")


# --- shared dice helpers ---------------------------------------------------------------


def _pool_die(slot: DieSlot, face: int, botch: bool) -> RolledDie:
    flags: set[Flag] = set()
    value = 0
    if face == 6:
        flags.add(Flag.ACE)
        value = 5
    elif face in (4, 5):
        flags.add(Flag.SUCCESS)
        value = 1
    elif face == 1:
        flags.add(Flag.ONE)
        if botch:
            flags.add(Flag.BOTCH)
    return RolledDie(slot, face, value, frozenset(flags))


def _throw_pool(
    budget: RollBudget, n: int, *, who: str, reason: str, replaces: Sequence[DieSlot] = ()
) -> tuple[list[DieSlot], list[int]]:
    """Throw ``n`` d6 as one request; with ``replaces`` each die is a REROLL of that slot."""
    if replaces:
        slots = [
            budget.slot("d6", purpose=Purpose.REROLL, of_slot=old.slot, label=f"{who} {reason}".strip())
            for old in replaces
        ]
    else:
        prefix = f"{who} " if who else ""
        slots = [budget.slot("d6", label=f"{prefix}pool die {i + 1}") for i in range(n)]
    return slots, budget.throw(slots, reason)


def _pool_dice(slots: Sequence[DieSlot], faces: Sequence[int], read: PoolRead) -> list[RolledDie]:
    return [_pool_die(s, f, read.botch) for s, f in zip(slots, faces, strict=True)]


def _pool_details(prefix: str, level: int, read: PoolRead) -> dict[str, Any]:
    return {
        f"{prefix}aces": read.aces,
        f"{prefix}successes": read.successes,
        f"{prefix}success_dice": read.hits,
        f"{prefix}ones": read.ones,
        f"{prefix}botch": read.botch,
        f"{prefix}adeptness": level + read.successes,
    }


def _compare(mine: PoolRead, theirs: PoolRead) -> str:
    """Opposed pools from the first side: botch, win, lose or stalemate."""
    if mine.botch:
        return "botch"
    if theirs.botch or mine.key > theirs.key:
        return "win"
    return "stalemate" if mine.key == theirs.key else "lose"


def _odds(probs: dict[str, Fraction], outcomes: Sequence[str], note: str = "") -> Odds:
    return Odds({o: probs.get(o, Fraction(0)) for o in outcomes}, note=note)


def _hb(p: dict[str, Any]) -> int:
    """The HB a hit roll adds: ``hb`` when given, else "+1 HB per 10 Levels" of ``level``, else 0."""
    if p.get("hb") is not None:
        return int(p["hb"])
    return hit_bonus(p["level"]) if p.get("level") is not None else 0


def _hit_die(slot: DieSlot, face: int, read: HitRead) -> RolledDie:
    flags = {Flag.KEPT}
    if read.grade in ("critical", "triple-critical"):
        flags.add(Flag.CRITICAL)
    if read.grade == "botch":
        flags.add(Flag.BOTCH)
    return RolledDie(slot, face, face, frozenset(flags))


def _d20_grades(hb: int, called: bool, death_blow: str = "no", no_dbg: bool = False) -> Counter[str]:
    """How many of the 20 faces give each grade (``death-blow`` counted apart)."""
    c: Counter[str] = Counter()
    for n in range(1, 21):
        r = read_d20(n, hb, called=called, death_blow=death_blow, no_death_blow_game=no_dbg)
        c["death-blow" if r.death_blow else r.grade] += 1
    return c


# --- pools --------------------------------------------------------------------------------


@dataclass
class PoolCheck(Check):
    """Action / check dice: Level d6, with optional focus rerolls of a failed or botched pool."""

    def roll(self, budget: RollBudget, **p: Any) -> CheckResult:
        level, rule, focus, used = p["level"], p["botch_rule"], p["focus"], p["focus_used"]
        _check_focus(level, focus, used)
        slots, faces = _throw_pool(budget, level, who="", reason="action dice")
        read = read_pool(faces, rule)
        dice: list[RolledDie] = []
        rerolls = stamina = 0
        while rerolls < focus and (read.botch or read.successes == 0):
            rerolls += 1
            stamina += focus_stamina_cost(used + rerolls)
            dice.extend(
                RolledDie(d.slot, d.face, d.value, d.flags | {Flag.REROLLED})
                for d in _pool_dice(slots, faces, read)
            )
            slots, faces = _throw_pool(budget, level, who="focus", reason=f"reroll {rerolls}", replaces=slots)
            read = read_pool(faces, rule)
        dice.extend(_pool_dice(slots, faces, read))
        outcome = "botch" if read.botch else ("success" if read.successes else "failure")
        details = _pool_details("", level, read)
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
        return _odds(probs, self.outcomes)


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
        s1, f1 = _throw_pool(budget, level, who="", reason="action dice")
        s2, f2 = _throw_pool(budget, other, who="opponent", reason="opponent's action dice")
        mine, theirs = read_pool(f1, rule), read_pool(f2, rule)
        outcome = _compare(mine, theirs)
        details = _pool_details("", level, mine) | _pool_details("opponent_", other, theirs)
        details["summary"] = f"{mine.summary()} vs {theirs.summary()}"
        return CheckResult(
            SYSTEM_NAME,
            self.name,
            dict(p),
            _pool_dice(s1, f1, mine) + _pool_dice(s2, f2, theirs),
            mine.successes,
            outcome,
            degree=mine.successes,
            botch=mine.botch,
            details=details,
        )

    def odds(self, **p: Any) -> Odds:
        w = opposed_weights(p["level"], p["opponent_level"], p["botch_rule"])
        return _odds(w.probabilities(), self.outcomes, note="win includes every opponent botch")


# --- hit dice -----------------------------------------------------------------------------


@dataclass
class HitCheck(Check):
    """1d20 + HB on the hit scale, with death blows."""

    def roll(self, budget: RollBudget, **p: Any) -> CheckResult:
        _check_death_blow(p)
        slot, face = budget.throw_one("d20", label="hit die", reason="hit dice")
        hb = _hb(p)
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
            [_hit_die(slot, face, read)],
            read.total,
            outcome,
            critical=read.grade in ("critical", "triple-critical"),
            details=details,
        )

    def odds(self, **p: Any) -> Odds:
        _check_death_blow(p)
        c = _d20_grades(_hb(p), p["called"], p["death_blow"], p["no_death_blow_game"])
        return _odds({k: Fraction(v, 20) for k, v in c.items()}, self.outcomes)


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
        hb = _hb(p)
        read = read_4d6(faces, hb, called=p["called"])
        dice = [_hit_die(s, f, read) for s, f in zip(slots, faces, strict=True)]
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
        hb = _hb(p)
        c = Counter(read_4d6(f, hb, called=p["called"]).grade for f in product(range(1, 7), repeat=4))
        return _odds({k: Fraction(v, 6**4) for k, v in c.items()}, self.outcomes)


# --- attack: hit dice, then the pools, then damage --------------------------------------------


@dataclass
class AttackCheck(Check):
    """A whole attack: d20 hit dice; if it lands, the attacker's pool (vs the defender's), then damage."""

    def roll(self, budget: RollBudget, **p: Any) -> CheckResult:
        slot, face = budget.throw_one("d20", label="hit die", reason="hit dice")
        hb = _hb(p)
        hit = read_d20(face, hb, called=p["called"])
        dice = [_hit_die(slot, face, hit)]
        details: dict[str, Any] = {"natural": face, "hb": hb, "grade": hit.grade, "hit_total": hit.total}
        if not hit.lands:  # "Do not roll Dice if hit roll fails."
            details["summary"] = f"hit {hit.total}: miss"
            return CheckResult(SYSTEM_NAME, self.name, dict(p), dice, 0, "miss", damage=0, details=details)
        level, other, rule = p["level"], p["opponent_level"], p["botch_rule"]
        s1, f1 = _throw_pool(budget, level, who="", reason="action dice")
        mine = read_pool(f1, rule)
        dice += _pool_dice(s1, f1, mine)
        details |= _pool_details("", level, mine)
        theirs = None
        if other:
            s2, f2 = _throw_pool(budget, other, who="defender", reason="defender's action dice")
            theirs = read_pool(f2, rule)
            dice += _pool_dice(s2, f2, theirs)
            details |= _pool_details("opponent_", other, theirs)
        own = raw_damage(p["kind"], hit.grade, p["power"], mine.successes)
        dealt = damage(p["kind"], hit.grade, p["power"], mine.successes, p["ac"], p["fortitude"])
        if mine.botch:
            outcome, dealt = "botch", 0
            details["self_damage"] = botch_damage(own, defending=False)
        elif theirs is None:
            outcome = hit.grade
        else:
            vs = _compare(mine, theirs)
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
        grades = _d20_grades(_hb(p), p["called"])
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
        return _odds(probs, self.outcomes)


# --- resistance, saves, initiative ---------------------------------------------------------------


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
        return _odds({"resisted": q, "affected": 1 - q}, self.outcomes)


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
            [_hit_die(slot, face, read)],
            read.total,
            outcome,
            details={"hb": hb, "natural": face, "summary": f"{read.total} ({read.grade})"},
        )

    def odds(self, **p: Any) -> Odds:
        c = _d20_grades(p["resistance"] // 10, False)
        q = Fraction(20 - c["miss"], 20)
        return _odds({"resisted": q, "affected": 1 - q}, self.outcomes)


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
        return _odds({"success": q, "failure": 1 - q}, self.outcomes)


@dataclass
class Save4d6Check(Check):
    """Saving throw without a d20: 4d6 plus 1d6 per +1 save bonus; one Ace succeeds."""

    def roll(self, budget: RollBudget, **p: Any) -> CheckResult:
        slots, faces = _throw_pool(budget, 4 + p["bonus"], who="save", reason="4d6 saving throw")
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
        return _odds({"success": 1 - none, "failure": none}, self.outcomes)


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
        return _odds(
            {"first": Fraction(15, 36), "second": Fraction(15, 36), "tie": Fraction(6, 36)}, self.outcomes
        )


def build_checks() -> dict[str, Check]:
    """Every Wizard Quest check, by name."""
    opponent = Param(
        "opponent_level",
        int,
        required=True,
        min=0,
        max=MAX_LEVEL,
        help="the opposing pool's Level (number of d6)",
    )
    death_params = (
        Param(
            "death_blow",
            str,
            default="no",
            choices=DEATH_BLOW_TARGETS,
            help="attempt a death blow against an npc or a pc",
        ),
        Param("no_death_blow_game", bool, default=False, help="the GM called a No Death Blow game"),
        Param("hasted", bool, default=False, help="Hasted Combat, Haste or a Holding spell (no death blows)"),
    )
    checks: list[Check] = [
        PoolCheck(
            name="pool",
            help="action/check dice: Level d6, 4-5 = 1 success, 6 = Ace (5 successes)",
            params=(
                _LEVEL,
                _BOTCH_RULE,
                Param(
                    "focus",
                    int,
                    default=0,
                    min=0,
                    max=MAX_FOCUS,
                    help="focus rerolls to call if the pool fails or botches (5/10/15 stamina)",
                ),
                Param(
                    "focus_used",
                    int,
                    default=0,
                    min=0,
                    max=MAX_FOCUS,
                    help="focus rerolls already used this conflict",
                ),
            ),
            outcomes=("success", "failure", "botch"),
            example="dicetower check wizard-quest pool --level 5 --faces 6,4,1,3,6",
            sample_params=(
                {"level": 1},
                {"level": 5},
                {"level": 12, "botch_rule": "total"},
                {"level": 3, "focus": 2},
                {"level": 30},
            ),
        ),
        OpposedCheck(
            name="opposed",
            help="pool vs pool: most Aces, then most successes; a tie is a stalemate",
            params=(_LEVEL, opponent, _BOTCH_RULE),
            outcomes=("win", "lose", "stalemate", "botch"),
            example="dicetower check wizard-quest opposed --level 5 --opponent_level 4",
            sample_params=(
                {"level": 3, "opponent_level": 3},
                {"level": 6, "opponent_level": 2},
                {"level": 2, "opponent_level": 0},
                {"level": 8, "opponent_level": 9, "botch_rule": "total"},
            ),
        ),
        HitCheck(
            name="hit",
            help="hit dice: 1d20 + HB on the hit scale (death blows optional)",
            params=(_HB, _HIT_LEVEL, _CALLED, *death_params),
            outcomes=("miss", "hit", "critical", "triple-critical", "death-blow"),
            example="dicetower check wizard-quest hit --hb 2 --death_blow npc",
            sample_params=(
                {"hb": 0},
                {"hb": 3, "called": False},
                {"hb": 1, "death_blow": "npc"},
                {"hb": 5, "death_blow": "pc"},
                {"hb": 2, "death_blow": "pc", "no_death_blow_game": True},
                {"level": 25},
            ),
        ),
        Hit4d6Check(
            name="hit-4d6",
            help="4d6 + HB hit dice when no d20 is available",
            params=(_HB, _HIT_LEVEL, _CALLED),
            outcomes=("botch", "miss", "hit", "critical", "triple-critical"),
            example="dicetower check wizard-quest hit-4d6 --hb 1 --faces 6,6,6,2",
            sample_params=({"hb": 0}, {"hb": 4}, {"hb": 2, "called": False}, {"level": 40}),
        ),
        AttackCheck(
            name="attack",
            help="d20 hit dice, then the attack pool (vs the defender's), then damage",
            params=(
                _LEVEL,
                Param(
                    "opponent_level",
                    int,
                    default=0,
                    min=0,
                    max=MAX_LEVEL,
                    help="defender's pool Level (0 = unopposed)",
                ),
                _HB,
                _CALLED,
                Param(
                    "kind", str, default="physical", choices=DAMAGE_KINDS, help="physical (PA) or magic (MA)"
                ),
                Param(
                    "power",
                    int,
                    default=0,
                    min=0,
                    max=10_000,
                    help="PA damage (weapon + strength + magic) or spell level used",
                ),
                Param("ac", int, default=0, min=0, max=10_000, help="defender's armor class"),
                Param("fortitude", int, default=0, min=0, max=10_000, help="defender's Fortitude"),
                _BOTCH_RULE,
            ),
            outcomes=("miss", "botch", "defended", "stalemate", "hit", "critical", "triple-critical"),
            example="dicetower check wizard-quest attack --level 5 --hb 1 --power 12 --ac 3",
            sample_params=(
                {"level": 4, "power": 10},
                {"level": 5, "opponent_level": 4, "hb": 2, "power": 8},
                {"level": 3, "kind": "magic", "power": 6, "called": False},
            ),
        ),
        ResistanceCheck(
            name="resistance",
            help="1d100 (tens + units die) at or under the resistance % resists",
            params=(Param("resistance", int, required=True, min=0, max=100, help="resistance in %"),),
            outcomes=("resisted", "affected"),
            example="dicetower check wizard-quest resistance --resistance 45 --faces 40,5",
            sample_params=({"resistance": 25}, {"resistance": 100}, {"resistance": 0}),
        ),
        ResistanceHitCheck(
            name="resistance-hit",
            help="no d100: hit dice + 1 HB per 10% resistance; a miss fails",
            params=(Param("resistance", int, required=True, min=0, max=1000, help="resistance in %"),),
            outcomes=("resisted", "affected"),
            example="dicetower check wizard-quest resistance-hit --resistance 45",
            sample_params=({"resistance": 25}, {"resistance": 90}),
        ),
        SaveCheck(
            name="save",
            help="saving throw: 1d20 + save bonus, 11+ succeeds",
            params=(Param("bonus", int, default=0, min=-20, max=100, help="save bonus"),),
            outcomes=("success", "failure"),
            example="dicetower check wizard-quest save --bonus 2",
            sample_params=({"bonus": 0}, {"bonus": 4}, {"bonus": -3}),
        ),
        Save4d6Check(
            name="save-4d6",
            help="saving throw without a d20: 4d6 + 1d6 per +1 save; one Ace succeeds",
            params=(Param("bonus", int, default=0, min=0, max=96, help="save bonus (+1 d6 each)"),),
            outcomes=("success", "failure"),
            example="dicetower check wizard-quest save-4d6 --bonus 1",
            sample_params=({"bonus": 0}, {"bonus": 3}),
        ),
        InitiativeCheck(
            name="initiative",
            help="1d6 each, highest roll attacks first",
            params=(),
            outcomes=("first", "second", "tie"),
            example="dicetower check wizard-quest initiative --faces 5,2",
            sample_params=({},),
        ),
    ]
    return {c.name: c for c in checks}
