"""``--mqtt URL`` and its companions, for ``dicetower serve`` and ``dicetower hub``.

Why a module of its own: both commands name a broker the same way, and the flags must override
the config's ``[mqtt]`` section key by key (flag, then ``DICETOWER_MQTT_*``, then the file).
"""

from __future__ import annotations

import argparse
import dataclasses
import os
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..mqtt.settings import MqttConfig

__all__ = ["add_mqtt_arguments", "mqtt_settings"]


def add_mqtt_arguments(p: argparse.ArgumentParser, *, tower: bool) -> None:
    g = p.add_argument_group("MQTT (docs/towers.md)")
    g.add_argument(
        "--mqtt",
        metavar="URL",
        default=None,
        help="broker: mqtt://[user[:password]@]host[:port] or mqtts://... (TLS) (DICETOWER_MQTT_URL)",
    )
    g.add_argument("--mqtt-prefix", metavar="PREFIX", default=None, help="topic prefix (default dicetower)")
    g.add_argument("--mqtt-password-file", metavar="PATH", default=None, help="the broker password's file")
    g.add_argument("--mqtt-ca", metavar="PATH", default=None, help="CA certificate for mqtts:// (TLS)")
    if tower:
        g.add_argument("--mqtt-tower", metavar="NAME", default=None, help="this tower's name (default: host)")
        g.add_argument(
            "--mqtt-photos",
            choices=("url", "inline", "none"),
            default=None,
            help="photos in roll events: a link to this tower (url), die crops inline, or none",
        )
        g.add_argument(
            "--mqtt-photo-url", metavar="URL", default=None, help="this tower's address as viewers reach it"
        )


def mqtt_settings(args: argparse.Namespace, base: MqttConfig | None) -> MqttConfig | None:
    """``base`` (the config's ``[mqtt]``) with the flags applied and checked; None without a URL."""
    from ..mqtt.settings import MqttConfig

    base = base or MqttConfig()
    flags = {
        "url": args.mqtt or os.environ.get("DICETOWER_MQTT_URL"),
        "prefix": args.mqtt_prefix,
        "password_file": args.mqtt_password_file,
        "ca_file": args.mqtt_ca,
        "tower": getattr(args, "mqtt_tower", None),
        "photos": getattr(args, "mqtt_photos", None),
        "photo_url": getattr(args, "mqtt_photo_url", None),
    }
    changes = {}
    for f in dataclasses.fields(MqttConfig):
        value = flags.get(f.name)
        if value is not None:
            try:
                changes[f.name] = f.metadata["check"](value)
            except ValueError as exc:
                raise ValueError(f"--mqtt{'' if f.name == 'url' else '-' + f.name}: must be {exc}") from None
    settings = dataclasses.replace(base, **changes)
    if not settings.url:
        return None
    from ..mqtt.client import require_client

    require_client()  # a missing client library is named before the server starts
    for name, path in (("password file", settings.password_file), ("CA file", settings.ca_file)):
        if path and not os.access(path, os.R_OK):  # checked now: not after the server has started
            raise ValueError(f"the MQTT {name} {path!r} cannot be read")
    return settings
