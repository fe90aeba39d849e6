"""The names a die's body colour may have: what a config, a manifest and the reader call colours.

Apart from :mod:`.colour`, which names a die's colour from its pixels with OpenCV, so that a
config's ``[dice]`` names are checked without loading OpenCV.
"""

from __future__ import annotations

__all__ = ["COLOUR_NAMES"]

COLOUR_NAMES = (
    "red",
    "orange",
    "yellow",
    "green",
    "blue",
    "purple",
    "pink",
    "white",
    "grey",
    "black",
    "translucent",
)
