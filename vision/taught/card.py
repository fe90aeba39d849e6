"""A taught model's card, checked whole before the model reads a die: its values and its files.

Why check at load: the card decides what a taught die answers. A NaN in a die's colour once sent
the reader's pairing into an endless loop; a threshold of 0 never abstains; faces in another
order name the wrong face at full confidence; a network from another fit reads with another
fit's rows. So every value the reader uses is checked against its range here, and every file
of the model (its networks and its empty tray) is named in the card with its SHA-256, the card
itself covered by :data:`CARD_HASH`, a SHA-256 of its canonical JSON without that field.

What the hashes protect against: an edit to the card or a file, files mixed from two fits or
two folders, and corruption. What they do not: whoever rewrites the card can rewrite its
hashes too (there is no key), so a model is only as trustworthy as the folder it came from;
the value checks still hold a rewritten card to values the reader can use.

The schema lives here, in one place: :func:`check_card` checks the fields the reader uses and
leaves other fields (the fit's notes, figures it adds) to the card hash. A new field that the
reader uses gets its check here.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..kinds import KINDS, NEVER_READ, faces_of
from .body import Body
from .features import Network, TaughtModelError
from .fitted import is_fitted_file

__all__ = [
    "CARD",
    "CARD_HASH",
    "FILES",
    "MAX_DICE",
    "MAX_ID_CHARS",
    "MODEL_FILES",
    "READERS",
    "SCHEMA",
    "TaughtDieCard",
    "Telling",
    "card_digest",
    "check_card",
    "check_card_digest",
    "model_files_in",
    "network_file",
    "seal_card",
]

CARD = "taught.json"
SCHEMA = "dicetower.taught/1"
#: The card's own hash: a SHA-256 of its canonical JSON (:func:`card_digest`) without this field.
CARD_HASH = "card_sha256"
#: The card's table of the model's files: file name to SHA-256.
FILES = "files"
#: Most taught dice one model holds.
MAX_DICE = 64
#: Longest taught die id (a colour name of up to 40 characters, a space and a kind).
MAX_ID_CHARS = 48
#: Most dice of one taught id one throw may hold.
MAX_PER_THROW = 64
#: Largest count a figure may hold (a fit reads at most this many crops).
MAX_COUNT = 10_000_000
#: A die's size in photo pixels is at most this (the largest photo accepted is 120 MP).
MAX_SIDE_PX = 20_000.0


def network_file(network: Network) -> str:
    """The file name of a taught network: the general network with the taught heads below its rows."""
    return f"{network.value}.onnx"


#: Every file a taught model may hold besides its card and its dice's fitted readers
#: (``fitted-N.onnx``, :mod:`.fitted`); each one present is named in the card.
MODEL_FILES: tuple[str, ...] = (*(network_file(n) for n in Network), "tray.png")
#: The face readers a taught die may use: the head on a general network's rows, or its fitted reader.
READERS = ("head", "fitted")


def _at(where: str, field: str) -> str:
    return f"{where}.{field}" if where else field


def _bad(where: str, why: str) -> TaughtModelError:
    return TaughtModelError(f"{where}: {why}")


def _number(value: Any, where: str, lo: float, hi: float, *, above: bool = False) -> float:
    """A finite number in ``[lo, hi]`` (``(lo, hi]`` when ``above``)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise _bad(where, f"must be a number, not {value!r}")
    number = float(value)
    low_ok = number > lo if above else number >= lo
    if not math.isfinite(number) or not low_ok or number > hi:
        span = f"({lo:g}, {hi:g}]" if above else f"[{lo:g}, {hi:g}]"
        raise _bad(where, f"{value!r} is not a finite number in {span}")
    return number


