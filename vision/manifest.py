"""The project's format for labelled / recorded photos: ``manifest.jsonl``.

Same format as ``../shared/datasets/*/manifest.jsonl`` (see its README): one JSON object a
line, ``{"image": "images/x.jpg", "dice": [{"die": "d6", "face": 5, "box": [x, y, w, h]}]}``;
``box`` absent means the whole photo is one die. The tower writes its recorded rolls in this
format, the replay camera plays it, and ``dicetower eval`` reads it.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
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

    def to_json(self) -> dict[str, Any]:
        d: dict[str, Any] = {"die": self.die, "face": self.face}
        if self.box is not None:
            d["box"] = [round(float(v), 1) for v in self.box]
        return d


@dataclass(frozen=True)
class ManifestEntry:
    image: Path  #: absolute path of the photo
    dice: tuple[LabelledDie, ...]
    line: int  #: 1-based line in the manifest, for error messages


def _parse_line(folder: Path, raw: str, lineno: int, source: Path) -> ManifestEntry:
    try:
        obj = json.loads(raw)
        image = obj["image"]
        dice = []
        for d in obj.get("dice", []):
            box = d.get("box")
            if box is not None:
                if len(box) != 4:
                    raise ValueError("box must be [x, y, width, height]")
                box = tuple(float(v) for v in box)
            dice.append(LabelledDie(str(d["die"]), int(d["face"]), box))
    except (ValueError, KeyError, TypeError) as exc:
        raise ManifestError(f"{source}:{lineno}: bad manifest line: {exc}") from None
    return ManifestEntry((folder / image).resolve(), tuple(dice), lineno)


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


def write_manifest_line(fh: Any, image: str, dice: list[LabelledDie]) -> None:
    """Append one entry; ``image`` is relative to the manifest's folder."""
    fh.write(json.dumps({"image": image, "dice": [d.to_json() for d in dice]}) + "\n")
