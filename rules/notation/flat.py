"""Evaluate everyday dice terms on flat lists of ints, building :class:`DieRoll` objects only if looked at.

A roll's total needs only ints; the per-die objects of the evaluated tree are for formatters,
and most rolls are never shown die by die. So ``4d6ro1``, ``3d6!``, ``6d6mi2`` and
``4d6kh3`` keep each die as an index into parallel lists (slot, printed face, value, flag
mask, follow-ups) and hand those lists to :class:`Evaluated`, which builds the very same
``DieRoll`` chains the general path (:mod:`.evaluate`) builds, on first access.

Covered: single-die terms (not the d%/d100 pairs) with any of reroll, explosion, clamps and
keep/drop, in the fixed order the notation defines. Every die still goes through the
:class:`~dicetower.rules.source.RollBudget`, round by round, with the same requests, slots,
follow-up purposes and reasons as the general path; ``tests/rules/test_notation_flat.py``
checks the two agree die for die.
"""

from __future__ import annotations

from operator import eq, ge, gt, itemgetter, le, lt

from ..errors import RollLimitError
from ..result import Flag
from ..source import DieSlot, Purpose, RollBudget
from .ast import DiceTerm, Reroll
from .limits import MAX_DEPTH
from .tree import DICE, Evaluated, flag_bit

__all__ = ["KINDS", "flat_eligible", "roll_flat"]

#: die kind of a dN, by N (every N a term may have)
KINDS = {n: f"d{n}" for n in range(1, 1001)}

_KEPT = flag_bit(Flag.KEPT)
_DROPPED = flag_bit(Flag.DROPPED)
_EXPLODED = flag_bit(Flag.EXPLODED)
_REROLLED = flag_bit(Flag.REROLLED)
#: ``Cond.matches`` as a C-level comparison: ``_OPS[cond.op](value, cond.value)``
_OPS = {"=": eq, ">=": ge, "<=": le, ">": gt, "<": lt}
_REROLL, _EXPLOSION = Purpose.REROLL, Purpose.EXPLOSION
_SLOT_NO = itemgetter(0)  #: a DieSlot's slot number, read in C


def flat_eligible(t: DiceTerm) -> bool:
    """Whether :func:`roll_flat` evaluates ``t`` (single dice; no success or failure counts).

    ``Roller._dice`` inlines this same test on its hot path.
    """
    return t.success is None and t.failure is None and not t.percent and t.sides != 100


