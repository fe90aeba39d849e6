"""The four rule systems, chosen from a plain dict by name.

Each module defines ``SYSTEM`` (a :class:`~.base.System`); modules load lazily so a CLI
call that uses one system does not import the others.
"""

from __future__ import annotations

from importlib import import_module

from ..errors import UnknownSystemError
from .base import Check, Param, System, run_check, validate_params

__all__ = [
    "SYSTEM_MODULES",
    "Check",
    "Param",
    "System",
    "get_system",
    "run_check",
    "system_names",
    "validate_params",
]

#: system name -> module that defines ``SYSTEM``
SYSTEM_MODULES: dict[str, str] = {
    "wizard-quest": "dicetower.rules.systems.wizard_quest",
    "duelling": "dicetower.rules.systems.duelling",
    "wcrpg": "dicetower.rules.systems.wcrpg",
    "runic-flux": "dicetower.rules.systems.runic_flux",
}


def system_names() -> list[str]:
    return list(SYSTEM_MODULES)


def get_system(name: str) -> System:
    """Load a system by name (``wizard-quest``, ``duelling``, ``wcrpg``, ``runic-flux``)."""
    key = name.strip().lower().replace("_", "-")
    try:
        module = SYSTEM_MODULES[key]
    except KeyError:
        raise UnknownSystemError(
            f"unknown system {name!r}; choose from {', '.join(SYSTEM_MODULES)}"
        ) from None
    return import_module(module).SYSTEM
