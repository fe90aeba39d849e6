"""Write a folder of rendered scenes in the manifest format, ready for ``dicetower eval``."""

from __future__ import annotations

from pathlib import Path

import cv2
import numpy as np

from ..manifest import write_manifest_line
from .render import SceneStyle, SynthError, render_scene

__all__ = ["MAX_SCENES", "write_dataset"]

#: A synthetic folder holds at most this many scenes (bounds disk use: ~0.5 MB a scene).
MAX_SCENES = 20_000


def write_dataset(
    out_dir: str | Path,
    n: int,
    seed: int,
    *,
    size: tuple[int, int] = (640, 640),
    max_dice: int = 8,
    cocked_share: float = 0.1,
    touching_share: float = 0.15,
    style: SceneStyle | None = None,
) -> Path:
    """Render ``n`` scenes into ``out_dir`` and return the path of its ``manifest.jsonl``.

    Scene ``i`` is ``render_scene(seed * 1_000_003 + i, ...)`` so any one scene can be
    re-rendered alone. Each photo has its empty-tray reference (``images/empty_NNNN.png``,
    the manifest's ``reference``); about ``cocked_share`` of the scenes have a cocked die
    and ``touching_share`` two dice flush against each other. PNG, so no JPEG artefacts
    beyond what the renderer draws.
    """
    if not 0 <= n <= MAX_SCENES:
        raise SynthError(f"n must be 0..{MAX_SCENES}, got {n}")
    if not 1 <= max_dice <= 60:
        raise SynthError(f"max_dice must be 1..60, got {max_dice}")
    out = Path(out_dir)
    (out / "images").mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(seed)
    manifest = out / "manifest.jsonl"
    with manifest.open("w", encoding="utf-8") as fh:
        for i in range(n):
            n_dice = int(rng.integers(1, max_dice + 1))
            cocked = 1 if rng.random() < cocked_share else 0
            touching = n_dice >= 2 and rng.random() < touching_share
            frame, reference, labels = render_scene(
                seed * 1_000_003 + i, n_dice, size, style=style, cocked=cocked, touching=touching
            )
            image, empty = f"images/scene_{i:04d}.png", f"images/empty_{i:04d}.png"
            cv2.imwrite(str(out / image), frame)
            cv2.imwrite(str(out / empty), reference)
            write_manifest_line(fh, image, labels, reference=empty)
    return manifest
