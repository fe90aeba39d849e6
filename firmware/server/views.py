"""Log rows as the API shows them, and die crops cut from a throw's photo.

Photo and crop URLs name the roll by id and the photo by its index or slot
(``/api/rolls/7/photos/0.jpg``, ``/api/rolls/7/dice/3.jpg``); the server looks the file up
in the log, so no URL ever carries a path.
"""

from __future__ import annotations

from typing import Any

__all__ = ["crop_jpegs", "roll_summary", "roll_view"]

#: extra margin around a die's box in a crop, as a share of the box's larger side
CROP_MARGIN = 0.18


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


def crop_jpegs(jpeg: bytes, boxes: list[list[float]]) -> list[bytes | None]:
    """One JPEG per ``[x, y, w, h]`` box, with a margin, clipped to the photo."""
    import cv2
    import numpy as np

    image = cv2.imdecode(np.frombuffer(jpeg, np.uint8), cv2.IMREAD_COLOR)
    out: list[bytes | None] = []
    if image is None:
        return [None] * len(boxes)
    h_img, w_img = image.shape[:2]
    for box in boxes:
        try:
            x, y, w, h = (float(v) for v in box)
        except (TypeError, ValueError):
            out.append(None)
            continue
        side = max(w, h) * (1 + 2 * CROP_MARGIN)
        cx, cy = x + w / 2, y + h / 2
        x0, y0 = max(0, int(cx - side / 2)), max(0, int(cy - side / 2))
        x1, y1 = min(w_img, int(cx + side / 2)), min(h_img, int(cy + side / 2))
        if x1 - x0 < 2 or y1 - y0 < 2:
            out.append(None)
            continue
        ok, buf = cv2.imencode(".jpg", image[y0:y1, x0:x1], [cv2.IMWRITE_JPEG_QUALITY, 88])
        out.append(buf.tobytes() if ok else None)
    return out
