"""The table of real processes the MQTT tests run (:mod:`dicetower.firmware.loopback.table`),
under the name the tests import it by."""

from dicetower.firmware.loopback.table import HubWatcher, Process, start_hub, start_tower

__all__ = ["HubWatcher", "Process", "start_hub", "start_tower"]
