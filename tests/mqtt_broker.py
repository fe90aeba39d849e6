"""The loopback Mosquitto the MQTT tests run (:mod:`dicetower.firmware.loopback.broker`), under
the name the tests import it by."""

from dicetower.firmware.loopback.broker import (
    Certificates,
    Mosquitto,
    Probe,
    free_port,
    make_certificates,
    mosquitto_path,
)

__all__ = ["Certificates", "Mosquitto", "Probe", "free_port", "make_certificates", "mosquitto_path"]