def _integer(value: Any, where: str, lo: int, hi: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not lo <= value <= hi:
        raise _bad(where, f"must be a whole number from {lo} to {hi}, not {value!r}")
    return value


def _text(value: Any, where: str, longest: int, *, empty: bool = False) -> str:
    if not isinstance(value, str) or len(value) > longest or (not value and not empty):
        least = 0 if empty else 1
        raise _bad(where, f"must be text of {least} to {longest} characters, not {value!r}")
    return value


def _mapping(value: Any, where: str) -> Mapping[str, Any]:
    if not isinstance(value, dict):
        raise _bad(where, f"must be an object, not {type(value).__name__}")
    return value


def _pair(value: Any, where: str) -> tuple[Any, Any]:
    if not isinstance(value, list) or len(value) != 2:
        raise _bad(where, f"must be a list of two, not {value!r}")
    return value[0], value[1]


def _sha256(value: Any, where: str) -> str:
    if not (isinstance(value, str) and len(value) == 64 and all(c in "0123456789abcdef" for c in value)):
        raise _bad(where, f"must be a SHA-256 in hex, not {value!r}")
    return value


def _figures(value: Any, where: str) -> dict[str, Any]:
    """Held-back figures: the counts and interval drift reads, when present, in range."""
    figures = dict(_mapping(value, where))
    counts = {}
    for name in ("dice", "right", "wrong", "unreadable"):
        if name in figures:
            counts[name] = _integer(figures[name], _at(where, name), 0, MAX_COUNT)
    if counts.get("right", 0) > counts.get("dice", MAX_COUNT):
        raise _bad(_at(where, "right"), f"{counts['right']} is more than the {counts['dice']} dice held back")
    if "right_interval" in figures:
        lo, hi = _pair(figures["right_interval"], _at(where, "right_interval"))
        lo = _number(lo, _at(where, "right_interval[0]"), 0.0, 1.0)
        if _number(hi, _at(where, "right_interval[1]"), 0.0, 1.0) < lo:
            raise _bad(_at(where, "right_interval"), f"{figures['right_interval']} is not an interval")
    return figures


def _body(value: Any, where: str) -> Body:
    obj = _mapping(value, where)
    lab = obj.get("lab")
    if not isinstance(lab, list) or len(lab) != 3:
        raise _bad(_at(where, "lab"), f"must be three numbers (CIE Lab), not {lab!r}")
    ranges = ((0.0, 100.0), (-128.0, 128.0), (-128.0, 128.0))
    values = tuple(_number(v, f"{where}.lab[{i}]", *ranges[i]) for i, v in enumerate(lab))
    spread = _number(obj.get("spread", 0.0), _at(where, "spread"), 0.0, 400.0)
    side = _number(obj.get("side"), _at(where, "side"), 0.0, MAX_SIDE_PX, above=True)
    return Body(values, spread, side)  # type: ignore[arg-type]


def _faces(value: Any, where: str, kind: str) -> tuple[int, ...]:
    """At least two of the kind's faces, each once, in the kind's order (the order the fit writes)."""
    kind_faces = faces_of(kind)
    if not isinstance(value, list) or not all(isinstance(f, int) and not isinstance(f, bool) for f in value):
        raise _bad(where, f"must be a list of faces, not {value!r}")
    if len(value) < 2 or not set(value) <= set(kind_faces):
        raise _bad(where, f"{value} are not two or more of a {kind}'s faces {list(kind_faces)}")
    if list(value) != [f for f in kind_faces if f in value]:
        raise _bad(where, f"{value} are not each once in a {kind}'s order {list(kind_faces)}")
    return tuple(value)


def _kind(value: Any, where: str) -> str:
    if value in NEVER_READ:
        raise _bad(where, f"{value!r}: {NEVER_READ[value]}; no reader reads it")
    labels = {k.label for k in KINDS.values()} - set(NEVER_READ)
    if value not in labels:
        raise _bad(where, f"{value!r} is not a kind a taught reader reads ({', '.join(sorted(labels))})")
    return str(value)


@dataclass(frozen=True)
class TaughtDieCard:
    """One taught die as the card records it."""

    id: str
    kind: str  #: the label kind (``d6``, ``d10``, ``d10t``, ``d20``, ``d8``, ``d12``)
    colour: str
    network: Network  #: which taught network reads it
    faces: tuple[int, ...]  #: the faces its head answers, in row order
    rows: tuple[int, int]  #: its rows of that network's output, ``[start, end)`` (after the general rows)
    threshold: float
    body: Body
    figures: dict[str, Any]
    #: below its threshold, take the general reader's sure answer (:mod:`.fallback`), as the fit chose
    fallback: bool = False
    #: which reader answers: ``head`` (its rows of ``network``) or ``fitted`` (its file ``fitted``)
    reader: str = "head"
    #: its fitted reader's file (:mod:`.fitted`), or None when the fit trained none
    fitted: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "kind": self.kind,
            "colour": self.colour,
            "network": self.network.value,
            "faces": list(self.faces),
            "rows": list(self.rows),
            "threshold": round(self.threshold, 4),
            "body": self.body.to_json(),
            "figures": self.figures,
            "fallback": self.fallback,
            "reader": self.reader,
            "fitted": self.fitted,
        }

    @classmethod
    def from_json(cls, value: Any, where: str, *, open_heads: bool = False) -> TaughtDieCard:
        """Check every field of one die of the card; ``where`` names it (``taught.json: dice[0]``);
        ``open_heads``: see :func:`check_card`."""
        obj = _mapping(value, where)
        kind = _kind(obj.get("kind"), _at(where, "kind"))
        try:
            network = Network(obj.get("network"))
        except ValueError:
            known = [n.value for n in Network]
            raise _bad(_at(where, "network"), f"{obj.get('network')!r} is not one of {known}") from None
        faces = _faces(obj.get("faces"), _at(where, "faces"), kind)
        start, end = _pair(obj.get("rows"), _at(where, "rows"))
        start = _integer(start, _at(where, "rows[0]"), 1, 1_000_000)
        if _integer(end, _at(where, "rows[1]"), 1, 1_000_000) - start != len(faces):
            raise _bad(_at(where, "rows"), f"{obj['rows']} do not hold its {len(faces)} faces")
        lowest = 0.0 if open_heads else 0.5  # the fit's open read, or (0.5, 1] for every reader
        fallback = obj.get("fallback", False)
        if not isinstance(fallback, bool):
            raise _bad(_at(where, "fallback"), f"fallback must be true or false, not {fallback!r}")
        reader = obj.get("reader", "head")
        if reader not in READERS:
            raise _bad(_at(where, "reader"), f"{reader!r} is not one of {list(READERS)}")
        fitted = obj.get("fitted")
        if fitted is not None and not (isinstance(fitted, str) and is_fitted_file(fitted, MAX_DICE)):
            raise _bad(_at(where, "fitted"), f"{fitted!r} is not a fitted reader's file (fitted-N.onnx)")
        if reader == "fitted" and fitted is None:
            raise _bad(_at(where, "reader"), "'fitted', but the die has no fitted reader's file")
        return cls(
            _text(obj.get("id"), _at(where, "id"), MAX_ID_CHARS),
            kind,
            _text(obj.get("colour", ""), _at(where, "colour"), MAX_ID_CHARS, empty=True),
            network,
            faces,
            (start, end),
            _number(obj.get("threshold"), _at(where, "threshold"), lowest, 1.0, above=not open_heads),
            _body(obj.get("body"), _at(where, "body")),
            _figures(obj.get("figures", {}), _at(where, "figures")),
            fallback,
            reader,
            fitted,
        )


