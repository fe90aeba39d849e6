"""The hub: every tower's rolls from an MQTT broker in one overlay and one checked log.

Rooms by job: ``chain`` (one tower's chain as the hub follows it), ``towers`` (what the hub
knows of each tower, bounded), ``store`` (the combined log in SQLite), ``core`` (what the hub
does with each message), ``subscriber`` (the broker connection) and ``app`` (the pages and
API). ``dicetower hub`` runs it; docs/towers.md says what it shows.
"""

__all__: list[str] = []
