"""Where a tower publishes: the ``[mqtt]`` config section, the broker URL, names and topics.

Why one module: the tower (``dicetower serve --mqtt``) and the hub (``dicetower hub``) must
agree on every topic, and a tower name or prefix that a topic cannot hold (``+``, ``#``, ``/``)
has to be refused when the config is read, before anything connects. Nothing here imports the
MQTT client library: a tower without the ``mqtt`` extra still reads its config.

Topics, under one prefix (``dicetower`` by default)::

    PREFIX/TOWER/rolls      each finished roll (QoS 1), in the log's order
    PREFIX/TOWER/status     online / rolling / idle / needs-attention, retained; the broker
                            publishes "offline" (the last will) when the tower drops
    PREFIX/TOWER/requests/WHO  roll requests the tower takes (QoS 1); WHO is the requester's
                               broker user, held to it by the broker's ACL
    PREFIX/TOWER/resend/WHO    a hub asks for the rolls after a sequence number again
    PREFIX/TOWER/amended    a roll the table corrected: its chained correct note and the roll as now (QoS 1)
    PREFIX/_hub/ID/replies  a hub's reply topic (tower names never start with "_")
"""

from __future__ import annotations

import re
import socket
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

from ..config_values import boolean, int_in, one_of, text

__all__ = [
    "MAX_TOPIC_BYTES",
    "PHOTO_MODES",
    "BrokerUrl",
    "MqttConfig",
    "Topics",
    "check_identity",
    "check_prefix",
    "check_tower_name",
    "default_tower_name",
    "parse_broker_url",
]

#: the longest topic either side builds or accepts (Mosquitto allows 65535; ours stay short)
MAX_TOPIC_BYTES = 256
#: ``[mqtt] photos``: a link to the tower's photo URL, the die crops inline (bounded), or nothing
PHOTO_MODES = ("url", "inline", "none")
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")
_PREFIX = re.compile(r"[A-Za-z0-9_.-]{1,64}(/[A-Za-z0-9_.-]{1,64}){0,3}")


def check_tower_name(value: Any) -> str:
    """A tower's name as a topic level: 1-64 letters, digits, ``_ . -``, not starting with ``_``."""
    if not isinstance(value, str) or not _NAME.fullmatch(value):
        raise ValueError("1-64 letters, digits, '_', '.' or '-', starting with a letter or digit")
    return value


def check_identity(value: Any) -> bool:
    """Whether ``value`` is a requester's identity as a topic level: 1-64 printable characters,
    no ``/``, ``+``, ``#`` (a broker user name, or the client id where the broker has no users)."""
    return (
        isinstance(value, str)
        and 0 < len(value) <= 64
        and value.isprintable()
        and not any(c in value for c in "/+#")
    )


def check_prefix(value: Any) -> str:
    """The topic prefix: up to four levels of letters, digits, ``_ . -`` (no wildcards)."""
    if not isinstance(value, str) or not _PREFIX.fullmatch(value):
        raise ValueError("1-4 topic levels of letters, digits, '_', '.' or '-' joined by '/'")
    return value


def _url_or_empty(value: Any) -> str:
    if value == "":
        return ""
    parse_broker_url(value)
    return str(value)


def _tower_or_empty(value: Any) -> str:
    return "" if value == "" else check_tower_name(value)


def default_tower_name() -> str:
    """The host's name cut to a valid tower name (``tower`` if nothing of it fits)."""
    cleaned = re.sub(r"[^A-Za-z0-9_.-]", "-", socket.gethostname().split(".")[0]).strip("-_.")[:64]
    return cleaned if cleaned and _NAME.fullmatch(cleaned) else "tower"


@dataclass(frozen=True)
class BrokerUrl:
    """A parsed ``mqtt://`` or ``mqtts://`` (TLS) URL; user and password may be in it."""

    host: str
    port: int
    tls: bool
    username: str | None = None
    password: str | None = None

    def describe(self) -> str:
        """The URL without its password, for messages and logs."""
        user = f"{self.username}@" if self.username else ""
        return f"{'mqtts' if self.tls else 'mqtt'}://{user}{self.host}:{self.port}"


def parse_broker_url(url: Any) -> BrokerUrl:
    """``mqtt://[user[:password]@]host[:port]`` (1883) or ``mqtts://...`` (8883, TLS)."""
    if not isinstance(url, str) or len(url) > 1024:
        raise ValueError("a broker URL: mqtt://host[:port] or mqtts://host[:port]")
    parts = urlsplit(url)
    if parts.scheme not in ("mqtt", "mqtts") or not parts.hostname:
        raise ValueError(f"a broker URL: mqtt://host[:port] or mqtts://host[:port], not {url[:80]!r}")
    if parts.path not in ("", "/") or parts.query or parts.fragment:
        raise ValueError("a broker URL has no path or query: mqtt://host[:port]")
    try:
        port = parts.port
    except ValueError:
        raise ValueError("a broker URL's port is a number 1..65535") from None
    tls = parts.scheme == "mqtts"
    return BrokerUrl(
        host=parts.hostname,
        port=port or (8883 if tls else 1883),
        tls=tls,
        username=unquote(parts.username) if parts.username else None,
        password=unquote(parts.password) if parts.password else None,
    )


def _opt(check: Any) -> dict[str, Any]:
    return {"check": check}


