"""What ``dicetower tower status`` prints: one readable line per fact, not the status dict.

Why a module: ``Tower.status()`` is a document for machines (``--json``, ``GET /api/tower``), whose
nested values (the solenoid, the calibration's size) read as Python reprs when printed as they are.
Here each becomes words, an empty ``detail`` is left out rather than shown blank, and every text that
came from outside the program (the config's path and colours, a taught model's folder and die ids, a
camera's error) goes through :func:`~dicetower.rules.errors.printable`, so no escape sequence in them
reaches the terminal.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ...rules.errors import printable

__all__ = ["status_lines"]

#: the width the labels are right-aligned to
_LABEL = 15


def _line(label: str, value: str) -> str:
    return f"{label:>{_LABEL}}: {value}"


def _percent(share: float | None) -> str:
    return "-" if share is None else f"{100 * share:.0f} %"


def _taught_lines(taught: Mapping[str, Any] | None) -> list[str]:
    if taught is None:
        return [_line("taught", "none (the general reader reads every die)")]
    dice = ", ".join(printable(str(d)) for d in taught["dice"])
    lines = [_line("taught", f"{printable(str(taught['model']))} ({dice})")]
    if taught["general"]:
        lines.append(_line("general reader", ", ".join(printable(str(d)) for d in taught["general"])))
    drift = taught["drift"]
    if drift["recent"]:
        lines.append(
            _line(
                "read surely",
                f"{drift['sure']} of the last {drift['recent']} taught dice"
                f" (held back when taught: {_percent(drift['held_back_right_rate'])} read surely)",
            )
        )
    if taught["drifting"]:
        lines.append(_line("drifting", printable(str(taught["message"]))))
    return lines


def status_lines(status: Mapping[str, Any]) -> list[str]:
    """The lines of ``tower status`` for ``Tower.status()``'s document."""
    state = printable(str(status["state"]))
    detail = str(status.get("detail") or "").strip()
    solenoid = status["solenoid"]
    size = status.get("calibration_size")
    calibrated = (
        f"yes, at {size[0]}x{size[1]}"
        if status["calibrated"] and size
        else "yes"
        if status["calibrated"]
        else "no (dicetower tower calibrate, with the tray empty)"
    )
    lines = [
        _line("state", f"{state}: {printable(detail)}" if detail else state),
        _line("camera", printable(str(status["camera"]))),
        _line("pins", f"{printable(str(status['pins']))} (gpiozero pin factory)"),
        _line("solenoid", f"GPIO{solenoid['gpio']}, {'on' if solenoid['on'] else 'off'}"),
        _line("dice", printable(str(status["dice"]))),
        _line("calibrated", calibrated),
        _line("throws", f"{status['throws']} since the tower opened"),
        _line("config", printable(str(status["config"]))),
    ]
    return lines + _taught_lines(status.get("taught"))
