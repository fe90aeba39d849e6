"""What travels over MQTT: roll events, status messages and roll requests, each bounded.

A roll event carries the roll's log row exactly as the tower's chain hashed it (every chained
column, JSON columns as their stored text), its hash, and the log's notes written since the
previous row (a prune, say), so a hub recomputes every hash and follows every link from the
previous roll to this one without trusting the tower's word for it (:func:`check_event`).
``seq`` is the roll's id in the tower's log; ``prev_seq`` is the id of the row before it, so a
hub sees a missing roll as a gap even where ids skip.

Pure functions only: no client library, no files.
"""

from __future__ import annotations

import base64
import json
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ..rolllog.chain import CHAINED_COLUMNS, NOTE_COLUMNS, correction_entry, decode_row, note_hash, row_hash

__all__ = [
    "EVENT_VERSION",
    "MAX_EVENT_BYTES",
    "MAX_NOTES",
    "MAX_REQUEST_BYTES",
    "MAX_SEQ",
    "SIGNATURE_ROOM",
    "STATES",
    "LinkCheck",
    "WireError",
    "check_event",
    "decode_json",
    "encode",
    "event_view",
    "roll_event",
    "status_message",
]

EVENT_VERSION = 1
#: the largest roll event a tower publishes or a hub accepts
MAX_EVENT_BYTES = 256 * 1024
#: room left in an event for the tower's key and signature (:mod:`.signing` adds about 150 bytes)
SIGNATURE_ROOM = 512
#: the largest request, resend or status message either side accepts
MAX_REQUEST_BYTES = 16 * 1024
#: notes carried with one roll event; more (a very large prune) are sent as a count only
MAX_NOTES = 64
#: the largest sequence number either side takes (SQLite's integers stop at 2**63 - 1)
MAX_SEQ = 2**62
#: a tower's states on its status topic; ``offline`` is the last will the broker publishes
STATES = ("online", "idle", "rolling", "needs-attention", "offline")


class WireError(ValueError):
    """A message that is not what its topic carries (too large, not JSON, a missing field)."""


def encode(message: dict[str, Any]) -> bytes:
    return json.dumps(message, separators=(",", ":"), ensure_ascii=False).encode()


def decode_json(payload: bytes, limit: int) -> dict[str, Any]:
    """A JSON object of at most ``limit`` bytes, or :class:`WireError`."""
    if len(payload) > limit:
        raise WireError(f"message of {len(payload)} bytes; at most {limit}")
    try:
        value = json.loads(payload)
    except (ValueError, UnicodeDecodeError) as exc:
        raise WireError(f"not JSON: {str(exc)[:120]}") from None
    except RecursionError:  # json's C parser stops a deep nesting with this, not a ValueError
        raise WireError("not JSON a hub reads: nested too deeply") from None
    if not isinstance(value, dict):
        raise WireError("not a JSON object")
    return value


def roll_event(
    tower: str,
    row: dict[str, Any],
    prev_seq: int,
    notes: Sequence[dict[str, Any]],
    *,
    photo_url: str = "",
    crops: dict[int, bytes] | None = None,
    inline_max_bytes: int = 0,
    note_count: int | None = None,
) -> dict[str, Any]:
    """The event for one stored row (its columns as stored, ``hash`` beside them).

    ``notes`` are the chain's notes between ``prev_seq``'s row and this one. ``crops`` (slot to
    JPEG) go inline while their total stays under ``inline_max_bytes``; the rest are named only.
    The event stays under :data:`MAX_EVENT_BYTES`, with :data:`SIGNATURE_ROOM` to spare: past it
    the notes go first, then the crops.
    """
    event: dict[str, Any] = {
        "v": EVENT_VERSION,
        "tower": tower,
        "seq": int(row["id"]),
        "prev_seq": int(prev_seq),
        "row": {c: row.get(c) for c in CHAINED_COLUMNS},
        "hash": row["hash"],
        "published_at": time.time(),
    }
    count = len(notes) if note_count is None else max(note_count, len(notes))
    if count > MAX_NOTES:
        event["notes_elided"] = count
    else:
        event["notes"] = [{c: n.get(c) for c in (*NOTE_COLUMNS, "hash")} for n in notes]
    if photo_url:
        event["photo_url"] = photo_url.rstrip("/")
    if crops:
        inline: dict[str, str] = {}
        used = 0
        for slot, jpeg in sorted(crops.items()):
            if used + len(jpeg) > inline_max_bytes:
                break
            inline[str(slot)] = base64.b64encode(jpeg).decode("ascii")
            used += len(jpeg)
        if inline:
            event["crops"] = inline
    limit = MAX_EVENT_BYTES - SIGNATURE_ROOM
    if len(encode(event)) > limit and "notes" in event:
        event["notes_elided"] = len(event.pop("notes"))
    if len(encode(event)) > limit:
        event.pop("crops", None)
    if len(encode(event)) > limit:
        raise WireError(f"roll {row['id']}'s row alone is over {limit} bytes")
    return event


