"""Evaluate notation against a dice source: the :class:`Roller` and the ``roll()`` shortcut.

Every die, rerolls and explosions included, is asked of the injected
:class:`~dicetower.rules.source.DiceSource` through one
:class:`~dicetower.rules.source.RollBudget`, so a physical tower throws the follow-ups
(and the budget stops a runaway roll). The initial dice of a term are one throw; each
round of rerolls, then each round of explosions, is one further throw whose slots name the
slot they follow up (``of_slot``).
"""

from __future__ import annotations

from collections.abc import Callable
from operator import attrgetter

from ..errors import DiceError, RollLimitError
from ..result import Flag
from ..source import DiceSource, Purpose, RandomSource, Role, RollBudget
from .ast import Binary, DiceTerm, Group, Literal, Node, Repeat, Unary
from .flat import KINDS, roll_flat
from .limits import MAX_DEPTH, MAX_DICE
from .parser import parse
from .roll_result import RollResult
from .tree import BINARY, DICE, GROUP, LITERAL, REPEAT, UNARY, DieRoll, Evaluated, flag_bit

__all__ = ["RollZeroDivisionError", "Roller", "dice_term", "roll"]

_KEPT = flag_bit(Flag.KEPT)
_DROPPED = flag_bit(Flag.DROPPED)
_EXPLODED = flag_bit(Flag.EXPLODED)
_REROLLED = flag_bit(Flag.REROLLED)
_SUCCESS = flag_bit(Flag.SUCCESS)
_ACE = flag_bit(Flag.ACE)
_BOTCH = flag_bit(Flag.BOTCH)
_ONE = flag_bit(Flag.ONE)
_TENS, _UNITS = Role.TENS, Role.UNITS
_value = attrgetter("value")


#: ``DiceTerm`` fields 3-6 (reroll, explode, clamps, keeps) of a term without those modifiers
_NO_MODIFIERS = (None, None, (), ())


class RollZeroDivisionError(DiceError, ZeroDivisionError):
    """``/`` by a sub-expression that came out 0 (``1d6/(1d2-1)``)."""


class Roller:
    """Parses (with a cache of immutable trees) and evaluates dice notation.

    ``cache_size`` bounds the parse cache (0 turns it off, as the benchmark does for a fair
    comparison with an uncached d20); ``max_dice`` is handed to each roll's budget.

    >>> from dicetower.rules import FixedSource
    >>> Roller().roll("4d6kh3+2", source=FixedSource([1, 4, 5, 6])).total
    17
    """

    def __init__(self, *, cache_size: int = 1024, max_dice: int = MAX_DICE):
        self.cache_size = cache_size
        self.max_dice = max_dice
        self._cache: dict[str, Node] = {}
        self._nodes: dict[type, Callable[[Node, RollBudget], Evaluated]] = {
            Literal: self._literal,
            DiceTerm: self._dice,
            Repeat: self._repeat,
            Unary: self._unary,
            Binary: self._binary,
            Group: self._group,
        }

    def parse(self, expr: str) -> Node:
        """The syntax tree of ``expr`` (shared between calls: trees are immutable)."""
        node = self._cache.get(expr)
        if node is None:
            node = parse(expr)
            if self.cache_size > 0:
                self._remember(expr, node)
        return node

    def _remember(self, expr: str, node: Node) -> None:
        if len(self._cache) >= self.cache_size:
            del self._cache[next(iter(self._cache))]  # oldest first: bounded, no bookkeeping
        self._cache[expr] = node

    def roll(
        self, expr: str | Node, source: DiceSource | None = None, *, text: str | None = None
    ) -> RollResult:
        """Parse and evaluate ``expr`` with faces from ``source`` (a fresh secure RNG by default).

        A tree parsed earlier rolls without parsing again; ``text`` is then the notation it was
        parsed from, which the result shows.

        ``source.finish()`` is called afterwards, so a :class:`FixedSource` given more faces
        than the roll used raises :class:`~dicetower.rules.errors.ExtraFacesError`.
        """
        if isinstance(expr, str):
            node = self._cache.get(expr)
            if node is None:
                node = parse(expr)
                if self.cache_size > 0:
                    self._remember(expr, node)
            text = expr
        elif isinstance(expr, Node):
            node, text = expr, text or ""
        else:
            raise TypeError(f"expected dice notation (str) or a parsed tree, not {type(expr).__name__}")
        if source is None:
            source = RandomSource()
        budget = RollBudget(source, self.max_dice)
        root = self._nodes[type(node)](node, budget)
        source.finish()
        return RollResult(node, root, budget, text)

    def evaluate(self, node: Node, budget: RollBudget) -> Evaluated:
        """Evaluate a parsed tree inside a caller's budget (a system check mixing notation in)."""
        return self._nodes[type(node)](node, budget)

    # -- one method per node type ----------------------------------------------------------

    def _literal(self, node: Literal, budget: RollBudget) -> Evaluated:
        return Evaluated(LITERAL, node, node.value)

    def _group(self, node: Group, budget: RollBudget) -> Evaluated:
        inner = self._nodes[type(node.inner)](node.inner, budget)
        return Evaluated(GROUP, node, inner.total, (inner,))

    def _unary(self, node: Unary, budget: RollBudget) -> Evaluated:
        operand = self._nodes[type(node.operand)](node.operand, budget)
        total = -operand.total if node.op == "-" else operand.total
        return Evaluated(UNARY, node, total, (operand,))

    def _binary(self, node: Binary, budget: RollBudget) -> Evaluated:
        nodes = self._nodes
        left = nodes[type(node.left)](node.left, budget)
        right = nodes[type(node.right)](node.right, budget)
        op, a, b = node.op, left.total, right.total
        if op == "+":
            total = a + b
        elif op == "-":
            total = a - b
        elif op == "*":
            total = a * b
        else:
            if b == 0:
                raise RollZeroDivisionError(f"division by zero: {node.right} came out 0")
            total = a // b
        return Evaluated(BINARY, node, total, (left, right))

    def _repeat(self, node: Repeat, budget: RollBudget) -> Evaluated:
        sets = tuple(self._dice(node.term, budget) for _ in range(node.times))
        return Evaluated(REPEAT, node, sum(s.total for s in sets), sets)

    def _dice(self, t: DiceTerm, budget: RollBudget) -> Evaluated:
        sides = t.sides
        if sides == 100 or t.percent or t.success is not None or t.failure is not None:
            return dice_term(t, budget)  # pairs, success and failure counts: the general path
        if t[3:7] != _NO_MODIFIERS:
            return roll_flat(t, budget)
        # the plain NdX: one throw and a sum; its DieRolls are built only if someone looks
        slots, faces = budget.throw_base(KINDS[sides], t.count, "initial throw")
        if sides == 10:  # a d10's printed 0 is worth 10
            return Evaluated(DICE, t, sum(faces) + 10 * faces.count(0), plain=(slots, faces, True))
        return Evaluated(DICE, t, sum(faces), plain=(slots, faces, False))


