"""The project's format for labelled / recorded photos: ``manifest.jsonl``.

Same format as ``../shared/datasets/*/manifest.jsonl`` (see its README): one JSON object a
line, ``{"image": "images/x.jpg", "dice": [{"die": "d6", "face": 5, "box": [x, y, w, h]}]}``;
``box`` absent means the whole photo is one die. The tower writes its recorded rolls in this
format, the replay camera plays it, and ``dicetower eval`` reads it.

Optional extensions (ignored by readers that do not know them, never written when unset):

* per die, ``"cocked": true``: the die leans (on a wall or another die) and no face is up.
  ``face`` is then the face most toward the camera, for information; the right answer for
  a reader is "unreadable" and ``dicetower eval`` scores it that way;
* per line, ``"reference": "images/empty_1.png"``: a photo of the empty tray under the same
  light, handed to the reader as its ``reference``.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = ["LabelledDie", "ManifestEntry", "ManifestError", "read_manifest", "write_manifest_line"]

#: A manifest larger than this many lines is refused (bounds memory and eval time).
MAX_ENTRIES = 1_000_000


class ManifestError(ValueError):
    """A manifest line that cannot be used; names the file and line."""


@dataclass(frozen=True)
class LabelledDie:
    die: str
    face: int
    box: tuple[float, float, float, float] | None = None  #: None: the whole photo is this die
    cocked: bool = False  #: no face is up; the right reading is "unreadable"

    def to_json(self) -> dict[str, Any]:
        d: dict[str, Any] = {"die": self.die, "face": self.face}
        if self.box is not None:
            d["box"] = [round(float(v), 1) for v in self.box]
        if self.cocked:
            d["cocked"] = True
        return d


@dataclass(frozen=True)
class ManifestEntry:
    image: Path  #: absolute path of the photo
    dice: tuple[LabelledDie, ...]
    line: int  #: 1-based line in the manifest, for error messages
    relpath: str = ""  #: the ``image`` field as written (relative to the manifest's folder)
    reference: Path | None = None  #: absolute path of the empty-tray photo, if given


def _parse_line(folder: Path, raw: str, lineno: int, source: Path) -> ManifestEntry:
    try:
        obj = json.loads(raw)
        if not isinstance(obj, dict):
            raise ValueError("expected a JSON object")
        image = obj["image"]
        if not isinstance(image, str) or not image:
            raise ValueError("image must be a non-empty path")
        reference = obj.get("reference")
        if reference is not None and (not isinstance(reference, str) or not reference):
            raise ValueError("reference must be a non-empty path")
        dice = []
        for d in obj.get("dice", []):
            box = d.get("box")
            if box is not None:
                if len(box) != 4:
                    raise ValueError("box must be [x, y, width, height]")
                box = tuple(float(v) for v in box)
                if not all(math.isfinite(v) for v in box) or box[2] <= 0 or box[3] <= 0:
                    raise ValueError("box needs finite values and a positive width and height")
            face = d["face"]
            if isinstance(face, bool) or not isinstance(face, int):
                raise ValueError(f"face must be an integer, got {face!r}")
            dice.append(LabelledDie(str(d["die"]), face, box, bool(d.get("cocked", False))))
    except (ValueError, KeyError, TypeError) as exc:
        raise ManifestError(f"{source}:{lineno}: bad manifest line: {exc}") from None
    return ManifestEntry(
        (folder / image).resolve(),
        tuple(dice),
        lineno,
        relpath=image,
        reference=(folder / reference).resolve() if reference else None,
    )


def read_manifest(folder: str | Path) -> Iterator[ManifestEntry]:
    """Yield the entries of ``folder/manifest.jsonl`` in file order (blank lines skipped)."""
    folder = Path(folder)
    path = folder / "manifest.jsonl"
    if not path.is_file():
        raise ManifestError(f"{folder}: no manifest.jsonl (expected one JSON object per photo)")
    with path.open(encoding="utf-8") as fh:
        for lineno, raw in enumerate(fh, 1):
            if lineno > MAX_ENTRIES:
                raise ManifestError(f"{path}: more than {MAX_ENTRIES} lines")
            if raw.strip():
                yield _parse_line(folder, raw, lineno, path)


def write_manifest_line(
    fh: Any, image: str, dice: Sequence[LabelledDie], reference: str | None = None
) -> None:
    """Append one entry; ``image`` (and ``reference``) are relative to the manifest's folder."""
    obj: dict[str, Any] = {"image": image, "dice": [d.to_json() for d in dice]}
    if reference is not None:
        obj["reference"] = reference
    fh.write(json.dumps(obj) + "\n")