@dataclass(frozen=True)
class MqttConfig:
    """The ``[mqtt]`` section: publish rolls and status to a broker (docs/towers.md).

    ``url`` empty: the tower publishes nothing (``dicetower serve --mqtt URL`` gives one).
    ``password_file`` and ``ca_file`` are read when the tower connects; ``photo_url`` is the
    tower's own address as the hub's viewers reach it (``http://tower.local:8080``).
    """

    url: str = field(default="", metadata=_opt(_url_or_empty))
    tower: str = field(default="", metadata=_opt(_tower_or_empty))
    prefix: str = field(default="dicetower", metadata=_opt(check_prefix))
    username: str = field(default="", metadata=_opt(text(256)))
    password_file: str = field(default="", metadata=_opt(text(4096)))
    ca_file: str = field(default="", metadata=_opt(text(4096)))
    photos: str = field(default="url", metadata=_opt(one_of(PHOTO_MODES)))
    photo_url: str = field(default="", metadata=_opt(text(512)))
    inline_max_bytes: int = field(default=64 * 1024, metadata=_opt(int_in(0, 512 * 1024)))
    keepalive_s: int = field(default=30, metadata=_opt(int_in(5, 3600)))
    #: sign every event and status with the tower's key (off only for a hub run with
    #: ``--accept-unsigned``, as the load benchmark's baseline is)
    sign: bool = field(default=True, metadata=_opt(boolean))

    @property
    def url_safe(self) -> str:
        """The broker URL without its password."""
        return parse_broker_url(self.url).describe() if self.url else ""

    @property
    def tower_name(self) -> str:
        return self.tower or default_tower_name()

    def password(self) -> str | None:
        """The password: from ``password_file`` (first line), else from the URL, else None."""
        if self.password_file:
            raw = Path(self.password_file).read_bytes()[:4096]
            return raw.decode("utf-8").splitlines()[0] if raw.strip() else None
        return parse_broker_url(self.url).password if self.url else None

    def user(self) -> str | None:
        return self.username or (parse_broker_url(self.url).username if self.url else None)


@dataclass(frozen=True)
class Topics:
    """The topics of one prefix; a tower's are built from its checked name."""

    prefix: str = "dicetower"

    def rolls(self, tower: str) -> str:
        return f"{self.prefix}/{tower}/rolls"

    def status(self, tower: str) -> str:
        return f"{self.prefix}/{tower}/status"

    def requests(self, tower: str, identity: str = "+") -> str:
        """Where ``identity`` (the requester's broker user) asks ``tower`` for rolls; ``+``: all."""
        return f"{self.prefix}/{tower}/requests/{identity}"

    def resend(self, tower: str, identity: str = "+") -> str:
        """Where ``identity`` asks ``tower`` to publish its rolls again; ``+``: all."""
        return f"{self.prefix}/{tower}/resend/{identity}"

    def asked(self, tower: str, topic: str) -> tuple[str, str] | None:
        """``(leaf, identity)`` of a request or resend topic of ``tower``; None for anything else.

        The identity is the topic's last level, which the broker's ACL
        (``pattern write PREFIX/+/requests/%u``) holds to the publisher's own user name.
        """
        head = f"{self.prefix}/{tower}/"
        if not topic.startswith(head) or len(topic.encode()) > MAX_TOPIC_BYTES:
            return None
        leaf, _, identity = topic[len(head) :].partition("/")
        if leaf not in ("requests", "resend") or not check_identity(identity):
            return None
        return leaf, identity

    def amended(self, tower: str) -> str:
        """Where a tower publishes a roll the table corrected: the chained note and the roll as now."""
        return f"{self.prefix}/{tower}/amended"

    def hub_replies(self, hub_id: str) -> str:
        return f"{self.prefix}/_hub/{hub_id}/replies"

    def all(self, leaf: str) -> str:
        """The subscription for ``leaf`` of every tower (``PREFIX/+/rolls``)."""
        return f"{self.prefix}/+/{leaf}"

    def split(self, topic: str) -> tuple[str, str] | None:
        """``(tower, leaf)`` of a tower topic under this prefix; None for anything else."""
        head = self.prefix + "/"
        if not topic.startswith(head) or len(topic.encode()) > MAX_TOPIC_BYTES:
            return None
        rest = topic[len(head) :].split("/")
        if len(rest) != 2 or not _NAME.fullmatch(rest[0]):
            return None
        return rest[0], rest[1]

    def reply_ok(self, topic: Any) -> bool:
        """Whether a request's ``reply_to`` is a reply topic a tower may publish to:
        ``PREFIX/_hub/ID/replies`` or ``PREFIX/NAME/replies``, no wildcards, bounded; never
        another tower's rolls, status, requests or resends."""
        if not isinstance(topic, str) or not topic or len(topic.encode()) > MAX_TOPIC_BYTES:
            return False
        head = self.prefix + "/"
        if any(c in topic for c in "+#\x00") or not topic.startswith(head):
            return False
        levels = topic[len(head) :].split("/")
        if len(levels) == 3 and levels[0] == "_hub":
            return bool(_NAME.fullmatch(levels[1])) and levels[2] == "replies"
        return len(levels) == 2 and bool(_NAME.fullmatch(levels[0])) and levels[1] == "replies"
