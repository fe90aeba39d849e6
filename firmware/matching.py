"""Slots to dice, from kinds, roles and positions only: never from faces.

Why never from faces: a rule that picks which die answers a slot, or which reading counts, by
looking at what the dice show would bias the results (``docs/tower.md``). Everything here sees
kinds, colours and places in the photo, and nothing else. Which die is the wild (tens, units)
die is :func:`dicetower.vision.identity.identify`'s answer over the whole loaded tray: each
kind's dice paired with the loaded dice at the least colour difference, so a pale red wild die
the reader names white is still the wild die when every other d6 is white.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..rules.source import DieSlot, Role
from ..vision.identity import identify, identify_loaded
from ..vision.kinds import label_of
from ..vision.reading import DieReading, Reading, ReadStatus
from .dice_set import DiceSet, TrayDie
from .errors import TrayKindError
from .records import FailureReason, SlotAnswer

__all__ = [
    "MAX_ROUNDS",
    "NoDieForSlot",
    "count_problem",
    "extra_dice",
    "loaded_colours",
    "match_slots",
    "needs_role_die",
    "plan_rounds",
    "reading_problem",
    "role_dice",
]

#: A request thrown in more rounds than this is refused before anything moves.
MAX_ROUNDS = 200


class NoDieForSlot(Exception):
    """No die of the slot's kind is left in the photo (the tower throws again or fails)."""


def needs_role_die(slot: DieSlot) -> bool:
    """Does this slot want a die told apart by its colour (wild, tens, units)?"""
    return slot.role is not Role.PLAIN


def plan_rounds(slots: Sequence[DieSlot], tray: Sequence[TrayDie]) -> list[list[DieSlot]]:
    """Split a request's slots into throws, from kinds and roles only (never from faces).

    A slot with a role the tray has a die for (wild, tens, units) takes that die, one such
    slot per throw. Every other slot takes a die of its kind among the plain dice, and among
    role dice whose role the request does not ask for at all (a 5d6 uses the red wild die
    too when nothing is wild). A kind short of dice is thrown in rounds. A wild slot with
    no wild die, or a kind the tray lacks, is refused with :class:`TrayKindError`.
    """
    requested_roles = {s.role.value for s in slots if needs_role_die(s)}
    role_dice = {d.role: d for d in tray if d.role != "plain"}
    capacity: dict[str, int] = {}
    for d in tray:
        if d.role == "plain" or d.role not in requested_roles:
            capacity[d.kind] = capacity.get(d.kind, 0) + 1
    held = ", ".join(f"{n} {k}" for k, n in sorted(capacity.items())) or "nothing"
    for s in slots:
        role = s.role.value
        if role in role_dice:
            if role_dice[role].kind != s.die:
                raise TrayKindError(
                    f"{s.label or 'slot ' + str(s.slot)} wants a {s.die} as the {role} die; "
                    f"the tray's {role} die is a {role_dice[role]}"
                )
            continue
        if s.role is Role.WILD:
            raise TrayKindError(
                "the roll needs a wild die; the tray has none (config [dice] wild = 'red d6')"
            )
        if capacity.get(s.die, 0) == 0:
            raise TrayKindError(f"the roll needs a {s.die}; the tray holds {held}")
    rounds: list[list[DieSlot]] = []
    pending = list(slots)
    while pending:
        if len(rounds) >= MAX_ROUNDS:
            raise TrayKindError(f"the roll needs more than {MAX_ROUNDS} throws of this tray; load more dice")
        left = dict(capacity)
        free_roles = set(role_dice)
        this, later = [], []
        for s in pending:
            role = s.role.value
            if role in role_dice:
                if role in free_roles:
                    free_roles.discard(role)
                    this.append(s)
                else:
                    later.append(s)
            elif left.get(s.die, 0) > 0:
                left[s.die] -= 1
                this.append(s)
            else:
                later.append(s)
        rounds.append(this)
        pending = later
    return rounds


def count_problem(reading: Reading, tray: Sequence[TrayDie]) -> tuple[FailureReason, str] | None:
    """No dice, or more or fewer than loaded: what keeps any reading from counting."""
    dice = reading.dice
    if not dice:
        return FailureReason.TRAY_EMPTY, "the tray is empty: no dice in the photo"
    loaded = len(tray)
    if len(dice) < loaded:
        return (
            FailureReason.DIE_MISSING,
            f"die missing: {len(dice)} of the {loaded} dice loaded are in the photo",
        )
    if len(dice) > loaded:
        return (
            FailureReason.EXTRA_DIE,
            f"extra die: {len(dice)} found, {loaded} loaded; {extra_dice(reading, tray)}",
        )
    return None


def extra_dice(reading: Reading, tray: Sequence[TrayDie]) -> str:
    """Which found dice are the extra ones, and why: those no loaded die pairs with by kind and colour
    (:func:`~dicetower.vision.identity.identify_loaded`), each with its place, what it was read as,
    and the reason it is the odd one out. Faces play no part.
    """
    paired = identify_loaded(reading.dice, [(d.kind, d.colour) for d in tray])
    loaded_kinds = {label_of(d.kind) for d in tray}
    loaded_colours = {d.colour for d in tray}
    parts = []
    for die, pair in zip(reading.dice, paired, strict=True):
        if pair is not None:
            continue
        x, y = die.box[0] + die.box[2] / 2, die.box[1] + die.box[3] / 2
        if label_of(die.kind) not in loaded_kinds:
            why = f"no {label_of(die.kind)} is loaded"
        elif die.colour not in loaded_colours:
            why = f"no {die.colour} die is loaded"
        elif die.status is not ReadStatus.READ:
            reason = die.reason.value if die.reason else "unsure"
            why = f"unreadable ({reason}): a fleck, a shadow or a piece of a die"
        else:
            why = f"one {die.colour} {label_of(die.kind)} more than loaded"
        parts.append(f"the {die.colour} {label_of(die.kind)} at ({x:.0f}, {y:.0f}): {why}")
        if len(parts) >= 3:
            break
    return "; ".join(parts) if parts else "no one die stands out from the loaded set"


