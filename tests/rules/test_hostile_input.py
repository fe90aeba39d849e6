"""Rules-core pieces that face hostile input: the caret display, typed-in faces and seeds, sums."""

from __future__ import annotations

import random
from collections import defaultdict
from fractions import Fraction

import pytest
from dicetower.rules import RollSyntaxError, parse
from dicetower.rules.errors import FaceError, RuleParameterError, caret_lines, printable
from dicetower.rules.odds import Dist
from dicetower.rules.typed import MAX_SEED_CHARS, parse_faces, parse_seed


def test_caret_counts_wide_characters_as_two_columns() -> None:
    shown, caret = caret_lines("\u4e09d6+q", 4)  # 三 is two columns wide on a terminal
    assert shown == "\u4e09d6+q" and caret == " " * 5 + "^"


def test_caret_ignores_combining_marks() -> None:
    _, caret = caret_lines("e\u0301+q", 2)  # é written as e + combining acute: one column
    assert caret == " " * 1 + "^"


def test_caret_after_escaped_controls_and_at_end_of_input() -> None:
    assert caret_lines("\x1b\x07x", 2) == ("\\x1b\\x07x", " " * 8 + "^")
    assert caret_lines("1+", 2) == ("1+", "  ^")
    assert caret_lines("\u202e1", 1) == ("\\u202e1", " " * 6 + "^")  # a bidi override cannot flip the line


def test_pretty_is_safe_and_aligned() -> None:
    with pytest.raises(RollSyntaxError) as info:
        parse("1d6\x1b[31m+2")
    shown, caret, message = info.value.pretty().splitlines()
    assert shown == "1d6\\x1b[31m+2" and caret.index("^") == 3 and "\x1b" not in message


def test_printable_escapes_every_control_character() -> None:
    for code in [*range(0x20), 0x7F, *range(0x80, 0xA0), 0x2028, 0x2029, 0x200E, 0xFEFF]:
        text = printable(f"a{chr(code)}b")
        assert text.isprintable() or text == "a b", (hex(code), text)


@pytest.mark.parametrize("text", ["\u0663", "1_0", "\u00b2", "-1", "+2", "1e3", "\uff13", "12345", "0x1"])
def test_typed_faces_are_ascii_digits_only(text: str) -> None:
    with pytest.raises(FaceError, match="is not a whole number"):
        parse_faces(f"1,{text}")


def test_typed_faces_are_bounded() -> None:
    with pytest.raises(FaceError, match="at most"):
        parse_faces("1," * 100_000)
    assert parse_faces("00, 90") == [0, 90]


def test_seeds() -> None:
    assert parse_seed("42") == 42 and parse_seed("-3") == -3 and parse_seed("replay-7") == "replay-7"
    assert parse_seed("9" * MAX_SEED_CHARS) == int("9" * MAX_SEED_CHARS)
    for bad in ("9" * (MAX_SEED_CHARS + 1), "\u00b2", "\u0663", "", "a b", "x\x1b"):
        with pytest.raises(RuleParameterError, match="--seed"):
            parse_seed(bad)


def _naive_sum(a: Dist, b: Dist) -> dict[int, Fraction]:
    out: dict[int, Fraction] = defaultdict(Fraction)
    for x, px in a.p.items():
        for y, py in b.p.items():
            out[x + y] += px * py
    return dict(out)


def _naive_repeat(d: Dist, n: int) -> dict[int, Fraction]:
    acc = Dist.constant(0)
    for _ in range(n):
        acc = Dist(_naive_sum(acc, d))
    return acc.p


@pytest.mark.parametrize("n", [1, 2, 5, 17, 40])
@pytest.mark.parametrize("kind", ["d6", "d10", "d10t", "d20"])
def test_integer_count_sums_equal_fraction_sums(kind: str, n: int) -> None:
    assert Dist.die(kind).repeat(n).p == _naive_repeat(Dist.die(kind), n)


def test_uneven_and_sparse_distributions_sum_exactly() -> None:
    rng = random.Random(5)
    for _ in range(20):
        a = Dist(
            {rng.randrange(-50, 50): Fraction(rng.randrange(1, 9), rng.randrange(1, 30)) for _ in range(30)}
        )
        b = Dist({rng.randrange(-5, 5): Fraction(1, rng.randrange(1, 7)) for _ in range(4)})
        assert (a + b).p == _naive_sum(a, b)
    sparse = Dist({0: Fraction(1, 3), 10**9: Fraction(2, 3)})
    assert sparse.repeat(3).p == _naive_repeat(sparse, 3)
    assert (sparse + Dist.die("d6")).total() == 1


def test_sum_of_100_d10_is_exact() -> None:
    d = Dist.die("d10").repeat(100)
    assert d.total() == 1 and min(d.p) == 0 and max(d.p) == 900
    assert d.p[0] == Fraction(1, 10**100)
    assert all(d.p[v] == d.p[900 - v] for v in range(0, 901, 37))  # symmetric around the mean
