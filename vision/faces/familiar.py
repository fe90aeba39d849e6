"""Is a die like the dice the d6 reader learnt from? If not, it is ``unfamiliar``, not guessed.

Why: on a set of dice it never trained on, the face reader reads a share of the dice wrong *with
confidence*: its per-face thresholds were chosen on dice like its training dice, and a die of
another make (other pips, other colours, other light) can pass them with the wrong face. Such a
die is reported unreadable with :attr:`~dicetower.vision.reading.UnreadableReason.UNFAMILIAR`
("unfamiliar die: teach it"): the owner's remedy is to teach the tower those dice
(``dicetower teach``), whose taught reader is not subject to this check.

Two scores, each with its own threshold; a die over either is unfamiliar:

- **nearest training dice** (Sun et al. 2022, "Out-of-distribution detection with deep nearest
  neighbors"): the reader network's pooled last-stage features (a ``features`` output beside
  its logits), scaled to unit length, against a stored sample of its training dice's: the
  cosine distance to the ``k``-th nearest. A die far from every training die is unlike them.
- **energy** (Liu et al. 2020): ``-logsumexp`` of the temperature-scaled logits. Low for a crop
  the network answers strongly, high for one it answers weakly in every class.

In a frame seen from straight above, a die read with a face is also read turned a quarter
(:func:`turned_disagrees`): a die read as two faces is unfamiliar too.

Measured on networks trained without one set and read on that set (docs/vision.md,
"Unfamiliar dice"), the quarter turn removes most of the wrong reads the check removes; the two
scores catch more together than either alone, and more than a Mahalanobis distance to per-face
means (which caught none). The statistics (:data:`FAMILIAR_FILE`, about 150 KB) and both
thresholds come from :mod:`dicetower.vision.training.d6.familiar`: the sample from the train
split, the thresholds from the validation split of the sets the network trained on. The check
costs one extra network output and a ``(N, D) x (D, B)`` product per frame, and in a top-down
frame one more network pass over the dice read with a face.
"""

from __future__ import annotations

import io
import zipfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import cv2
import numpy as np

from ..errors import VisionError
from ..files import read_bounded

__all__ = [
    "FAMILIAR_FILE",
    "FAMILIAR_SCHEMA",
    "MAX_FAMILIAR_BYTES",
    "Familiarity",
    "FamiliarityError",
    "energies",
    "load_familiarity",
    "turned_disagrees",
    "unit_rows",
]

#: The statistics file beside ``d6_reader.onnx``.
FAMILIAR_FILE = "d6_familiar.npz"
#: What the file says it is; a file of another schema is refused.
FAMILIAR_SCHEMA = "dicetower.d6_familiar/1"
#: The file is at most this long (the shipped one is about 200 KB).
MAX_FAMILIAR_BYTES = 4_000_000
#: Largest feature width and sample accepted (the shipped network's width is 96).
_MAX_DIM = 1024
_MAX_BANK = 20_000


class FamiliarityError(VisionError, ValueError):
    """The familiarity statistics file is missing a field, malformed or does not fit the network."""


def unit_rows(x: np.ndarray) -> np.ndarray:
    """``x``'s rows scaled to unit length (an all-zero row stays zero)."""
    x = np.asarray(x, np.float32).reshape(len(x), -1)
    return x / (np.linalg.norm(x, axis=1, keepdims=True) + 1e-9)


def energies(scaled_logits: np.ndarray) -> np.ndarray:
    """``-logsumexp`` of each row of temperature-scaled logits: high when no class is answered strongly."""
    z = np.asarray(scaled_logits, np.float64)
    top = z.max(axis=1)
    return -(top + np.log(np.exp(z - top[:, None]).sum(axis=1)))


def turned_disagrees(
    forward: Callable[[np.ndarray], np.ndarray], blob: np.ndarray, faces: Sequence[int]
) -> np.ndarray:
    """True where the crop turned a quarter reads as another face than ``faces`` (``(N,)``).

    For a frame seen from straight above (:class:`~dicetower.vision.view.View` ``top_down``) a
    die turned a quarter is the same face, and the reader is trained on every turn of such
    dice, so two answers are one die's answer twice. Turning the finished blob is exact (its
    standardisation does not depend on orientation). ``forward`` maps a blob to logits.
    """
    if not len(faces):
        return np.zeros(0, bool)
    turned = np.ascontiguousarray(np.rot90(blob, 1, axes=(2, 3)))
    logits = np.asarray(forward(turned), np.float32).reshape(len(faces), -1)
    return np.asarray(logits[:, 1:].argmax(axis=1) + 1 != np.asarray(faces))


