"""The tower's HTTP and WebSocket face: the API, the OBS overlay, the fairness and teach pages.

The rolls themselves are the roll service's (:mod:`dicetower.firmware.rolls`), the log is
:mod:`dicetower.firmware.rolllog` and the event stream :mod:`dicetower.firmware.events`; this
package only speaks HTTP and WebSocket over them. ``fairness`` (with its ``stats`` and
``rejects``) needs nothing but the standard library (``dicetower fairness`` uses it without
Starlette); ``app`` builds the Starlette application that ``dicetower serve`` runs with uvicorn.
"""

__all__: list[str] = []
