"""Log rows as the API shows them.

Photo and crop URLs name the roll by id and the photo by its index or slot
(``/api/rolls/7/photos/0.jpg``, ``/api/rolls/7/dice/3.jpg``); the server looks the file up
in the log, so no URL ever carries a path.
"""

from __future__ import annotations

from typing import Any

__all__ = ["roll_summary", "roll_view"]


def roll_view(row: dict[str, Any]) -> dict[str, Any]:
    """The ``GET /api/rolls/{id}`` document for a finished or pending row."""
    rid = row["id"]
    request = row.get("request") or {}
    view: dict[str, Any] = {
        "id": rid,
        "status": row["status"],
        "roller": row.get("roller"),
        "created_at": row.get("created_at"),
        "kind": row.get("kind"),
        "notation": request.get("notation"),
        "system": request.get("system"),
        "check": request.get("check"),
        "params": request.get("params"),
        "label": request.get("notation") or f"{request.get('system')} {request.get('check')}",
    }
    if row["status"] in ("queued", "rolling"):
        return view
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
                }
                for t in throws
            ],
            "timings": row.get("timings"),
            "error": row.get("error"),
            "hash": row.get("hash"),
        }
    )
    return view


def roll_summary(view: dict[str, Any]) -> dict[str, Any]:
    """The short form ``GET /api/rolls`` lists (no per-throw details)."""
    keys = (
        "id",
        "status",
        "roller",
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
    )
    out = {k: view.get(k) for k in keys}
    out["faces"] = [d.get("face") for d in view.get("dice") or []]
    return out
