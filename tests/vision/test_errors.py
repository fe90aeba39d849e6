"""Every error class of the vision package shares one base, as the rules core's and the tower's do."""

from __future__ import annotations

import importlib
import inspect
import pkgutil

import dicetower.vision
import pytest
from dicetower.vision.errors import VisionError


def _vision_error_classes() -> dict[str, type[BaseException]]:
    """``module.Class`` -> class, for every exception class defined in the installed vision package."""
    found: dict[str, type[BaseException]] = {}
    for info in pkgutil.walk_packages(dicetower.vision.__path__, "dicetower.vision."):
        if ".training" in info.name:  # training code: not the product's API
            continue
        module = importlib.import_module(info.name)
        for name, obj in vars(module).items():
            if inspect.isclass(obj) and issubclass(obj, BaseException) and obj.__module__ == info.name:
                found[f"{info.name}.{name}"] = obj
    return found


def test_the_walk_finds_the_error_classes() -> None:
    names = set(_vision_error_classes())
    assert "dicetower.vision.manifest.ManifestError" in names
    assert "dicetower.vision.eval.calibrate.ThresholdCalibrationError" in names


@pytest.mark.parametrize("name", sorted(_vision_error_classes()))
def test_every_vision_error_is_a_vision_error(name: str) -> None:
    assert issubclass(_vision_error_classes()[name], VisionError)


def test_bad_input_errors_stay_value_errors() -> None:
    from dicetower.vision.imageio import DamagedImageError
    from dicetower.vision.manifest import ManifestError

    assert issubclass(ManifestError, ValueError) and issubclass(DamagedImageError, ValueError)


def test_the_two_calibration_errors_have_different_names() -> None:
    from dicetower.firmware.errors import CalibrationError
    from dicetower.vision.eval.calibrate import ThresholdCalibrationError

    assert CalibrationError.__name__ != ThresholdCalibrationError.__name__
