"""A teach folder built from drawn dice: what the teach-folder tests group, convert and carry on."""

from __future__ import annotations

from pathlib import Path

import cv2
import numpy as np
from dicetower.vision.taught.folder import NewDie, TeachFolder, crop_png
from drawn_dice import draw_die

__all__ = ["drawn_throw", "write_drawn_folder"]


def drawn_throw(face: int, angle: float, colour: str = "white") -> tuple[bytes, NewDie]:
    """A photo (JPEG) of one drawn d6 and the die as a teach folder keeps it."""
    frame, box = draw_die(face, angle)
    ok, jpeg = cv2.imencode(".jpg", frame)
    assert ok
    return jpeg.tobytes(), NewDie("d6", colour, tuple(float(v) for v in box), crop_png(frame, box))


def write_drawn_folder(root: Path, faces: list[int]) -> TeachFolder:
    """A teach folder of one white d6, one throw per face in ``faces`` (turned a little each time)."""
    folder = TeachFolder.open(root, [("d6", "white")])
    folder.use_reference(np.full((160, 160, 3), 120, np.uint8))
    for n, face in enumerate(faces):
        photo, die = drawn_throw(face, 17.0 * n)
        folder.add(photo, [die], truth=[face], hints=[None])
    return folder
