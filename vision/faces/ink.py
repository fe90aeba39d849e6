"""One grey channel that keeps a die's numerals apart from its body, whatever their colours."""

from __future__ import annotations

import numpy as np

__all__ = ["ink_grey"]


def ink_grey(bgr: np.ndarray, sample: np.ndarray | None = None) -> np.ndarray:
    """``bgr`` as one grey channel along the colour axis that varies most in ``sample`` (default: itself).

    Why not luminance: white numerals on an orange or yellow die, or gold on blue, are close in
    lightness and far apart in colour; the main axis of a die face's colours runs from body to
    ink. The axis is turned so that lighter stays lighter.
    """
    px = (bgr if sample is None else sample).reshape(-1, 3).astype(np.float32)
    mean = px.mean(axis=0)
    cov = np.cov((px - mean).T) if len(px) > 1 else np.eye(3)
    _vals, vecs = np.linalg.eigh(cov)
    axis = vecs[:, -1] if vecs[:, -1].sum() >= 0 else -vecs[:, -1]
    proj = (bgr.reshape(-1, 3).astype(np.float32) - mean) @ axis.astype(np.float32)
    spread = float(proj.std()) + 1.0 if sample is None else float(np.sqrt(max(_vals[-1], 0.0))) + 1.0
    grey = np.clip(128.0 + 42.0 * proj / spread, 0, 255).astype(np.uint8)
    return grey.reshape(bgr.shape[:2])
