"""A taught model named by the config (``[reader] taught``, ``--taught``): checked before anything moves.

Why load the whole model at config time: a model with a missing network or a broken card would
otherwise fail at the first throw, after the solenoid has moved, with a message about a file
rather than the key that named it. Loading it imports OpenCV, so it happens only when a model is
named; a config without one checks its names without OpenCV.

Which dice it lets the tray hold: a kind no general reader reads (d8, d12) may be loaded once a
taught model reads that kind in that colour (or in any colour, when it was taught without colour
names); a kind no reader reads (d4) never (:data:`~dicetower.vision.kinds.NEVER_READ`).
"""

from __future__ import annotations

from collections.abc import Collection
from pathlib import Path

from .errors import ConfigError

__all__ = ["TEACH_AGAIN", "check_taught_kind", "taught_dice"]

#: How to teach a die, as the config's messages and the tower's drift warning say it.
TEACH_AGAIN = "dicetower teach collect --tower config --rolls N --out DIR"


def taught_dice(folder: str, what: str) -> frozenset[tuple[str, str]]:
    """The (kind, colour) of each die the taught model in ``folder`` reads.

    ``what`` names the key or flag that gave ``folder``; every error starts with it.
    """
    if not Path(folder).is_dir():
        raise ConfigError(f"{what}: no such folder (a taught model is written by 'dicetower teach fit')")
    from ..vision.taught.features import TaughtModelError
    from ..vision.taught.model import TaughtModel

    try:
        model = TaughtModel(folder)
    except TaughtModelError as exc:
        raise ConfigError(f"{what}: {exc}") from None
    return frozenset((d.kind, d.colour) for d in model.dice)


def check_taught_kind(where: str, kind: str, colour: str, taught: Collection[tuple[str, str]] | None) -> None:
    """Refuse a die of a kind only a taught reader reads unless ``taught`` (the model's dice) reads it."""
    teach = f"teach it ({TEACH_AGAIN})"
    if taught is None:
        raise ConfigError(f"{where} is read only once taught: {teach} and set [reader] taught")
    if (kind, colour) not in taught and (kind, "") not in taught:
        held = ", ".join(f"{c} {k}".strip() for k, c in sorted(taught)) or "none"
        raise ConfigError(
            f"{where} is read only once taught, and the taught model teaches no {colour} {kind}"
            f" (it teaches {held}): {teach} and fit the model again"
        )