@dataclass(frozen=True)
class Familiarity:
    """A sample of training dice's features and the two thresholds over which a die is unfamiliar.

    ``bank`` is ``(B, D)``, unit rows; ``k`` which nearest counts; ``output`` the network output
    the features come from.
    """

    output: str
    bank: np.ndarray
    k: int
    knn_threshold: float
    energy_threshold: float

    @property
    def dim(self) -> int:
        """The feature width the sample holds."""
        return int(self.bank.shape[1])

    def knn_distances(self, features: np.ndarray) -> np.ndarray:
        """Each row's cosine distance to its ``k``-th nearest training die, ``(N,)``."""
        if not len(features):
            return np.zeros(0, np.float32)
        # cv2.gemm, not numpy's matmul: numpy hands even this small product to its BLAS threads,
        # which on a busy machine wait for cores (25 dice: 32 ms against 0.1 ms measured here).
        sim = cv2.gemm(unit_rows(features), self.bank, 1.0, None, 0.0, flags=cv2.GEMM_2_T)
        k = min(self.k, sim.shape[1])
        return 1.0 - np.partition(sim, sim.shape[1] - k, axis=1)[:, sim.shape[1] - k]

    def unfamiliar(self, features: np.ndarray, scaled_logits: np.ndarray) -> np.ndarray:
        """True for each die farther than its threshold from the training dice by either score."""
        if not len(features):
            return np.zeros(0, bool)
        far = self.knn_distances(features) > self.knn_threshold
        return far | (energies(scaled_logits) > self.energy_threshold)

    def to_bytes(self) -> bytes:
        """The ``.npz`` file's bytes (what :func:`load_familiarity` reads back)."""
        buf = io.BytesIO()
        np.savez_compressed(
            buf,
            schema=np.array(FAMILIAR_SCHEMA),
            output=np.array(self.output),
            k=np.array(self.k, np.int64),
            knn_threshold=np.array(self.knn_threshold, np.float64),
            energy_threshold=np.array(self.energy_threshold, np.float64),
            bank=self.bank.astype(np.float16),
        )
        return buf.getvalue()


def _field(z: np.lib.npyio.NpzFile, name: str, where: Path) -> np.ndarray:
    if name not in z.files:
        raise FamiliarityError(f"{where}: no {name!r} field (refit with vision/training/d6/familiar.py)")
    return z[name]


def _number(a: np.ndarray, name: str, where: Path, kind: type = np.floating) -> float:
    """A field that must be one finite number (of ``kind``)."""
    if a.shape != () or not np.issubdtype(a.dtype, kind) or not np.isfinite(a):
        raise FamiliarityError(f"{where}: {name!r} must be one finite number")
    return float(a)


def load_familiarity(folder: Path) -> Familiarity | None:
    """The statistics in ``folder``'s :data:`FAMILIAR_FILE`, or None when it has none.

    Every field is checked here, so a bad file ends in one :class:`FamiliarityError` line at
    load, not a shape error on the first frame: the schema, a network output's name, ``k`` in
    1..B, a cosine-distance threshold in (0, 2], a finite energy threshold, and a sample of
    finite numbers of at most 1024 columns.
    """
    path = folder / FAMILIAR_FILE
    if not path.is_file():
        return None
    try:
        raw = read_bounded(path, MAX_FAMILIAR_BYTES)
    except OSError as exc:
        raise FamiliarityError(f"{path}: cannot read: {exc.strerror or exc}") from None
    fields = ("schema", "output", "k", "knn_threshold", "energy_threshold", "bank")
    try:
        with np.load(io.BytesIO(raw), allow_pickle=False) as z:
            got = {name: _field(z, name, path) for name in fields}
    except (ValueError, OSError, zipfile.BadZipFile, EOFError) as exc:
        raise FamiliarityError(f"{path}: not a statistics file: {exc}") from None
    schema, output = str(got["schema"]), str(got["output"])
    if schema != FAMILIAR_SCHEMA:
        raise FamiliarityError(f"{path}: schema {schema!r}, this reader reads {FAMILIAR_SCHEMA!r}")
    if not output or len(output) > 200:
        raise FamiliarityError(f"{path}: 'output' must name a network output")
    bank = got["bank"]
    if not np.issubdtype(bank.dtype, np.floating) or not np.isfinite(bank).all():
        raise FamiliarityError(f"{path}: 'bank' must hold finite numbers")
    if bank.ndim != 2 or not 1 <= bank.shape[0] <= _MAX_BANK or not 1 <= bank.shape[1] <= _MAX_DIM:
        raise FamiliarityError(
            f"{path}: 'bank' must be 1-{_MAX_BANK} rows of 1-{_MAX_DIM} numbers, got {bank.shape}"
        )
    k = _number(got["k"], "k", path, np.integer)
    if not 1 <= k <= bank.shape[0]:
        raise FamiliarityError(f"{path}: 'k' must lie in 1..{bank.shape[0]} (the sample's rows), got {k:g}")
    knn = _number(got["knn_threshold"], "knn_threshold", path)
    if not 0.0 < knn <= 2.0:
        raise FamiliarityError(f"{path}: 'knn_threshold' is a cosine distance in (0, 2], got {knn}")
    energy = _number(got["energy_threshold"], "energy_threshold", path)
    return Familiarity(output, unit_rows(bank), int(k), knn, energy)