@dataclass(frozen=True)
class Telling:
    """The telling head as the card records it: its rows, and each taught die's column in it."""

    rows: tuple[int, int]
    columns: list[int]  #: for each taught die in card order, its column of the head
    counts: dict[str, int]  #: how many dice of each id one throw may hold


def _telling(value: Any, dice: tuple[TaughtDieCard, ...], where: str) -> Telling | None:
    if value is None:
        return None
    obj = _mapping(value, where)
    if obj.get("network", Network.NUMERALS.value) != Network.NUMERALS.value:
        raise _bad(_at(where, "network"), f"must be {Network.NUMERALS.value!r}, not {obj.get('network')!r}")
    start, end = _pair(obj.get("rows"), _at(where, "rows"))
    start = _integer(start, _at(where, "rows[0]"), 1, 1_000_000)
    end = _integer(end, _at(where, "rows[1]"), 1, 1_000_000)
    ids = obj.get("dice")
    if (
        not isinstance(ids, list)
        or not all(isinstance(i, str) for i in ids)
        or sorted(ids) != sorted(d.id for d in dice)
    ):
        raise _bad(_at(where, "dice"), f"{ids!r} do not list the taught dice, each once")
    if end - start != len(ids):
        raise _bad(_at(where, "rows"), f"{obj['rows']} do not hold its {len(ids)} dice")
    counts = _mapping(obj.get("counts", {}), _at(where, "counts"))
    checked = {
        d.id: _integer(counts.get(d.id, 1), f"{where}.counts[{d.id!r}]", 1, MAX_PER_THROW) for d in dice
    }
    return Telling((start, end), [ids.index(d.id) for d in dice], checked)


