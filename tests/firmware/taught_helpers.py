"""Helpers for the taught-reader tests: a small taught model fitted on simulated throws of two white d6."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

import cv2
from dicetower.firmware.cameras.sim import SimCamera
from dicetower.firmware.clock import VirtualClock
from dicetower.firmware.config import TrayDie
from dicetower.vision.manifest import write_manifest_line
from dicetower.vision.taught.card import seal_card

__all__ = ["TRAY", "edit_card", "fit_small_model", "write_card", "write_teach_folder"]

#: The dice the small model is taught on, as a config names them.
TRAY = 'plain = "2 white d6"'


def write_teach_folder(folder: Path, rolls: int, seed: int = 1) -> None:
    """``rolls`` simulated throws of two white d6, labelled with the camera's truth (face, box, colour)."""
    sim = SimCamera([TrayDie("d6", "white")] * 2, seed=seed, clock=VirtualClock())
    (folder / "images").mkdir(parents=True)
    with sim.empty_tray():
        cv2.imwrite(str(folder / "images" / "empty.png"), sim.read_frame())
    with open(folder / "manifest.jsonl", "w", encoding="utf-8") as fh:
        for n in range(1, rolls + 1):
            sim.throw()
            for _ in range(8):  # past the frames the dice move in
                frame = sim.read_frame()
            name = f"images/roll-{n:05d}.jpg"
            cv2.imwrite(str(folder / name), frame)
            dice = [replace(label, colour=die.colour) for die, label in sim.truth_dice]
            write_manifest_line(fh, name, dice, reference="images/empty.png")


def fit_small_model(root: Path, rolls: int = 60) -> Path:
    """A taught model of the white d6 in ``root/model``: few rolls, so its limits are relaxed.

    The fit runs in its own interpreter with one BLAS thread: OpenBLAS's threads spinning against
    other busy processes on a small machine make it several times slower (5 s against 25 s here).
    """
    write_teach_folder(root / "teach", rolls)
    code = (
        "import sys\nfrom dicetower.vision.taught.fit import FitOptions, fit_model\n"
        "fit_model(sys.argv[1], sys.argv[2], FitOptions(min_per_face=3, max_wrong=1.0))"
    )
    env = {**os.environ, "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1"}
    argv = [sys.executable, "-c", code, str(root / "teach"), str(root / "model")]
    subprocess.run(argv, env=env, check=True, timeout=600)
    return root / "model"


def edit_card(model: Path, out: Path, *, seal: bool = True, **die: Any) -> Path:
    """A copy of ``model`` in ``out`` whose taught die has ``die``'s fields changed (kind, threshold ...).

    ``seal`` writes the card's hashes again, as whoever rewrites a card can (docs/teach.md): the
    value checks must hold without them. ``seal=False`` leaves the old hashes, as a plain edit does.
    """
    shutil.copytree(model, out)
    card = json.loads((out / "taught.json").read_text(encoding="utf-8"))
    card["dice"][0].update(die)
    write_card(out, card, seal=seal)
    return out


def write_card(model: Path, card: dict[str, Any], *, seal: bool = True) -> None:
    """Write ``card`` as ``model``'s card, its hashes made anew over ``model``'s files when ``seal``."""
    text = json.dumps(seal_card(card, model) if seal else card)
    (model / "taught.json").write_text(text, encoding="utf-8")
