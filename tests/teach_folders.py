"""A small teach folder for the naming tests: two dice, drawn numerals as crops, one mixed group, one misfit.

The white d6's group 1 holds a misfit (crop 6 shows 2 among three 5s); the blue d20's group 1
is mixed (two 4s, two 9s). Every crop is a real PNG with its face drawn on it, so a screenshot
shows what a person would see.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import cv2
import numpy as np

__all__ = ["DICE", "TeachFolder", "draw_crop", "write_teach_folder"]

#: id -> (slug, kind, colour, BGR body, the face each crop shows, the grouping's groups)
DICE: dict[str, tuple[str, str, str, tuple[int, int, int], list[int], list[list[int]]]] = {
    "white d6": (
        "white-d6",
        "d6",
        "white",
        (235, 235, 235),
        [3, 3, 3, 5, 5, 5, 2, 1, 1, 6],
        [[0, 1, 2], [3, 4, 5, 6], [7, 8], [9]],
    ),
    "blue d20": (
        "blue-d20",
        "d20",
        "blue",
        (180, 90, 30),
        [17, 17, 17, 4, 4, 9, 9, 12, 12, 20],
        [[0, 1, 2], [3, 4, 5, 6], [7, 8], [9]],
    ),
}


@dataclass(frozen=True)
class TeachFolder:
    path: Path
    #: die id -> the face each of its crops shows, by crop index
    truth: dict[str, list[int]]

    @property
    def rolls(self) -> int:
        return len(next(iter(self.truth.values())))


def draw_crop(face: int, body: tuple[int, int, int], size: int = 72) -> np.ndarray:
    """A die's top face: its body colour with the numeral drawn in the middle."""
    img = np.full((size, size, 3), body, np.uint8)
    ink = (20, 20, 20) if sum(body) > 400 else (245, 245, 245)
    text = str(face)
    scale = 1.1 if len(text) == 1 else 0.95
    (w, h), _ = cv2.getTextSize(text, cv2.FONT_HERSHEY_SIMPLEX, scale, 2)
    cv2.putText(img, text, ((size - w) // 2, (size + h) // 2), cv2.FONT_HERSHEY_SIMPLEX, scale, ink, 2)
    return img


def write_teach_folder(root: Path) -> TeachFolder:
    """A teach folder as ``teach collect`` and ``teach group`` leave it: no face named yet."""
    (root / "images").mkdir(parents=True)
    cv2.imwrite(str(root / "images" / "empty.png"), np.full((80, 160, 3), 90, np.uint8))
    rolls = len(next(iter(DICE.values()))[4])
    lines = []
    for r in range(rolls):
        photo = np.full((80, 160, 3), 90, np.uint8)
        dice = []
        for k, (slug, kind, colour, body, faces, _groups) in enumerate(DICE.values()):
            crop = draw_crop(faces[r], body, 60)
            photo[10:70, 10 + 80 * k : 70 + 80 * k] = crop
            (root / "crops" / slug).mkdir(parents=True, exist_ok=True)
            cv2.imwrite(str(root / "crops" / slug / f"{r + 1:05d}.png"), draw_crop(faces[r], body))
            box = [10.0 + 80 * k, 10.0, 60.0, 60.0]
            dice.append({"die": kind, "box": box, "colour": colour, "crop": f"crops/{slug}/{r + 1:05d}.png"})
        cv2.imwrite(str(root / "images" / f"roll-{r + 1:05d}.jpg"), photo)
        lines.append({"image": f"images/roll-{r + 1:05d}.jpg", "reference": "images/empty.png", "dice": dice})
    (root / "manifest.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines))
    teach = {
        "schema": "dicetower.teach/1",
        "dice": [
            {
                "id": die_id,
                "slug": slug,
                "kind": kind,
                "colour": colour,
                "faces": list(range(1, 7) if kind == "d6" else range(1, 21)),
                "crops": [
                    {"crop": f"crops/{slug}/{r + 1:05d}.png", "line": r + 1, "index": k} for r in range(rolls)
                ],
                "groups": groups,
                "names": {},
                "loose": [],
            }
            for k, (die_id, (slug, kind, colour, _body, _faces, groups)) in enumerate(DICE.items())
        ],
    }
    (root / "teach.json").write_text(json.dumps(teach, indent=1))
    return TeachFolder(root, {die_id: list(spec[4]) for die_id, spec in DICE.items()})