def roll_flat(t: DiceTerm, budget: RollBudget) -> Evaluated:
    """Evaluate an eligible term: rerolls, then explosions, then clamps, then keeps (in written order)."""
    sides = t.sides
    kind = KINDS[sides]
    base, faces = budget.throw_base(kind, t.count, "initial throw")
    ten = sides == 10  # a d10's printed 0 is worth 10 in plain notation
    reroll, explode, clamps, keeps = t.reroll, t.explode, t.clamps, t.keeps
    # values share the faces' list unless a d10's 0 or a clamp makes them differ
    values = [f or 10 for f in faces] if ten else list(faces) if clamps else faces

    # The first round of rerolls, or (with none) of explosions: most rolls have none, and a term
    # whose clamps and keeps are absent too is then a plain NdX. (A C-level ``in`` answers "none"
    # for ``ro1`` and ``!`` without a Python loop.)
    rerolls = explodes = None
    if reroll is not None:
        rpred, rtarget = _OPS[reroll.cond.op], reroll.cond.value
        if rpred is eq and rtarget not in values:
            rerolls = []
        else:
            rerolls = [i for i, v in enumerate(values) if rpred(v, rtarget)]
    if explode is not None:
        cond = explode.cond
        epred, etarget = (eq, sides) if cond is None else (_OPS[cond.op], cond.value)
        if rerolls:
            pass  # decided after the rerolls, on the dice they leave
        elif epred is eq and etarget not in values:
            explodes = []
        else:
            explodes = [i for i, v in enumerate(values) if epred(v, etarget)]
    if not rerolls and not explodes and not clamps and not keeps:
        return Evaluated(DICE, t, sum(values), plain=(base, faces, ten))

    n = len(values)
    slots: list[DieSlot] = list(base)
    masks = [0] * n
    follow: dict[int, list[int]] = {}  # die index -> indices of its rerolls/explosions, in order
    live = list(range(n))

    if rerolls:
        reason = _reroll_reason(reroll)
        pending = rerolls  # positions in ``live``
        depth = 0
        while pending:  # ``ro`` stops after one round; ``r`` after MAX_DEPTH, with an error
            if depth == MAX_DEPTH:
                raise RollLimitError(
                    f"{t}: a die was rerolled {MAX_DEPTH} times and still shows {reroll.cond}"
                )
            depth += 1
            olds = list(map(live.__getitem__, pending))
            nw = _follow_up(budget, kind, _REROLL, reason, olds, slots, faces, values, masks)
            for p, o in zip(pending, olds, strict=True):
                masks[o] |= _REROLLED
                follow[o] = [nw]
                live[p] = nw
                nw += 1
            if reroll.once:
                break
            pending = [p for p in pending if rpred(values[live[p]], rtarget)]
        if explode is not None:
            explodes = [i for i in live if epred(values[i], etarget)]

    if explodes:
        pending = explodes  # die indices
        depth = 0
        while pending:
            if depth == MAX_DEPTH:
                raise RollLimitError(f"{t}: a die exploded {MAX_DEPTH} times in a row")
            depth += 1
            first = _follow_up(budget, kind, _EXPLOSION, "explosion", pending, slots, faces, values, masks)
            new = list(range(first, first + len(pending)))
            for o, nw in zip(pending, new, strict=True):
                masks[o] |= _EXPLODED
                chain = follow.get(o)
                if chain is None:
                    follow[o] = [nw]
                else:
                    chain.append(nw)
            live.extend(new)
            pending = [nw for nw in new if epred(values[nw], etarget)]

    for clamp in clamps:
        bound = clamp.value
        if clamp.op == "mi":
            for i in live:
                if values[i] < bound:
                    values[i] = bound
        else:
            for i in live:
                if values[i] > bound:
                    values[i] = bound

    if keeps:
        value_of = values.__getitem__
        for k in keeps:
            op, count = k.op, k.count
            order = sorted(live, key=value_of, reverse=op[1] == "h")  # stable: ties keep the earlier die
            for i in order[count:] if op[0] == "k" else order[:count]:
                masks[i] |= _DROPPED
            live = [i for i in live if not masks[i] & _DROPPED]
        for i in live:
            masks[i] |= _KEPT

    total = sum(map(values.__getitem__, live))
    return Evaluated(DICE, t, total, flat=(slots, faces, values, masks, follow, n))


def _reroll_reason(reroll: Reroll) -> str:
    """``f"reroll {reroll}"`` (the general path's request reason) without two ``__str__`` calls."""
    cond = reroll.cond
    op, value = cond
    return ("reroll ro" if reroll.once else "reroll r") + (str(value) if op == "=" else op + str(value))


def _follow_up(
    budget: RollBudget,
    kind: str,
    purpose: Purpose,
    reason: str,
    olds: list[int],
    slots: list[DieSlot],
    faces: list[int],
    values: list[int],
    masks: list[int],
) -> int:
    """Throw one follow-up die per die in ``olds`` as one request, appending it to the flat lists.

    Returns the index of the first new die (the rest follow in ``olds`` order).
    """
    new_slots, got = budget.throw_follow_ups(
        kind, purpose, list(map(_SLOT_NO, map(slots.__getitem__, olds))), reason
    )
    first = len(slots)
    slots.extend(new_slots)
    faces.extend(got)
    if values is not faces:
        values.extend([f or 10 for f in got] if kind == "d10" else got)  # a d10's printed 0 is worth 10
    masks.extend([0] * len(got))
    return first
