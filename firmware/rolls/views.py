"""Log rows as the API shows them, and the bounded form the event stream sends.

Photo and crop URLs name the roll by id and the photo by its index or slot
(``/api/rolls/7/photos/0.jpg``, ``/api/rolls/7/dice/3.jpg``); the server looks the file up
in the log, so no URL ever carries a path.

Why a bounded form: one ``1000d1000`` is a 170 KB document, and the event stream sends each
roll to every client and 20 of them on every connect. :func:`event_view` keeps the first
:data:`EVENT_DICE` dice and faces of a roll, says how many there were and that the rest are at
``url``, so no event or snapshot grows with the size of a roll.
"""

from __future__ import annotations

from typing import Any

from .amending import AmendError, amend_roll
from .roll_words import roll_modifier, roll_sum, roll_title

__all__ = [
    "EVENT_DICE",
    "EVENT_TEXT",
    "EVENT_THROWS",
    "event_faces",
    "event_view",
    "roll_summary",
    "roll_view",
]

#: dice (and faces of a throw) an event carries; the rest are counted and left to the roll's URL
EVENT_DICE = 50
#: throws of a roll an event lists (a tower roll takes at most 2 x [roll] max_throws, 400 at most)
EVENT_THROWS = 20
#: characters of a roll's text, and of an error message, an event carries
EVENT_TEXT = 400


def roll_view(row: dict[str, Any]) -> dict[str, Any]:
    """The ``GET /api/rolls/{id}`` document for a finished or pending row."""
    rid = row["id"]
    request = row.get("request") or {}
    view: dict[str, Any] = {
        "id": rid,
        "status": row["status"],
        "roller": row.get("roller"),
        "via": request.get("via"),
        "created_at": row.get("created_at"),
        "kind": row.get("kind"),
        "notation": request.get("notation"),
        "system": request.get("system"),
        "check": request.get("check"),
        "params": request.get("params"),
        "label": request.get("notation") or f"{request.get('system')} {request.get('check')}",
        "title": roll_title(request),  # the system's display name: what the overlay shows
    }
    if row["status"] in ("queued", "rolling"):
        return view
    corrections = row.get("corrections") or []
    as_read = None
    if corrections:
        try:
            amended = amend_roll(row, corrections)
        except AmendError:  # the log holds a correction the rules cannot apply: show the roll as read
            amended = {}
        if amended:
            result = row.get("result") or {}
            as_read = {"total": row.get("total"), "outcome": row.get("outcome"), "text": result.get("text")}
            row = {**row, **amended}
    result = row.get("result") or {}
    throws = row.get("throws") or []
    photo_names = {t.get("photo") for t in throws if t.get("photo")}
    dice = []
    for d in row.get("dice") or []:
        d = dict(d)
        crop = d.pop("crop", None)
        d["crop_url"] = f"/api/rolls/{rid}/dice/{d['slot']}.jpg" if crop else None
        dice.append(d)
    view.update(
        {
            "finished_at": row.get("finished_at"),
            "source": row.get("source"),
            "text": result.get("text"),
            "total": row.get("total"),
            "outcome": row.get("outcome"),
            "degree": result.get("degree"),
            "critical": result.get("critical"),
            "botch": result.get("botch"),
            "successes": result.get("successes"),
            "modifier": roll_modifier(result, row.get("total"), row.get("dice")),
            "sum": roll_sum(result),
            "odds": row.get("odds"),
            "dice": dice,
            "throws": [
                {
                    "index": t.get("index"),
                    "reason": t.get("reason"),
                    "faces": t.get("faces"),
                    "photo_url": (
                        f"/api/rolls/{rid}/photos/{t['index']}.jpg" if t.get("photo") in photo_names else None
                    ),
                    "photo_sha256": t.get("photo_sha256"),
                    "timings": t.get("timings"),
                    "retries": t.get("retries"),
                    "table": (t.get("reading") or {}).get("table") or [],
                }
                for t in throws
            ],
            "timings": row.get("timings"),
            "error": row.get("error"),
            "hash": row.get("hash"),
            "corrected": as_read is not None,
            "corrections": [_correction_view(c) for c in corrections],
        }
    )
    if as_read is not None:
        view["as_read"] = as_read
    return view


def _correction_view(c: dict[str, Any]) -> dict[str, Any]:
    """One correction as the API lists it: the die (slot), its face before and after, who, when."""
    return {
        "die": c.get("slot"),
        "kind": c.get("kind"),
        "old": c.get("old"),
        "new": c.get("new"),
        "by": c.get("by"),
        "at": c.get("at"),
        "record": c.get("record"),
    }


def roll_summary(view: dict[str, Any]) -> dict[str, Any]:
    """The short form ``GET /api/rolls`` lists (no per-throw details)."""
    keys = (
        "id",
        "status",
        "roller",
        "via",
        "created_at",
        "finished_at",
        "label",
        "system",
        "check",
        "source",
        "text",
        "total",
        "outcome",
        "degree",
        "critical",
        "botch",
        "odds",
        "error",
        "corrected",
    )
    out = {k: view.get(k) for k in keys}
    out["faces"] = [d.get("face") for d in view.get("dice") or []]
    return out


def _clip(text: Any, limit: int = EVENT_TEXT) -> Any:
    return text[: limit - 1] + "…" if isinstance(text, str) and len(text) > limit else text


def event_faces(faces: list[Any] | None) -> dict[str, Any]:
    """A throw's faces as an event carries them: the first :data:`EVENT_DICE`, and how many there were."""
    faces = faces or []
    out: dict[str, Any] = {"faces": faces[:EVENT_DICE]}
    if len(faces) > EVENT_DICE:
        out["faces_count"] = len(faces)
    return out


def event_view(view: dict[str, Any]) -> dict[str, Any]:
    """``view`` (a :func:`roll_view`) bounded for the event stream, whatever the size of the roll.

    A roll with more than :data:`EVENT_DICE` dice (or a throw with more faces, or more than
    :data:`EVENT_THROWS` throws) is cut, and gets ``"truncated": true``, ``dice_count`` (how
    many dice it has) and ``kinds`` (how many of each kind); ``url`` always names the full
    document. Texts are cut at :data:`EVENT_TEXT` characters.
    """
    out = dict(view)
    out["url"] = f"/api/rolls/{view['id']}"
    truncated = False
    dice = view.get("dice")
    if isinstance(dice, list) and len(dice) > EVENT_DICE:
        kinds: dict[str, int] = {}
        for d in dice:
            kind = str(d.get("kind"))
            kinds[kind] = kinds.get(kind, 0) + 1
        out.update(dice=dice[:EVENT_DICE], dice_count=len(dice), kinds=kinds)
        truncated = True
    throws = view.get("throws")
    if isinstance(throws, list):
        kept = []
        for t in throws[:EVENT_THROWS]:
            t = {**t, **event_faces(t.get("faces"))}
            truncated = truncated or "faces_count" in t
            kept.append(t)
        if len(throws) > EVENT_THROWS:
            out["throws_count"] = len(throws)
            truncated = True
        out["throws"] = kept
    for key in ("text", "error", "label", "title", "sum", "notation"):
        if isinstance(out.get(key), str) and len(out[key]) > EVENT_TEXT:
            out[key] = _clip(out[key])
            truncated = True
    out["truncated"] = truncated
    return out
