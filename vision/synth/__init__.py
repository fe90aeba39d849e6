"""Synthetic tray photos of d6 with labels (see :mod:`.render`); never evidence of accuracy."""

from .dataset import MAX_SCENES, write_dataset
from .render import BODY_COLOURS, MARBLED_COLOURS, PIP_LAYOUT, SceneStyle, SynthError, draw_face, render_scene

__all__ = [
    "BODY_COLOURS",
    "MARBLED_COLOURS",
    "MAX_SCENES",
    "PIP_LAYOUT",
    "SceneStyle",
    "SynthError",
    "draw_face",
    "render_scene",
    "write_dataset",
]
