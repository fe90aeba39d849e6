"""The MQTT client both sides use: paho-mqtt, configured from the ``[mqtt]`` settings.

Why paho-mqtt: it is the Eclipse project's maintained client, pure Python, and its network
thread reconnects on its own with a bounded back-off, which is all a tower needs while its
broker is away. It is imported here only, and only when a tower or hub connects, so a tower
without the ``mqtt`` extra runs as before.

Sessions are persistent (``clean_session=False``, a fixed client id): the broker keeps a
tower's request subscription and a hub's subscriptions, with their QoS 1 messages, while either
is disconnected.
"""

from __future__ import annotations

import ssl
import sys
from dataclasses import dataclass
from typing import Any

from .settings import BrokerUrl, parse_broker_url

__all__ = [
    "Connection",
    "MqttMissingError",
    "connect_failure",
    "dropped",
    "new_client",
    "refusal",
    "require_client",
    "start",
    "stop",
    "tls_context",
]

#: messages paho may hold unacknowledged at once; the publisher's own window stays below it
MAX_INFLIGHT = 100
#: messages paho may queue beyond those (it drops past this rather than grow)
MAX_QUEUED = 1000


class MqttMissingError(ImportError):
    """The MQTT client library is not installed."""


@dataclass(frozen=True)
class Connection:
    """Where and as whom to connect: the broker URL, user and password, a CA file for TLS."""

    url: str
    username: str | None = None
    password: str | None = None
    ca_file: str = ""
    keepalive_s: int = 30

    @property
    def broker(self) -> BrokerUrl:
        return parse_broker_url(self.url)


def require_client() -> None:
    """Raise :class:`MqttMissingError` now, with the install line, if paho-mqtt is missing."""
    _paho()


def _paho() -> Any:
    try:
        import paho.mqtt.client as mqtt
    except ImportError:
        raise MqttMissingError(
            "MQTT needs paho-mqtt: pip install 'dicetower[mqtt]' (or pip install paho-mqtt)"
        ) from None
    return mqtt


class _ClosingSSLSocket(ssl.SSLSocket):
    """An SSL socket that closes itself when its handshake fails.

    Why: paho drops the socket of a failed handshake (a certificate no trusted CA signed) without
    closing it, and retries every few seconds; closed here, no descriptor waits for the collector.
    """

    def do_handshake(self, block: bool = False) -> None:
        try:
            super().do_handshake(block)
        except BaseException:
            self.close()
            raise


def tls_context(ca_file: str = "") -> ssl.SSLContext:
    """The client's TLS: the broker's certificate checked against ``ca_file`` (else the system's
    CAs) and its name against the URL's host, as paho's own ``tls_set`` does."""
    context = ssl.create_default_context(ssl.Purpose.SERVER_AUTH, cafile=ca_file or None)
    context.sslsocket_class = _ClosingSSLSocket
    return context


def new_client(conn: Connection, client_id: str, *, will: tuple[str, bytes] | None = None) -> Any:
    """A paho client for ``conn`` (not yet connected); ``will`` is a retained QoS 1 last will."""
    mqtt = _paho()
    broker = conn.broker
    client = mqtt.Client(
        mqtt.CallbackAPIVersion.VERSION2,
        client_id=client_id[:64],
        clean_session=False,
        protocol=mqtt.MQTTv311,
    )
    user = conn.username or broker.username
    if user:
        client.username_pw_set(user, conn.password if conn.password is not None else broker.password)
    if broker.tls:
        client.tls_set_context(tls_context(conn.ca_file))
    if will is not None:
        client.will_set(will[0], will[1], qos=1, retain=True)
    client.reconnect_delay_set(min_delay=1, max_delay=5)
    client.max_inflight_messages_set(MAX_INFLIGHT)
    client.max_queued_messages_set(MAX_QUEUED)
    return client


def refusal(reason: Any) -> str:
    """Why the broker answered a connection with no: its CONNACK reason ("Not authorized")."""
    return f"the broker refused the connection: {str(reason)[:200]}"


def connect_failure(conn: Connection) -> str:
    """Why the last attempt to reach the broker failed, for paho's ``on_connect_fail``.

    Why ``sys.exc_info``: paho calls ``on_connect_fail`` with no arguments but the client, from
    inside the ``except OSError`` that caught the failure, so the exception being handled is the
    reason (a certificate no trusted CA signed, a refused port, a name that does not resolve).
    The broker is named without its password.
    """
    exc = sys.exc_info()[1]
    why = (str(exc) or type(exc).__name__) if exc is not None else "the connection failed"
    return f"cannot connect to {conn.broker.describe()}: {why[:300]}"


def dropped(reason: Any, was_connected: bool) -> str:
    """Why a connection ended that was not closed on purpose (a broker gone, plain MQTT on a TLS port)."""
    if was_connected:
        return f"the connection to the broker was lost: {str(reason)[:200]}"
    return f"the broker closed the connection before accepting it: {str(reason)[:200]}"


def start(client: Any, conn: Connection) -> None:
    """Connect in the background: paho's thread keeps reconnecting until :func:`stop`."""
    broker = conn.broker
    client.connect_async(broker.host, broker.port, keepalive=conn.keepalive_s)
    client.loop_start()


def stop(client: Any) -> None:
    client.disconnect()
    client.loop_stop()
