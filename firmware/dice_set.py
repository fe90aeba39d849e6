"""The dice loaded in the tray, as the config's ``[dice]`` table names them by role.

Why checked here, before anything moves: a die the reader cannot read would fail every throw as
unreadable, and a role die without a colour of its own could not be told apart; both are refused
with the role and the spec that named them.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping
from dataclasses import dataclass
from typing import Any

from .errors import ConfigError
from .taught_config import check_taught_kind

__all__ = ["MAX_TRAY_DICE", "ROLES", "DiceSet", "TrayDie", "default_dice"]

#: Roles a die in the tray can have (the rules' :class:`~dicetower.rules.source.Role` values).
ROLES = ("plain", "wild", "tens", "units")
#: Most dice a tray may be loaded with (bounds every per-die loop of a throw).
MAX_TRAY_DICE = 40


@dataclass(frozen=True)
class TrayDie:
    """One die loaded in the tray: its kind (``d6``, ``d10t`` ...), body colour and role."""

    kind: str
    colour: str
    role: str = "plain"

    def __str__(self) -> str:
        return f"{self.colour} {self.kind}" + ("" if self.role == "plain" else f" ({self.role})")


_DIE_SPEC = re.compile(r"\s*(?:(\d+)\s*(?:x\s*)?)?([a-z]+)\s+(d\d+t?)\s*")


@dataclass(frozen=True)
class DiceSet:
    """The dice in the tray, keyed by role in the file: ``plain = "4 white d6"``, ``wild = "red d6"``.

    A role other than plain (wild, tens, units) names one die, told apart from the rest by
    its colour, so its colour must differ from every other die of its kind.
    """

    dice: tuple[TrayDie, ...]

    @classmethod
    def parse(cls, table: Mapping[str, Any], taught: Collection[tuple[str, str]] | None = None) -> DiceSet:
        """``taught``: the (kind, colour) pairs a taught model reads (colour "" for any colour), which
        lets the tray hold a kind only a taught reader reads (d8, d12) in those colours.

        Every problem is found, not only the first: the :class:`ConfigError` raised says the first
        and carries them all in ``problems``.
        """
        problems: list[str] = []
        dice: list[TrayDie] = []
        for role, value in table.items():
            if role not in ROLES:
                problems.append(f"[dice] {role}: unknown role; allowed: {', '.join(ROLES)}")
                continue
            for spec in value if isinstance(value, list) else [value]:
                try:
                    dice.extend(_spec_dice(role, spec, taught))
                except ConfigError as exc:
                    problems.append(str(exc))
        if not dice and not problems:
            problems.append("[dice]: the tray needs at least one die, e.g. plain = '5 white d6'")
        if len(dice) > MAX_TRAY_DICE:
            problems.append(f"[dice]: {len(dice)} dice; a tray holds at most {MAX_TRAY_DICE}")
        for d in dice:
            if d.role == "plain":
                continue
            if sum(x.role == d.role for x in dice) > 1:
                problems.append(f"[dice] {d.role}: given twice; one die has that role")
            clash = [x for x in dice if x is not d and x.kind == d.kind and x.colour == d.colour]
            if clash:
                problems.append(
                    f"[dice] {d.role} = '{d.colour} {d.kind}': another {d.colour} {d.kind} is in the tray; "
                    "the tower tells a role die apart by colour, so give it a colour of its own"
                )
        if problems:
            unique = list(dict.fromkeys(problems))
            raise ConfigError(unique[0], unique)
        return cls(tuple(dice))

    def kinds(self) -> dict[str, int]:
        """How many dice of each kind are loaded."""
        out: dict[str, int] = {}
        for d in self.dice:
            out[d.kind] = out.get(d.kind, 0) + 1
        return out

    def role_die(self, role: str) -> TrayDie | None:
        return next((d for d in self.dice if d.role == role), None)

    def describe(self) -> str:
        """``4 white d6, 1 red d6 (wild)``."""
        counts: dict[TrayDie, int] = {}
        for d in self.dice:
            counts[d] = counts.get(d, 0) + 1
        return ", ".join(f"{n} {d}" for d, n in counts.items())

    def tray_json(self) -> list[dict[str, Any]]:
        """The tray for machines (``/api/tower``'s ``roller.tray``): one entry per kind, colour and role, with
        its count, in the order the dice were loaded: what a client such as the Foundry module may ask for."""
        counts: dict[TrayDie, int] = {}
        for d in self.dice:
            counts[d] = counts.get(d, 0) + 1
        return [{"kind": d.kind, "colour": d.colour, "role": d.role, "count": n} for d, n in counts.items()]

    def to_table(self) -> dict[str, Any]:
        """The ``[dice]`` table that parses back to this set (``plain = "4 white d6"``)."""
        table: dict[str, dict[str, int]] = {}
        for d in self.dice:
            counts = table.setdefault(d.role, {})
            counts[f"{d.colour} {d.kind}"] = counts.get(f"{d.colour} {d.kind}", 0) + 1
        out: dict[str, Any] = {}
        for role, counts in table.items():
            specs = [spec if n == 1 else f"{n} {spec}" for spec, n in counts.items()]
            out[role] = specs if len(specs) > 1 else specs[0]
        return out


def _spec_dice(role: str, spec: Any, taught: Collection[tuple[str, str]] | None) -> list[TrayDie]:
    """The dice one ``[COUNT] COLOUR KIND`` spec of ``role`` loads; :class:`ConfigError` naming it."""
    from ..vision.colour_names import COLOUR_NAMES
    from ..vision.kinds import NEVER_READ, readable_labels, taught_only_labels

    m = _DIE_SPEC.fullmatch(spec) if isinstance(spec, str) else None
    if m is None:
        raise ConfigError(f"[dice] {role} = {spec!r}: expected '[COUNT] COLOUR KIND', e.g. '4 white d6'")
    count = int(m.group(1) or 1)
    colour, kind = m.group(2), m.group(3)
    if colour not in COLOUR_NAMES:
        raise ConfigError(f"[dice] {role} = {spec!r}: colour {colour!r}; allowed: {', '.join(COLOUR_NAMES)}")
    where = f"[dice] {role} = {spec!r}: kind {kind!r}"
    if kind in NEVER_READ:
        raise ConfigError(f"{where}: {NEVER_READ[kind]}; the tower cannot read it, taught or not")
    # the kinds the reader reads (a numeral d6 is a d6): a die it cannot read would fail every
    # throw as unreadable, so it is refused here, where the cause is plain
    readable = readable_labels()
    if kind in taught_only_labels():
        check_taught_kind(where, kind, colour, taught)
    elif kind not in readable:
        taught_only = ", ".join(taught_only_labels())
        raise ConfigError(f"{where}; the tower reads {', '.join(readable)}, and {taught_only} once taught")
    if role != "plain" and count != 1:
        raise ConfigError(f"[dice] {role} = {spec!r}: a {role} die is one die")
    if not 1 <= count <= MAX_TRAY_DICE:
        raise ConfigError(f"[dice] {role} = {spec!r}: count must be 1..{MAX_TRAY_DICE}")
    return [TrayDie(kind, colour, role) for _ in range(count)]


def default_dice() -> DiceSet:
    """The built-in tray: four white d6 and a red d6 that is the wild die."""
    return DiceSet((*(TrayDie("d6", "white") for _ in range(4)), TrayDie("d6", "red", "wild")))
