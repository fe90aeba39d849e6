"""Many towers, one table: towers publish their rolls to an MQTT broker, a hub shows them all.

Rooms by job: ``settings`` (the ``[mqtt]`` section, the broker URL, the topics), ``wire`` (what
each message carries and how a hub checks a roll's chain link), ``client`` (paho-mqtt, imported
only when something connects), ``outbox`` (the roll log read as the queue of what to publish),
``publisher`` (the tower's connection), ``requests`` (roll requests over MQTT, checked as HTTP
checks them) and ``link`` (the server's lifespan hook). The hub is :mod:`dicetower.firmware.hub`.
See docs/towers.md.
"""

from .settings import MqttConfig, Topics, parse_broker_url

__all__ = ["MqttConfig", "Topics", "parse_broker_url"]