def dice_term(t: DiceTerm, budget: RollBudget) -> Evaluated:
    """Evaluate any dice term with one :class:`DieRoll` per roll, eagerly.

    The general path: d%/d100 pairs and success/failure counts come here; :mod:`.flat`
    answers the other modified terms with the same dice, requests and tree, faster.
    """
    rolls = _throw(t, budget, None, Purpose.BASE, "initial throw")
    live = rolls
    followed = False
    if t.reroll is not None:
        live = _reroll(t, budget, list(rolls))
        followed = True
    if t.explode is not None:
        live = _explode(t, budget, live)
        followed = True
    for clamp in t.clamps:
        limit = clamp.value
        if clamp.op == "mi":
            for r in live:
                if r.value < limit:
                    r.value = limit
        else:
            for r in live:
                if r.value > limit:
                    r.value = limit
    if t.keeps:
        live = _keep(t, live)
    successes = failures = None
    if t.success is not None:
        successes = _count_successes(t, live)
    if t.failure is not None:
        matches = t.failure.cond.matches
        failures = 0
        for r in live:
            if matches(r.value):
                r.mask |= (_BOTCH | _ONE) if r.value == 1 else _BOTCH
                failures += 1
    if successes is not None:
        total = successes - (failures or 0)
    else:
        total = 0
        for r in live:
            total += r.value
    return Evaluated(DICE, t, total, (), _chains(rolls) if followed else rolls, successes, failures)


