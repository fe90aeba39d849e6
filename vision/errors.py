"""The base of every error the vision package raises, so a caller catches :class:`VisionError` once.

Each subclass lives beside the code that raises it (``ManifestError`` in
:mod:`~dicetower.vision.manifest`, ``ImageError`` in :mod:`~dicetower.vision.imageio` ...) and
also subclasses the built-in error it is a kind of (``ValueError`` for bad input,
``RuntimeError`` for a model that does not load), so ``except ValueError`` still catches bad
input.
"""

from __future__ import annotations

__all__ = ["VisionError"]


class VisionError(Exception):
    """Base of every error raised by :mod:`dicetower.vision`."""
