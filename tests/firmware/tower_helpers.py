"""Helpers shared by the tower tests: a seeded sim config, a recorded folder, a small video file."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import cv2
import numpy as np
from dicetower.firmware.cameras.sim import SimCamera
from dicetower.firmware.clock import VirtualClock
from dicetower.firmware.config import DEFAULT_CONFIG, Config
from dicetower.vision.manifest import LabelledDie, write_manifest_line

__all__ = ["sim_config", "write_replay_folder", "write_video"]


def sim_config(seed: int = 1, **sections: Any) -> Config:
    """The built-in config, its simulated tray seeded; ``sim=``, ``cycle=`` ... dicts change sections."""
    cfg = DEFAULT_CONFIG
    changes: dict[str, Any] = {"sim": replace(cfg.sim, seed=seed, **sections.pop("sim", {}))}
    for name, values in sections.items():
        changes[name] = replace(getattr(cfg, name), **values) if isinstance(values, dict) else values
    return cfg.with_changes(**changes)


def write_replay_folder(folder: Path, n: int = 3, seed: int = 4) -> list[tuple[LabelledDie, ...]]:
    """A manifest folder of ``n`` simulated photos (and the empty tray), as ``dicetower record`` writes."""
    sim = SimCamera(seed=seed, clock=VirtualClock())
    (folder / "images").mkdir(parents=True)
    with sim.empty_tray():
        cv2.imwrite(str(folder / "images" / "empty.png"), sim.read_frame())
    truths = []
    with open(folder / "manifest.jsonl", "w") as fh:
        for i in range(n):
            sim.throw()
            for _ in range(8):
                frame = sim.read_frame()
            cv2.imwrite(str(folder / "images" / f"{i}.png"), frame)
            write_manifest_line(fh, f"images/{i}.png", list(sim.truth), reference="images/empty.png")
            truths.append(sim.truth)
    return truths


def write_video(path: Path, frames: int = 5) -> None:
    out = cv2.VideoWriter(str(path), cv2.VideoWriter_fourcc(*"MJPG"), 10, (160, 120))
    for i in range(frames):
        out.write(np.full((120, 160, 3), 40 + (20 * i) % 200, np.uint8))
    out.release()
