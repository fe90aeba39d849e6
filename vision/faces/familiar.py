"""Is a die like the dice the d6 reader learnt from? If not, it is ``unfamiliar``, not guessed.

Why: on a set of dice it never trained on, the face reader reads a share of the dice wrong *with
confidence*: its per-face thresholds were chosen on dice like its training dice, and a die of
another make (other pips, other colours, other light) can pass them with the wrong face. Such a
die is reported unreadable with :attr:`~dicetower.vision.reading.UnreadableReason.UNFAMILIAR`
("unfamiliar die: teach it"): the owner's remedy is to teach the tower those dice
(``dicetower teach``), whose taught reader is not subject to this check.

How (Lee et al. 2018, "A simple unified framework for detecting out-of-distribution samples"):
the reader network's pooled last-stage features (a ``features`` output beside its logits) are
compared with the per-face means of its training dice's features under one shared covariance.
A die's *distance* is its squared Mahalanobis distance to the nearest face's mean; over
:attr:`Familiarity.threshold` it is unfamiliar. The statistics (:data:`FAMILIAR_FILE`, a few
tens of KB) are fitted on the train split and the threshold on the validation split of the
sets the network trained on, by :mod:`dicetower.vision.training.d6.familiar`, which also
adds the ``features`` output to the exported network. The check costs one extra network output
and a ``(N, D) x (D, D)`` product per frame.
"""

from __future__ import annotations

import io
import zipfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..errors import VisionError
from ..files import read_bounded

__all__ = [
    "FAMILIAR_FILE",
    "FAMILIAR_SCHEMA",
    "MAX_FAMILIAR_BYTES",
    "Familiarity",
    "FamiliarityError",
    "load_familiarity",
]

#: The statistics file beside ``d6_reader.onnx``.
FAMILIAR_FILE = "d6_familiar.npz"
#: What the file says it is; a file of another schema is refused.
FAMILIAR_SCHEMA = "dicetower.d6_familiar/1"
#: The file is at most this long (the shipped one is under 64 KB).
MAX_FAMILIAR_BYTES = 2_000_000
#: Largest feature width accepted (the shipped network's is 96).
_MAX_DIM = 1024
#: The arrays the file holds, beside ``schema``, ``output`` and ``threshold``.
_ARRAYS = ("means", "whiten")


class FamiliarityError(VisionError, ValueError):
    """The familiarity statistics file is missing a field, malformed or does not fit the network."""


@dataclass(frozen=True)
class Familiarity:
    """Per-face feature means, a whitening map and the distance over which a die is unfamiliar.

    ``means`` is ``(6, D)`` (faces 1-6), ``whiten`` ``(D, D)`` with ``whiten @ whiten.T`` the
    inverse of the shared covariance, ``output`` the network output the features come from.
    """

    output: str
    means: np.ndarray
    whiten: np.ndarray
    threshold: float

    def __post_init__(self) -> None:
        # The whitened means are what every distance is measured from: computed once.
        object.__setattr__(self, "_white_means", self.means @ self.whiten)

    @property
    def dim(self) -> int:
        """The feature width the statistics expect."""
        return int(self.means.shape[1])

    def distances(self, features: np.ndarray) -> np.ndarray:
        """Each row's squared Mahalanobis distance to the nearest face's mean, ``(N,)``."""
        x = np.asarray(features, np.float32).reshape(len(features), -1) @ self.whiten
        mu = self._white_means  # type: ignore[attr-defined]
        d = (x * x).sum(1)[:, None] - 2.0 * (x @ mu.T) + (mu * mu).sum(1)[None, :]
        return np.maximum(d.min(axis=1), 0.0) if len(d) else np.zeros(0, np.float32)

    def unfamiliar(self, features: np.ndarray) -> np.ndarray:
        """True for each row farther than :attr:`threshold` from every face's training dice."""
        return self.distances(features) > self.threshold

    def to_bytes(self) -> bytes:
        """The ``.npz`` file's bytes (what :func:`load_familiarity` reads back)."""
        buf = io.BytesIO()
        np.savez(
            buf,
            schema=np.array(FAMILIAR_SCHEMA),
            output=np.array(self.output),
            threshold=np.array(self.threshold, np.float64),
            means=self.means.astype(np.float32),
            whiten=self.whiten.astype(np.float32),
        )
        return buf.getvalue()


def _field(z: np.lib.npyio.NpzFile, name: str, where: Path) -> np.ndarray:
    if name not in z.files:
        raise FamiliarityError(f"{where}: no {name!r} field (refit with vision/training/d6/familiar.py)")
    return z[name]


def load_familiarity(folder: Path) -> Familiarity | None:
    """The statistics in ``folder``'s :data:`FAMILIAR_FILE`, or None when it has none.

    Every field is checked here, so a bad file ends in one :class:`FamiliarityError` line at
    load, not a shape error on the first frame: the schema, a finite positive threshold, six
    finite face means and a square finite whitening map of the same width.
    """
    path = folder / FAMILIAR_FILE
    if not path.is_file():
        return None
    try:
        raw = read_bounded(path, MAX_FAMILIAR_BYTES)
    except OSError as exc:
        raise FamiliarityError(f"{path}: cannot read: {exc.strerror or exc}") from None
    try:
        with np.load(io.BytesIO(raw), allow_pickle=False) as z:
            schema = str(_field(z, "schema", path))
            output = str(_field(z, "output", path))
            threshold = _field(z, "threshold", path)
            arrays = {name: _field(z, name, path) for name in _ARRAYS}
    except (ValueError, OSError, zipfile.BadZipFile, EOFError) as exc:
        raise FamiliarityError(f"{path}: not a statistics file: {exc}") from None
    if schema != FAMILIAR_SCHEMA:
        raise FamiliarityError(f"{path}: schema {schema!r}, this reader reads {FAMILIAR_SCHEMA!r}")
    if not output or len(output) > 200:
        raise FamiliarityError(f"{path}: 'output' must name a network output")
    if threshold.shape != () or not np.issubdtype(threshold.dtype, np.floating):
        raise FamiliarityError(f"{path}: 'threshold' must be one number")
    if not np.isfinite(threshold) or float(threshold) <= 0.0:
        raise FamiliarityError(f"{path}: 'threshold' must be finite and above 0, got {float(threshold)}")
    means, whiten = arrays["means"], arrays["whiten"]
    for name, a in arrays.items():
        if not np.issubdtype(a.dtype, np.floating) or not np.isfinite(a).all():
            raise FamiliarityError(f"{path}: {name!r} must hold finite numbers")
    if means.ndim != 2 or means.shape[0] != 6 or not 1 <= means.shape[1] <= _MAX_DIM:
        raise FamiliarityError(
            f"{path}: 'means' must be 6 rows (faces 1-6) of 1-{_MAX_DIM}, got {means.shape}"
        )
    dim = means.shape[1]
    if whiten.shape != (dim, dim):
        raise FamiliarityError(f"{path}: 'whiten' must be {dim} x {dim} like the means, got {whiten.shape}")
    return Familiarity(output, means.astype(np.float32), whiten.astype(np.float32), float(threshold))