def check_card(
    card: Any, where: str, *, open_heads: bool = False
) -> tuple[tuple[TaughtDieCard, ...], Telling | None]:
    """The card's dice and telling head, every value checked; one error naming the field.

    ``where`` names the card in errors (its path). Fields the reader does not use are left to
    the card's hash. ``open_heads`` allows a threshold of 0 to 1 (the fit's held-back read, before
    it chooses them); every model a reader loads keeps thresholds in (0.5, 1].
    """
    if not isinstance(card, dict) or card.get("schema") != SCHEMA:
        raise TaughtModelError(f"{where}: not a {SCHEMA} card")
    raw = card.get("dice")
    if not isinstance(raw, list) or not 1 <= len(raw) <= MAX_DICE:
        raise TaughtModelError(f"{where}: dice: must list 1 to {MAX_DICE} taught dice")
    dice: list[TaughtDieCard] = []
    for i, value in enumerate(raw):
        die = TaughtDieCard.from_json(value, f"{where}: dice[{i}]", open_heads=open_heads)
        for j, other in enumerate(dice):
            if other.id == die.id:
                raise TaughtModelError(f"{where}: dice[{i}].id: {die.id!r} is dice[{j}]'s id too")
            if die.fitted is not None and other.fitted == die.fitted:
                raise TaughtModelError(f"{where}: dice[{i}].fitted: {die.fitted!r} is dice[{j}]'s too")
        dice.append(die)
    for name in ("held_back", "held_back_read"):
        if name in card:
            _figures(card[name], f"{where}: {name}")
    networks = _mapping(card.get("networks", {}), f"{where}: networks")
    for name, spec in networks.items():
        _sha256(_mapping(spec, f"{where}: networks.{name}").get("sha256"), f"{where}: networks.{name}.sha256")
    if FILES not in card or CARD_HASH not in card:
        raise TaughtModelError(
            f"{where}: {FILES}: missing: the card does not hash its files (a model fitted before cards"
            " did); fit the model again"
        )
    files = _mapping(card.get(FILES), f"{where}: {FILES}")
    for name, digest in files.items():
        if name not in MODEL_FILES and not is_fitted_file(name, MAX_DICE):
            known = ", ".join((*MODEL_FILES, "fitted-N.onnx"))
            raise _bad(f"{where}: {FILES}", f"{name!r} is not a taught model's file ({known})")
        _sha256(digest, f"{where}: {FILES}.{name}")
    _sha256(card.get(CARD_HASH), f"{where}: {CARD_HASH}")
    return tuple(dice), _telling(card.get("telling"), tuple(dice), f"{where}: telling")


def model_files_in(folder: Path) -> list[str]:
    """The model files (:data:`MODEL_FILES` and fitted readers) present in ``folder``, sorted."""
    return sorted(
        p.name
        for p in folder.iterdir()
        if p.is_file() and (p.name in MODEL_FILES or is_fitted_file(p.name, MAX_DICE))
    )


def card_digest(card: Mapping[str, Any]) -> str:
    """The SHA-256 of ``card``'s canonical JSON (sorted keys, no spaces, ASCII) without :data:`CARD_HASH`."""
    body = {k: v for k, v in card.items() if k != CARD_HASH}
    text = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=True)
    return hashlib.sha256(text.encode("ascii")).hexdigest()


def check_card_digest(card: Mapping[str, Any], where: str) -> None:
    """Refuse a card whose :data:`CARD_HASH` is not its own digest: it was edited after the fit."""
    if card_digest(card) != card.get(CARD_HASH):
        raise TaughtModelError(
            f"{where}: {CARD_HASH}: the card does not match its hash (edited after the fit);"
            " fit the model again"
        )


def seal_card(card: Mapping[str, Any], folder: Path) -> dict[str, Any]:
    """``card`` with :data:`FILES` listing the hash of each model file in ``folder``, and its own hash.

    The card is taken as JSON reads it back (lists, plain numbers), so the hash is of what the
    model's loader will read.
    """
    sealed = json.loads(json.dumps({k: v for k, v in card.items() if k != CARD_HASH}))
    sealed[FILES] = {
        name: hashlib.sha256((folder / name).read_bytes()).hexdigest() for name in model_files_in(folder)
    }
    sealed[CARD_HASH] = card_digest(sealed)
    return sealed
