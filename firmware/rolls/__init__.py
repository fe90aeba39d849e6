"""The roll service: a request parsed and planned once, accepted, queued and rolled, one at a time.

Every way in (HTTP, MQTT, the tower's button) calls the same accept, so each refuses the same
things the same way and every roll lands in the same hash-chained log. Rooms by job:
``rolling`` (a request, the dice supplies and one roll), ``planning`` (what a roll needs before
its first throw), ``accepting`` (the checks every way in shares), ``rollqueue`` (the order and
the worker), ``tower_supply`` (the tower's dice), ``views`` (rows as the API and events show
them). The roll log (:mod:`dicetower.firmware.rolllog`) and the event stream
(:mod:`dicetower.firmware.events`) are its peers; the HTTP server, MQTT and the hub use it.
"""

__all__: list[str] = []