def reading_problem(
    reading: Reading, tray: Sequence[TrayDie], dice_config: DiceSet, roles_now: set[str]
) -> tuple[FailureReason, str] | None:
    """What keeps this reading from counting, judged without looking at a single face."""
    counted = count_problem(reading, tray)
    if counted is not None:
        return counted
    dice = reading.dice
    unreadable = [d for d in dice if d.status is not ReadStatus.READ or d.face is None]
    if unreadable:
        why = ", ".join(sorted({(d.reason.text if d.reason else "unreadable") for d in unreadable}))
        return FailureReason.UNREADABLE, f"{len(unreadable)} unreadable ({why})"
    found = role_dice(dice, tray)
    for role in sorted(roles_now):
        die = dice_config.role_die(role)
        if die is None:
            continue
        named = sum(d.kind == die.kind and d.colour == die.colour for d in dice)
        if named > 1:
            return (
                FailureReason.ROLE_DIE_MISSING,
                f"the {role} die ({die.colour} {die.kind}) was seen {named} times, not once",
            )
        if found.get(role) is None:
            return (
                FailureReason.ROLE_DIE_MISSING,
                f"the {role} die ({die.colour} {die.kind}) was not seen: "
                f"no {die.kind} of a colour near {die.colour}",
            )
    return None


def role_dice(dice: Sequence[DieReading], tray: Sequence[TrayDie]) -> dict[str, int]:
    """The index among ``dice`` of each role's die (wild, tens, units) that was found.

    Every loaded die takes part (plain ones as ``plain#k``), so a plain die of a colour near the
    role's is paired with its own kind and colour first; a role die whose colour no read die is
    near (:data:`~dicetower.vision.identity.NEAR_DELTA_E`) is missing from the answer.
    """
    dice_set = {
        (d.role if d.role != "plain" else f"plain#{k}"): (d.kind, d.colour) for k, d in enumerate(tray)
    }
    return {
        ident.name: ident.index
        for ident in identify(dice, dice_set)
        if ident.name is not None and not ident.name.startswith("plain#")
    }


def match_slots(
    slots: Sequence[DieSlot], reading: Reading | None, tray: Sequence[TrayDie], needed_roles: set[str]
) -> list[SlotAnswer]:
    """Slots to dice by kind and role; plain slots left to right (never by face)."""
    if not slots or reading is None:
        return []
    dice = reading.dice
    order = sorted(range(len(dice)), key=lambda i: (dice[i].centre[0], dice[i].centre[1]))
    used: set[int] = set()
    out: dict[int, SlotAnswer] = {}
    found = role_dice(dice, tray)
    # the dice of the roles the request asks for are kept for those roles
    reserved = {found[role] for role in needed_roles if role in found}
    loaded_roles = {d.role for d in tray if d.role != "plain"}
    colours = loaded_colours(dice, tray, found)
    for s in slots:
        if needs_role_die(s) and s.role.value in loaded_roles:
            i = found.get(s.role.value)
            if i is None or i in used or dice[i].kind != s.die:
                raise NoDieForSlot(f"the {s.role.value} die is not in the photo for slot {s.slot}")
            used.add(i)
            out[s.slot] = SlotAnswer.of(s, i, reading, colours.get(i))
    for s in slots:
        if s.slot in out:
            continue
        pool = (i for i in order if i not in used and i not in reserved and dice[i].kind == s.die)
        i = next(pool, None)
        if i is None:
            raise NoDieForSlot(f"no {s.die} left in the photo for slot {s.slot}")
        used.add(i)
        out[s.slot] = SlotAnswer.of(s, i, reading, colours.get(i))
    return [out[s.slot] for s in slots]


def loaded_colours(
    dice: Sequence[DieReading], tray: Sequence[TrayDie], found: dict[str, int] | None = None
) -> dict[int, str]:
    """Each read die's colour as the config names it: the loaded die it is, by kind and colour.

    Why not the reader's name: the reader names a colour from pixels, and a white die in shade or
    against a bright tray can come out ``translucent`` or ``grey``; a roll's explanation speaks of
    the dice the user loaded ("4 white d6"). Role dice (``found``, :func:`role_dice`) take their
    role's colour; the others are paired with the remaining loaded dice at the least colour
    distance (:func:`~dicetower.vision.identity.identify_loaded`). A die paired with none keeps no
    entry (its reader's name stands).
    """
    found = role_dice(dice, tray) if found is None else found
    by_role = {d.role: d for d in tray if d.role != "plain"}
    out = {i: by_role[role].colour for role, i in found.items() if role in by_role}
    left = [(d.kind, d.colour) for d in tray if d.role == "plain" or d.role not in found]
    # a die the reader names as a loaded die of its kind is that die: only the others are paired
    unsure = []
    for i, d in enumerate(dice):
        if i in out:
            continue
        named = (label_of(d.kind), d.colour)
        if named in left:
            left.remove(named)
            out[i] = d.colour
        else:
            unsure.append(i)
    pairs = identify_loaded([dice[i] for i in unsure], left) if unsure else []
    for i, c in zip(unsure, pairs, strict=True):
        if c is not None:
            out[i] = left[c][1]
    return out
