"""Hypothesis strategies that mirror the notation grammar (d20's ``custom_strategies.py``).

Shared by the property tests and the fuzz test. Expressions drawn here are valid by
construction (no explosion that never stops, no division by a value that can be 0), so a
property test may demand that they roll.
"""

from __future__ import annotations

import random

from hypothesis import strategies as st

__all__ = [
    "ALPHABET",
    "STARTING_EXPRESSIONS",
    "dice_terms",
    "expressions",
    "generated",
    "mutate",
    "simple_sums",
]

_SIDES = st.one_of(st.sampled_from([2, 4, 6, 8, 10, 12, 20]), st.integers(2, 40))
_CMP = st.sampled_from(["<", ">", "<=", ">=", "="])


@st.composite
def dice_terms(draw: st.DrawFn) -> str:
    """One dice term with a random selection of modifiers, in a random written order."""
    count = draw(st.integers(0, 5))
    head = draw(st.sampled_from(["plain", "plain", "plain", "percent", "hundred"]))
    if head == "percent":
        text, low, high = f"{count}d%", 0, 99
    elif head == "hundred":
        text, low, high = f"{count}d100", 1, 100
    else:
        sides = draw(_SIDES)
        text, low, high = f"{count}d{sides}", 1, sides
    mods: list[str] = []
    if draw(st.booleans()):
        once = draw(st.booleans())
        # r stops with probability >= 1/2 per throw, so a 100-deep chain never happens
        mid = (low + high) // 2 + 1
        mods.append(f"ro<={draw(st.integers(low, high))}" if once else f"r<{draw(st.integers(low, mid))}")
    if draw(st.booleans()):
        mods.append(draw(st.sampled_from(["!", f"!>={max(low + 1, high - 1)}", f"!{high}"])))
    if draw(st.booleans()):
        mods.append(f"{draw(st.sampled_from(['mi', 'ma']))}{draw(st.integers(low, high))}")
    for _ in range(draw(st.integers(0, 2))):
        op = draw(st.sampled_from(["kh", "kl", "dh", "dl"]))
        mods.append(op + draw(st.sampled_from(["", str(draw(st.integers(0, 6)))])))
    if draw(st.booleans()):
        target = f"{draw(_CMP)}{draw(st.integers(low, high))}"
        if draw(st.booleans()):
            target += f"w{high}:{draw(st.integers(0, 5))}"
        mods.append(target)
    if draw(st.booleans()):
        mods.append(f"f{draw(st.integers(low, high))}")
    order = list(draw(st.permutations(mods)))
    for i in range(len(order) - 1):
        if order[i] == "!" and order[i + 1][0] in "<>=":
            # a bare "!" followed by a comparison reads as an explosion condition
            order[i], order[i + 1] = order[i + 1], order[i]
    text += "".join(order)
    if draw(st.integers(0, 9)) == 0:
        text += f"x{draw(st.integers(1, 3))}"
    return text


def _combine(children: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    binary = st.tuples(children, st.sampled_from(["+", "-", "*"]), children).map(
        lambda t: f"{t[0]}{t[1]}{t[2]}"
    )
    division = st.tuples(children, st.integers(1, 9)).map(lambda t: f"{t[0]}/{t[1]}")
    unary = children.map(lambda c: f"-{c}")
    group = children.map(lambda c: f"({c})")
    spaced = st.tuples(children, st.sampled_from(["+", "-"]), children).map(lambda t: f"{t[0]} {t[1]} {t[2]}")
    return st.one_of(binary, division, unary, group, spaced)


def expressions() -> st.SearchStrategy[str]:
    """Whole expressions: numbers and dice terms combined by the grammar's operators."""
    leaves = st.one_of(st.integers(0, 100).map(str), dice_terms())
    return st.recursive(leaves, _combine, max_leaves=6)


@st.composite
def simple_sums(draw: st.DrawFn) -> tuple[str, int, int]:
    """``NdX+C`` with its lowest and highest possible totals."""
    n, sides, c = draw(st.integers(1, 10)), draw(_SIDES), draw(st.integers(-20, 20))
    return f"{n}d{sides}{c:+d}", n + c, n * sides + c


# -- plain mutation with a seeded RNG (fast enough for 100,000 cases) ----------------------------------

STARTING_EXPRESSIONS = (
    "1d20+5",
    "4d6kh3",
    "10d10",
    "3d6!",
    "8d6kh3+2",
    "2d20kl1",
    "(1d8+3)*2",
    "d%",
    "d100",
    "2d%<=45",
    "6d6>=4w6:5f1",
    "4d6r1!kh3",
    "4d6ro<3mi2ma5",
    "d6x4",
    "20x10",
    "-(2d6 - -3) / 2",
    "3d6!>=5dl1",
    "10d10f<=2>=8",
    "((1))",
    "7",
)
ALPHABET = "0123456789d%+-*/()!<>=:rokhlmiafwx \t"
ODD = ("9" * 30, "1000", "1001", "0", "é", "\x00", "\n", "ﬁ", "İ", "d" * 5, "(" * 60, ")" * 3, "1d6" * 40)


def mutate(rng: random.Random, text: str) -> str:
    """Apply one random edit: insert, delete, replace, duplicate, splice or truncate."""
    op = rng.randrange(8)
    pos = rng.randrange(len(text) + 1)
    if op == 0:
        return text[:pos] + rng.choice(ALPHABET) + text[pos:]
    if op == 1 and text:
        return text[:pos] + text[pos + 1 :]
    if op == 2 and text:
        return text[:pos] + rng.choice(ALPHABET) + text[pos + 1 :]
    if op == 3:
        end = rng.randrange(pos, len(text) + 1)
        return text[:end] + text[pos:end] + text[end:]
    if op == 4:
        return text + rng.choice("+-*/") + rng.choice(STARTING_EXPRESSIONS)
    if op == 5:
        return text[:pos] + rng.choice(ODD) + text[pos:]
    if op == 6:
        return text[:pos]
    return f"({text})"


def generated(rng: random.Random) -> str:
    """A string from a starting expression and 1-4 mutations (sometimes none: valid input too)."""
    text = rng.choice(STARTING_EXPRESSIONS)
    for _ in range(rng.randrange(5)):
        text = mutate(rng, text)
    return text