def status_message(tower: str, state: str, *, last_seq: int, detail: str = "") -> dict[str, Any]:
    if state not in STATES:
        raise ValueError(f"state must be one of {', '.join(STATES)}")
    return {
        "v": EVENT_VERSION,
        "tower": tower,
        "state": state,
        "last_seq": last_seq,
        "detail": detail[:200],
        "at": time.time(),
    }


@dataclass(frozen=True)
class LinkCheck:
    """What :func:`check_event` found: ``ok``, or ``problem`` says what is wrong; ``linked``
    is False where the link to the previous roll could not be followed (notes too many to send)."""

    ok: bool
    problem: str = ""
    linked: bool = True


def check_event(event: dict[str, Any], last_hash: str | None) -> LinkCheck:
    """Recompute the row's and each note's hash, and follow the links from ``last_hash`` (the
    previous roll's hash as the hub holds it; None: this roll starts what the hub checks)."""
    row = event.get("row")
    if not isinstance(row, dict) or set(row) != set(CHAINED_COLUMNS):
        return LinkCheck(False, "the event's row does not carry the chained columns")
    if row.get("id") != event.get("seq"):
        return LinkCheck(False, f"the row's id {row.get('id')!r} is not the event's seq {event.get('seq')!r}")
    digest = row_hash(row)
    if digest != event.get("hash"):
        return LinkCheck(False, f"roll {event.get('seq')}: its hash does not match its content (tampered)")
    if "notes_elided" in event:
        return LinkCheck(True, f"{event['notes_elided']} notes not sent: link not followed", linked=False)
    link = last_hash
    for note in event.get("notes") or []:
        if not isinstance(note, dict):
            return LinkCheck(False, "a note is not an object")
        if note_hash(note) != note.get("hash"):
            return LinkCheck(
                False, f"note {note.get('seq')!r} before roll {event['seq']}: hash does not match"
            )
        if link is not None and note.get("prev_hash") != link:
            return LinkCheck(False, f"note {note.get('seq')!r} before roll {event['seq']} does not link")
        link = note["hash"]
    if link is not None and row.get("prev_hash") != link:
        return LinkCheck(False, f"roll {event['seq']} does not link to the roll before it")
    return LinkCheck(True)


def event_view(event: dict[str, Any], corrections: Sequence[dict[str, Any]] = ()) -> dict[str, Any]:
    """The roll as the tower's API shows it, labelled with its tower, for the hub's pages;
    ``corrections`` are the ``correct`` notes the hub holds for it (the roll as corrected)."""
    from ..rolls.views import roll_view

    row = decode_row({**event["row"], "hash": event["hash"]})
    row["corrections"] = [c for c in map(correction_entry, corrections) if c is not None]
    view = roll_view(row)
    view["tower"] = event["tower"]
    view["seq"] = event["seq"]
    base = event.get("photo_url")
    crops = event.get("crops") or {}
    for d in view.get("dice") or []:
        slot = str(d.get("slot"))
        if slot in crops:
            d["crop_url"] = f"data:image/jpeg;base64,{crops[slot]}"
        elif d.get("crop_url"):
            d["crop_url"] = f"{base}{d['crop_url']}" if base else None
    for t in view.get("throws") or []:
        if t.get("photo_url"):
            t["photo_url"] = f"{base}{t['photo_url']}" if base else None
    return view
