"""Model files (ONNX + metadata json) shipped with the package; loaded with importlib.resources."""

from __future__ import annotations

from importlib import resources
from pathlib import Path

__all__ = ["shipped_dir"]


def shipped_dir() -> Path:
    """The folder of the shipped model files, wherever the package is installed."""
    return Path(str(resources.files(__name__)))
