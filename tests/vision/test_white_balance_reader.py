"""Die colours under a warm lamp: named as seen, a white die turns orange; white-balanced, it stays white."""

from __future__ import annotations

import numpy as np
from dicetower.vision.reader import open_reader
from dicetower.vision.synth.numerals import NumeralStyle, TrayDie, render_tray

WARM = np.array([0.7, 0.95, 1.25])  # BGR gains of a warm lamp: less blue, more red


def _warm(image: np.ndarray) -> np.ndarray:
    return np.clip(image * WARM, 0, 255).astype(np.uint8)


def test_white_balance_against_the_empty_tray_keeps_colour_names_under_a_warm_lamp() -> None:
    reader = open_reader()
    as_seen_wrong = 0
    for seed in (0, 2):
        dice = [
            TrayDie("d6", 3, "red"),
            TrayDie("d6", 5, "white"),
            TrayDie("d6", 2, "blue"),
            TrayDie("d6", 4, "yellow"),
        ]
        frame, reference, labels = render_tray(seed, dice, style=NumeralStyle(tray=(118, 118, 118)))
        truth = [dice[i].colour for i in np.argsort([d.box[0] for d in labels])]

        def names(r, f=frame, ref=reference) -> list[str]:
            return [d.colour for d in sorted(r.read(_warm(f), _warm(ref)).dice, key=lambda d: d.box[0])]

        reader.white_balance = False
        as_seen_wrong += names(reader) != truth
        reader.white_balance = True
        assert names(reader) == truth
        plain = [d.colour for d in sorted(reader.read(frame).dice, key=lambda d: d.box[0])]
        assert plain == truth  # no reference: nothing to balance against, colours as seen
    assert as_seen_wrong == 2  # the lamp does change the names: the balance is what keeps them
