"""The fast path and the full parser build the same tree wherever the fast path answers."""

from __future__ import annotations

import random

import pytest
from dicetower.rules.notation.fastpath import fast_parse
from dicetower.rules.notation.parser import _Parser
from hypothesis import given, settings
from hypothesis import strategies as st
from notation_strategies import expressions, generated


def full_parse(text: str):
    return _Parser(text, text.lower()).parse()


@pytest.mark.parametrize(
    "text",
    [
        "1d20+5",
        "4d6kh3",
        "10d10",
        "3d6!",
        "8d6kh3+2",
        "2d20kl1",
        "(1d8+3)*2",
        "-2*3",
        "2*-3",
        "--3",
        "-(1+2)",
        "(-1)",
        "1-2-3",
        "1+2*3",
        "12/2/3",
        "d100",
        "4d6dl",
        " 1d6 + ( 2 ) ",
        "1d20+1d4+3",
        # rerolls, clamps, conditional explosions and several keeps (once full-parser only)
        "4d6r1",
        "4d6ro1",
        "4d6r<3",
        "4d6ro<=2",
        "4d6r=1",
        "6d6mi2",
        "6d6ma5",
        "6d6mi2ma5mi3",
        "4d6kh3kl2",
        "3d6!6",
        "3d6!>=5",
        "3d6!=6",
        "3d6!<2",
        "4d6ro1!kh3mi2",
        "2d100r100!",
        "1d1ro1",
        "2d20kl1+4d6ro1*2-(6d6mi2)",
    ],
)
def test_fast_path_answers_the_everyday_shapes_like_the_full_parser(text: str) -> None:
    fast = fast_parse(text.lower())
    assert fast is not None
    assert fast == full_parse(text)


@pytest.mark.parametrize(
    "text",
    [
        "",
        " ",
        "1d20 \n",
        "d%",
        "4d6 kh3",
        "20x10",
        "1d6x4",
        "(1",
        "1)",
        "1+",
        "*2",
        "1d0",
        "1d1!",
        "1d1001",
        "1001d6",
        "600d6+600d6",
        "2d6d",
        "1d6d6",
        "1 2",
        "(" * 51 + "1" + ")" * 51,
        # the full parser refuses these, or reads a modifier this path does not answer
        "4d6r1r2",
        "4d6r1ro2",
        "3d6!!",
        "1d1r1",
        "4d6r<=6",
        "4d6r>0",
        "3d6!>=1",
        "3d6!<7",
        "1d1!1",
        "4d6r",
        "4d6ro",
        "4d6r==1",
        "4d6r=<1",
        "6d6mi",
        "3d6!>=",
        "4d6ro1 !",
        "4d6>=4",
        "4d6f1",
        "4d6r1x2",
        "4d6mi2%",
        "d%ro1",
    ],
)
def test_fast_path_hands_the_rest_to_the_full_parser(text: str) -> None:
    assert fast_parse(text.lower()) is None


def _agree(text: str) -> None:
    fast = fast_parse(text.lower())
    if fast is not None:
        assert fast == full_parse(text), text


@settings(max_examples=500, deadline=None)
@given(expressions())
def test_agree_on_grammar_strings(text: str) -> None:
    _agree(text)


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet="0123456789d+-*/() !khlromia<>=", max_size=30))
def test_agree_on_token_soup(text: str) -> None:
    _agree(text)


def test_agree_on_twenty_thousand_mutations() -> None:
    rng = random.Random(7)
    answered = 0
    for _ in range(20_000):
        text = generated(rng)
        if text.isascii() and len(text) <= 500:
            fast = fast_parse(text.lower())
            if fast is not None:
                answered += 1
                assert fast == full_parse(text), text
    assert answered > 2_000


_FRAGMENTS = ("r", "ro", "!", "mi", "ma", "kh", "kl", "dh", "dl", "k", "m", "<", ">", "<=", ">=", "=", "==")
_FRAGMENTS += ("0", "1", "2", "6", "7", "20", "x", "%", "f", "d", "+", " ", "(", ")")


def test_agree_on_random_modifier_strings() -> None:
    """Dice heads followed by random runs of modifier fragments, valid or not: wherever the fast
    path answers (it must answer often), its tree is the full parser's."""
    rng = random.Random(23)
    answered = 0
    for _ in range(20_000):
        text = rng.choice(["1d6", "4d6", "3d10", "2d20", "d100", "5d1", "1d2", "10d4"])
        text += "".join(rng.choice(_FRAGMENTS) for _ in range(rng.randrange(1, 6)))
        fast = fast_parse(text)
        if fast is not None:
            answered += 1
            assert fast == full_parse(text), text
    assert answered > 2_000
