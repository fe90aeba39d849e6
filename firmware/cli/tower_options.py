"""The ``--tower`` options every command that rolls on a tower shares, and the config they name.

Kept apart from ``cli/tower.py`` (the ``tower`` command's actions) so a command module such as
``panel_check`` can take them without importing the command that registers it.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..config import Config

__all__ = ["TOWER_CHOICES", "add_tower_arguments", "tower_config"]

TOWER_CHOICES = ("sim", "config", "replay")


def add_tower_arguments(
    p: argparse.ArgumentParser, *, default: str | None = None, throws: bool = True
) -> None:
    """``--tower``, ``--replay``, ``--config``, ``--sim-seed`` and ``--taught`` on a parser, and
    ``--save`` and ``--photo-cap-mb`` where the command keeps its throws (``throws``)."""
    g = p.add_argument_group("tower")
    g.add_argument(
        "--tower",
        choices=TOWER_CHOICES,
        default=default,
        help="roll on a tower: the simulated one, the one in the config file, or a replayed folder",
    )
    g.add_argument("--replay", metavar="DIR", help="with --tower replay: a folder with manifest.jsonl")
    g.add_argument("--config", metavar="PATH", help="tower config file (default /etc/dicetower/config.toml)")
    if throws:
        g.add_argument(
            "--save",
            metavar="DIR",
            help="where each throw's photo and record go (default: ~/.local/state/dicetower/throws)",
        )
        g.add_argument(
            "--photo-cap-mb",
            type=float,
            metavar="MB",
            help="keep that folder under MB megabytes, oldest throws removed first "
            "(DICETOWER_PHOTO_CAP_MB; default 512)",
        )
    g.add_argument("--sim-seed", type=int, metavar="N", help="seed the simulated tray's throws")
    g.add_argument(
        "--taught",
        metavar="MODEL",
        help="read the dice a taught model knows with their own reader (dicetower teach fit), "
        "the others with the general reader; instead of the config's [reader] taught",
    )


def tower_config(args: argparse.Namespace) -> Config:
    """The config ``--tower`` / ``--config`` / ``--replay`` name (validated)."""
    from ..config import DEFAULT_PATH, ConfigError, load_config

    which = getattr(args, "tower", None) or "config"
    path = getattr(args, "config", None)
    replay = getattr(args, "replay", None)
    taught = getattr(args, "taught", None)
    if replay and which != "replay":
        raise ConfigError("--replay DIR goes with --tower replay")
    if which == "config":
        if path is None and not DEFAULT_PATH.is_file():
            raise ConfigError(
                f"no tower config at {DEFAULT_PATH}: give --config PATH, or --tower sim (the simulated tower)"
            )
        cfg = load_config(path or DEFAULT_PATH, taught=taught)
    else:
        cfg = load_config(path, taught=taught)
        pins = _replace(cfg.pins, factory="mock")
        if which == "sim":
            camera = _replace(cfg.camera, backend="sim")
        else:
            if not replay:
                raise ConfigError("--tower replay needs --replay DIR (a folder with manifest.jsonl)")
            camera = _replace(cfg.camera, backend="replay", replay=str(replay))
        cfg = cfg.with_changes(pins=pins, camera=camera)
    seed = getattr(args, "sim_seed", None)
    if seed is not None:
        if seed < 0:
            raise ConfigError("--sim-seed must be 0 or more")
        cfg = cfg.with_changes(sim=_replace(cfg.sim, seed=seed))
    return cfg


def _replace(obj: Any, **kw: Any) -> Any:
    from dataclasses import replace

    return replace(obj, **kw)
