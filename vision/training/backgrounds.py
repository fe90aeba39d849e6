"""Real backgrounds for rendered training dice: patches of the datasets' photos with no die in them.

Why: a reader trained on dice over flat synthetic trays meets wood grain, coloured card,
paper, cloth and grey trays in real photos, with their texture, light fall-off and JPEG
noise. Rendered dice pasted over real patches keep the renderer's labels and the photos'
surfaces. Patches come from the *train* split of each dataset only, away from every labelled
die (boxes grown by half; single-die photos use :mod:`.single_die_box`'s box).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

import cv2
import numpy as np

from ..eval.splits import d20_split, d20_splits, split_of

__all__ = ["BackgroundBank", "load_bank"]

#: Photos are kept at most this many px across.
_SIDE = 480
#: Tries to find a die-free square before taking a smaller one.
_TRIES = 12


@dataclass
class BackgroundBank:
    """Photos and the boxes to keep clear of; :meth:`patch` cuts a die-free square."""

    images: list[np.ndarray] = field(default_factory=list)
    keep_out: list[np.ndarray] = field(default_factory=list)  #: (n, 4) x0, y0, x1, y1 per photo

    def __len__(self) -> int:
        return len(self.images)

    def add(self, image: np.ndarray, boxes: list[tuple[float, float, float, float]]) -> None:
        h, w = image.shape[:2]
        k = min(1.0, _SIDE / max(h, w))
        if k < 1.0:
            image = cv2.resize(image, (round(w * k), round(h * k)), interpolation=cv2.INTER_AREA)
        out = []
        for x, y, bw, bh in boxes:
            cx, cy, s = (x + bw / 2) * k, (y + bh / 2) * k, max(bw, bh) * k * 0.75
            out.append((cx - s, cy - s, cx + s, cy + s))
        self.images.append(image)
        self.keep_out.append(np.array(out, np.float32).reshape(-1, 4))

    def patch(self, rng: np.random.Generator, side: int) -> np.ndarray:
        """A ``side``-px BGR square from a random photo, clear of its dice, turned and mirrored at random."""
        i = int(rng.integers(len(self.images)))
        img, boxes = self.images[i], self.keep_out[i]
        h, w = img.shape[:2]
        size = float(min(h, w)) * float(rng.uniform(0.25, 0.8))
        x = y = 0.0
        for t in range(_TRIES):
            s = size * (0.85**t)
            x, y = float(rng.uniform(0, w - s)), float(rng.uniform(0, h - s))
            clear = (
                (boxes[:, 2] < x) | (boxes[:, 0] > x + s) | (boxes[:, 3] < y) | (boxes[:, 1] > y + s)
            ).all()
            if clear:
                size = s
                break
        sq = img[round(y) : round(y + size), round(x) : round(x + size)]
        shrink = sq.shape[0] > side
        out = cv2.resize(sq, (side, side), interpolation=cv2.INTER_AREA if shrink else cv2.INTER_LINEAR)
        out = np.rot90(out, int(rng.integers(4)))
        return np.ascontiguousarray(out[:, ::-1] if rng.random() < 0.5 else out)


def _rows(folder: Path) -> list[dict]:
    return [json.loads(line) for line in (folder / "manifest.jsonl").read_text().splitlines() if line.strip()]


def load_bank(datasets: Path, *, every: int = 3, split: str = "train") -> BackgroundBank:
    """Every ``every``-th photo of each dataset's ``split`` (the datasets that exist under ``datasets``)."""
    from .single_die_box import boxes_for

    bank = BackgroundBank()
    for name in ("byler-d6", "epanemu-dice3", "matteop65-d6-wood", "rsandrini-d20", "lurig-kinds"):
        folder = datasets / name
        if not (folder / "manifest.jsonl").is_file():
            continue
        rows = _rows(folder)
        single = boxes_for(folder) if name in ("rsandrini-d20", "lurig-kinds") else {}
        splits = {}
        if name == "rsandrini-d20":
            splits = d20_splits((r["image"], r["dice"][0]["face"]) for r in rows)
        for j, r in enumerate(rows):
            if j % every:
                continue
            if name == "rsandrini-d20":
                if d20_split(splits, r["image"], int(r["dice"][0]["face"])) != split:
                    continue
            elif split_of(name, r["image"]) != split:
                continue
            image = cv2.imread(str(folder / r["image"]), cv2.IMREAD_COLOR)
            if image is None:
                continue
            boxes = []
            for d in r["dice"]:
                if "box" in d:
                    x, y, w, h = d["box"]
                    grow = 1.6 if name == "matteop65-d6-wood" else 1.0  # pip-area boxes
                    boxes.append((x - w * (grow - 1) / 2, y - h * (grow - 1) / 2, w * grow, h * grow))
                else:
                    box = single.get(r["image"])
                    if box is None:
                        break  # the die was not found: the photo cannot be trusted die-free
                    boxes.append(box)
            else:
                bank.add(image, boxes)
    return bank
