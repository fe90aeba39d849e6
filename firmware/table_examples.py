"""The tower learns from the table: the log's photos with the faces the table settled on, labelled.

Why: the only accuracy figures for real dice come from other people's photos; the table sees the
tower's own dice under its own camera and light. Every die the table typed (``[roll] unreadable =
"ask"``) or corrected is a labelled example of exactly what the reader got wrong, and a roll nobody
corrected within its window was confirmed by the people who saw it. :func:`write_examples` writes
them in the manifest format (``docs/vision.md``) that ``dicetower teach fit`` and ``dicetower
eval`` read: each throw photo the log still serves (its hash checked), each die with its kind,
box, colour and final face, and the die's crop. ``table.jsonl`` beside the manifest lists, per
photo, which dice the table gave (``typed``, ``corrected``) and which it confirmed.

The log is only read (:class:`~.rolllog.LogReader`); nothing here changes it.
"""

from __future__ import annotations

import json
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..vision.manifest import LabelledDie, write_manifest_line
from .rolllog import LogReader

__all__ = ["ExampleCounts", "write_examples"]


@dataclass
class ExampleCounts:
    """What :func:`write_examples` wrote: photos, and dice by how the table knew their faces."""

    photos: int = 0
    typed: int = 0
    corrected: int = 0
    confirmed: int = 0
    skipped: int = 0  #: dice without a photo (the RNG's, or pruned) or a box

    def to_json(self) -> dict[str, int]:
        return dict(self.__dict__)


def write_examples(log: LogReader, out: Path, *, confirmed: bool = False) -> ExampleCounts:
    """Write the labelled folder ``out`` from ``log``: the rolls the table typed or corrected a die of,
    and with ``confirmed`` every other finished tower roll too. ``out`` must not hold a manifest."""
    out = Path(out)
    if (out / "manifest.jsonl").exists():
        raise FileExistsError(f"{out} already holds a manifest.jsonl: give a new folder")
    (out / "images").mkdir(parents=True, exist_ok=True)
    (out / "crops").mkdir(exist_ok=True)
    counts = ExampleCounts()
    with (
        (out / "manifest.jsonl").open("w", encoding="utf-8") as manifest,
        (out / "table.jsonl").open("w", encoding="utf-8") as side,
    ):
        for row in log.iter_rows(status="done"):
            final = {int(c["slot"]): int(c["new"]) for c in row.get("corrections") or ()}
            dice = [d for d in row.get("dice") or () if isinstance(d, dict)]
            told = bool(final) or any(d.get("by_table") for d in dice)
            if not (told or confirmed):
                continue
            for throw in row.get("throws") or ():
                _write_throw(log, out, row, throw, dice, final, manifest, side, counts)
    return counts


def _write_throw(
    log: LogReader,
    out: Path,
    row: dict[str, Any],
    throw: dict[str, Any],
    dice: list[dict[str, Any]],
    final: dict[int, int],
    manifest: Any,
    side: Any,
    counts: ExampleCounts,
) -> None:
    rid, index = int(row["id"]), throw.get("index")
    mine = [d for d in dice if d.get("throw") == index]
    photo = log.photo_path(rid, str(throw.get("photo"))) if throw.get("photo") else None
    if photo is None or not mine:
        counts.skipped += len(mine)
        return
    image = f"images/roll-{rid:06d}-throw-{index}.jpg"
    shutil.copyfile(photo, out / image)
    labelled, how = [], []
    for d in mine:
        slot, box = int(d["slot"]), d.get("box")
        if not isinstance(box, list) or len(box) != 4:
            counts.skipped += 1
            continue
        crop = ""
        crop_path = log.photo_path(rid, str(d["crop"])) if d.get("crop") else None
        if crop_path is not None:
            crop = f"crops/roll-{rid:06d}-die-{slot}.jpg"
            shutil.copyfile(crop_path, out / crop)
        face = final.get(slot, int(d["face"]))
        labelled.append(
            LabelledDie(str(d["kind"]), face, tuple(box), colour=str(d.get("colour") or ""), crop=crop)
        )
        kind = "corrected" if slot in final else "typed" if d.get("by_table") else "confirmed"
        setattr(counts, kind, getattr(counts, kind) + 1)
        how.append({"slot": slot, "face": face, "how": kind, "read": d["face"] if slot in final else None})
    if labelled:
        write_manifest_line(manifest, image, labelled)
        side.write(json.dumps({"image": image, "roll": rid, "dice": how}) + "\n")
        counts.photos += 1
