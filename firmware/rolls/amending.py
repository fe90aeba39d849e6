"""A roll as the table corrected it: the rules core evaluates the request again on the final faces.

Why evaluate again rather than patch the total: a corrected die can change which dice are kept,
whether a check succeeds, whether it is a critical; only the rules know. The logged request is
parsed as it was accepted and rolled against a :class:`~dicetower.rules.source.FixedSource` that
holds every die's face in slot order (the order the rules asked for them), with the corrected
slots changed. A face that would make the rules ask for another die (a wild die corrected to a
6 explodes) or no longer ask for one the tower threw cannot be answered from the photo: such a
correction is refused (:class:`AmendError`), so an amended roll never holds a die nobody saw.

Pure: the log, the service and the views call it; nothing here touches a file.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Sequence
from typing import Any

from ...rules.errors import DiceError, ExtraFacesError, FaceMissingError
from ...rules.faces import check_face, printed_faces
from ...rules.source import DiceSource, FixedSource
from .rolling import DiceSupply, ThrowHooks, parse_roll_request, perform_roll

__all__ = ["AMENDED_KEYS", "AmendError", "amend_roll", "corrected_faces", "die_faces"]

#: what a die keeps from the throw that read it when the rules evaluate its roll again
_TOWER_KEYS = ("throw", "die", "colour", "confidence", "box", "position", "crop", "by_table")
#: the keys of a row an amendment replaces
AMENDED_KEYS = ("result", "total", "outcome", "odds", "dice")
#: amended rolls kept ready (a roll's checks' odds cost milliseconds; the overlay asks often)
_CACHE_SIZE = 256
_cache: OrderedDict[tuple[str, int], dict[str, Any]] = OrderedDict()


class AmendError(ValueError):
    """A correction the rules cannot apply; ``field`` is ``die`` or ``face``, ``status`` 422 or 409."""

    def __init__(self, field_name: str, message: str, status: int = 422) -> None:
        super().__init__(message)
        self.field = field_name
        self.status = status


class _FacesSupply(DiceSupply):
    """The faces of a logged roll, asked for again in the same order."""

    name = "table"

    def __init__(self, faces: Sequence[int]) -> None:
        self.faces = list(faces)

    def source(self, hooks: ThrowHooks) -> DiceSource:
        return FixedSource(self.faces)


def die_faces(kind: str) -> list[int]:
    """The faces printed on a die of ``kind``: the buttons the table offers."""
    return list(printed_faces(kind))


def corrected_faces(dice: Sequence[dict[str, Any]], corrections: Sequence[dict[str, Any]]) -> list[int]:
    """Every die's face in slot order, each corrected slot at its last corrected face."""
    faces = {int(d["slot"]): int(d["face"]) for d in dice}
    for c in corrections:
        faces[int(c["slot"])] = int(c["new"])
    return [faces[s] for s in sorted(faces)]


def amend_roll(row: dict[str, Any], corrections: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """``row`` (a decoded finished roll) with ``corrections`` applied: the :data:`AMENDED_KEYS`
    evaluated again by the rules, each corrected die marked ``corrected`` (its face as read, who
    corrected it, the record). Raises :class:`AmendError` when the rules cannot apply them."""
    key = (str(row.get("hash")), len(corrections))
    if row.get("hash") and key in _cache:
        _cache.move_to_end(key)
        return dict(_cache[key])
    dice = row.get("dice") or []
    by_slot = {int(d["slot"]): d for d in dice}
    for c in corrections:
        slot = int(c["slot"])
        if slot not in by_slot:
            raise AmendError("die", f"roll {row.get('id')} has no die {slot}")
        try:
            check_face(str(by_slot[slot]["kind"]), int(c["new"]))
        except DiceError as exc:
            raise AmendError("face", str(exc)) from None
    request_doc = dict(row.get("request") or {})
    via = request_doc.pop("via", None) or "http"
    try:
        request = parse_roll_request(request_doc, via=via)
        outcome = perform_roll(request, _FacesSupply(corrected_faces(dice, corrections)), ThrowHooks())
    except FaceMissingError:
        raise AmendError(
            "face",
            "with that face the rules would ask for another die, which the tower did not throw; roll again",
            409,
        ) from None
    except ExtraFacesError:
        raise AmendError(
            "face", "with that face the rules would not have asked for a die the tower threw; roll again", 409
        ) from None
    except (DiceError, ValueError) as exc:
        raise AmendError("die", f"the rules cannot evaluate roll {row.get('id')} again: {exc}", 409) from None
    last = {int(c["slot"]): c for c in corrections}
    first = {}
    for c in corrections:
        first.setdefault(int(c["slot"]), c)
    amended_dice = []
    for d in outcome.dice:
        slot = int(d["slot"])
        was = by_slot.get(slot, {})
        d = {**d, **{k: was[k] for k in _TOWER_KEYS if k in was}}
        if slot in last:
            d["corrected"] = {
                "read": first[slot]["old"],
                "by": last[slot].get("by"),
                "record": last[slot].get("record"),
            }
        amended_dice.append(d)
    amended = {
        "result": {**outcome.result, "text": outcome.text},
        "total": outcome.total,
        "outcome": outcome.outcome,
        "odds": outcome.odds,
        "dice": amended_dice,
    }
    if row.get("hash"):
        _cache[key] = amended
        while len(_cache) > _CACHE_SIZE:
            _cache.popitem(last=False)
    return dict(amended)
