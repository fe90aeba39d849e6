"""``--allowed-host``: the names ``dicetower serve`` and ``dicetower hub`` answer to besides the machine's.

One option for both servers, resolved as flag, then ``DICETOWER_ALLOWED_HOSTS`` (comma-separated),
then the config file's ``[server] allowed_hosts``, and checked before the server starts by the check
the config uses (``server/host_names.py``), so a mistyped name fails with the place it came from.
"""

from __future__ import annotations

import argparse
import os
from typing import Any

__all__ = ["add_allowed_host_argument", "allowed_hosts"]

ENV = "DICETOWER_ALLOWED_HOSTS"


def add_allowed_host_argument(p: argparse.ArgumentParser, *, config_key: bool) -> None:
    p.add_argument(
        "--allowed-host",
        action="append",
        default=None,
        metavar="NAME",
        help="a name the server answers to besides localhost and this machine's names and addresses "
        f"(a request whose Host names another is refused, 421); repeatable ({ENV}, comma-separated"
        + ("; [server] allowed_hosts in the config" if config_key else "")
        + "; * for any)",
    )


def allowed_hosts(given: list[str] | None, cfg: Any = None) -> tuple[str, ...]:
    """The names to answer to besides the machine's: ``--allowed-host``, then the environment, then
    ``cfg``'s ``[server] allowed_hosts`` (a :class:`~dicetower.firmware.config.Config`, or None)."""
    from ..server.host_names import check_allowed_hosts

    if given is not None:
        where, names = "--allowed-host", given
    elif os.environ.get(ENV, "").strip():
        where, names = ENV, [n.strip() for n in os.environ[ENV].split(",")]
    else:
        return cfg.server.allowed_hosts if cfg is not None else ()
    try:
        return check_allowed_hosts([n for n in names if n])
    except ValueError as exc:
        raise ValueError(f"{where}: must be {exc}") from None
