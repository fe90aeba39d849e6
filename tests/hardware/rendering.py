"""The tower's parts, rendered by ``hardware/render.py`` (the builder's command), coarse, for the tests.

Skips, saying so, where OpenSCAD is not installed (Debian package ``openscad``); the PNG views are drawn where
there is a display or ``xvfb-run`` (Debian ``xvfb``), and the tests of the views skip elsewhere.
"""

from __future__ import annotations

import os
import re
import shutil
from dataclasses import dataclass
from pathlib import Path

HARDWARE = Path(__file__).resolve().parents[2] / "hardware"
#: Facets per circle for the test renders: coarse enough to render every part in seconds, fine enough that a
#: polygon's hole is within 0.1 mm of the circle's diameter.
TEST_FN = 24


@dataclass(frozen=True)
class Rendered:
    stl: Path
    img: Path | None  #: None where no display could be had for the PNG views
    echoes: dict[str, float]  #: tower.scad's figures, by name (units dropped)
    console: str


def echoes(console: str) -> dict[str, float]:
    """``ECHO: "name: 12.5 mm"`` lines as ``{"name": 12.5}``."""
    return {name: float(value) for name, value in re.findall(r'ECHO: "([^:"]+): (-?[0-9.e+-]+)', console)}


def can_draw() -> bool:
    return bool(os.environ.get("DISPLAY")) or shutil.which("xvfb-run") is not None
