"""A teach folder built from drawn dice: what the teach-folder tests group, convert and carry on."""

from __future__ import annotations

import zlib
from pathlib import Path

import cv2
import numpy as np
from dicetower.vision.kinds import KINDS
from dicetower.vision.manifest import LabelledDie, write_manifest_line
from dicetower.vision.synth.die3d import DieLook
from dicetower.vision.synth.numerals import NumeralStyle, TrayDie, random_look, render_tray
from dicetower.vision.synth.solids import face_values
from dicetower.vision.taught.folder import NewDie, TeachFolder, crop_png
from drawn_dice import draw_die

__all__ = ["TOWER", "drawn_throw", "sim_folder", "write_drawn_folder"]

#: The simulated tower's light and tray: fixed, as one tower's are.
TOWER = NumeralStyle(
    tray=(118, 118, 118), blur=0.0, noise=0.0, perspective=0.0, light=0.0, grain=0.0, tilt=10.0
)


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


def sim_folder(
    folder: Path, rolls: int, seed: int, dice: list[tuple[str, str]], *, boxes: bool = True
) -> Path:
    """Rolls of fixed physical dice (each its own look, layout and size), labelled with the truth
    (``boxes=False``: the labels give kind and face only, as a photo set labelled by hand may)."""
    rng = np.random.default_rng(seed)
    phys: list[tuple[DieLook, tuple[int, ...]]] = []
    for kind, colour in dice:
        look = random_look(np.random.default_rng(zlib.crc32(f"{kind} {colour}".encode())), colour, "solid")
        phys.append((look, tuple(int(v) for v in face_values(kind, np.random.default_rng(len(phys))))))
    (folder / "images").mkdir(parents=True)
    with open(folder / "manifest.jsonl", "w", encoding="utf-8") as fh:
        for n in range(rolls):
            drawn = []
            for (kind, colour), (look, values) in zip(dice, phys, strict=True):
                faces = KINDS[kind].faces
                face = faces[(7 * n + int(rng.integers(3))) % len(faces)]  # every face, in no fixed order
                drawn.append(TrayDie(kind, face, colour, "solid", False, look, values, 70.0))
            frame, _ref, labels = render_tray(seed * 10_000 + n, drawn, (480, 360), style=TOWER)
            name = f"images/roll-{n:05d}.png"
            cv2.imwrite(str(folder / name), frame)
            named = [
                LabelledDie(d.die, d.face, d.box if boxes else None, colour=c)
                for d, (_k, c) in zip(labels, dice, strict=True)
            ]
            write_manifest_line(fh, name, named)
    return folder