def _throw(
    t: DiceTerm, budget: RollBudget, olds: list[DieRoll] | None, purpose: Purpose, reason: str
) -> list[DieRoll]:
    """Throw the term's initial dice (``olds`` None) or one follow-up per roll in ``olds``."""
    slot = budget.slot
    if t.paired:
        slots = []
        if olds is None:
            for _ in range(t.count):
                slots.append(slot("d10t", role=_TENS))
                slots.append(slot("d10", role=_UNITS))
        else:
            for o in olds:
                slots.append(slot("d10t", role=_TENS, purpose=purpose, of_slot=o.slots[0].slot))
                slots.append(slot("d10", role=_UNITS, purpose=purpose, of_slot=o.slots[1].slot))
        faces = budget.throw(slots, reason)
        hundred = not t.percent
        out = []
        for i in range(0, len(slots), 2):
            v = faces[i] + faces[i + 1]
            if hundred and v == 0:
                v = 100  # d100: 00 and 0 read as 100, so the pair is 1-100
            out.append(DieRoll((slots[i], slots[i + 1]), (faces[i], faces[i + 1]), v))
        return out
    kind = KINDS[t.sides]
    if olds is None:
        slots, faces = budget.throw_base(kind, t.count, reason)
    else:
        slots = budget.follow_ups(kind, purpose, [o.slots[0].slot for o in olds])
        faces = budget.throw(slots, reason)
    if t.sides == 10:  # a d10's printed 0 is worth 10 in plain notation
        return [DieRoll((s,), (f,), f or 10) for s, f in zip(slots, faces, strict=True)]
    return [DieRoll((s,), (f,), f) for s, f in zip(slots, faces, strict=True)]


def _reroll(t: DiceTerm, budget: RollBudget, live: list[DieRoll]) -> list[DieRoll]:
    """Replace each roll matching the reroll condition, once (``ro``) or while it matches (``r``)."""
    assert t.reroll is not None
    matches = t.reroll.cond.matches
    limit = 1 if t.reroll.once else MAX_DEPTH
    pending = [i for i, r in enumerate(live) if matches(r.value)]
    depth = 0
    while pending:
        if depth == limit:
            if t.reroll.once:
                break
            raise RollLimitError(f"{t}: a die was rerolled {MAX_DEPTH} times and still shows {t.reroll.cond}")
        depth += 1
        new = _throw(t, budget, [live[i] for i in pending], Purpose.REROLL, f"reroll {t.reroll}")
        for i, nw in zip(pending, new, strict=True):
            old = live[i]
            old.mask |= _REROLLED
            old.followups = [nw]
            live[i] = nw
        pending = [i for i in pending if matches(live[i].value)]
    return live


def _explode(t: DiceTerm, budget: RollBudget, live: list[DieRoll]) -> list[DieRoll]:
    """Throw one more die for each roll matching the explosion condition, chaining (bounded)."""
    assert t.explode is not None
    cond = t.explode.cond
    top = t.values[-1]
    matches = cond.matches if cond is not None else top.__eq__
    pending = [r for r in live if matches(r.value)]
    if not pending:
        return live
    live = list(live)
    depth = 0
    while pending:
        if depth == MAX_DEPTH:
            raise RollLimitError(f"{t}: a die exploded {MAX_DEPTH} times in a row")
        depth += 1
        new = _throw(t, budget, pending, Purpose.EXPLOSION, "explosion")
        for old, nw in zip(pending, new, strict=True):
            old.mask |= _EXPLODED
            if old.followups is None:
                old.followups = [nw]
            else:
                old.followups.append(nw)
        live.extend(new)
        pending = [nw for nw in new if matches(nw.value)]
    return live


def _keep(t: DiceTerm, live: list[DieRoll]) -> list[DieRoll]:
    """Apply keep/drop operations in written order; ties keep the earlier die."""
    kept = live
    for k in t.keeps:
        n = k.count
        op = k.op
        order = sorted(kept, key=_value, reverse=op[1] == "h")
        drop = order[n:] if op[0] == "k" else order[:n]
        for r in drop:
            r.mask |= _DROPPED
        kept = [r for r in kept if not r.mask & _DROPPED]
    for r in kept:
        r.mask |= _KEPT
    return kept


def _count_successes(t: DiceTerm, live: list[DieRoll]) -> int:
    assert t.success is not None
    weights = dict(t.success.weights)
    matches = t.success.cond.matches
    count = 0
    for r in live:
        v = r.value
        w = weights.get(v)
        if w is None:
            w = 1 if matches(v) else 0
        elif w > 0:
            r.mask |= _ACE
        if w > 0:
            r.mask |= _SUCCESS
            count += w
    return count


def _chains(rolls: list[DieRoll]) -> list[DieRoll]:
    """Display order: each initial roll followed by its reroll/explosion chain."""
    out: list[DieRoll] = []
    for r in rolls:
        stack = [r]
        while stack:
            cur = stack.pop()
            out.append(cur)
            if cur.followups:
                stack.extend(reversed(cur.followups))
    return out


_default: Roller | None = None


def roll(expr: str | Node, source: DiceSource | None = None) -> RollResult:
    """Roll ``expr`` with the shared default :class:`Roller` (parse cache on).

    >>> from dicetower.rules import FixedSource
    >>> roll("4d6kh3+2", source=FixedSource([1, 4, 5, 6])).total
    17
    """
    global _default
    if _default is None:
        _default = Roller()
    return _default.roll(expr, source)
