"""The HTTP/WebSocket server, the OBS overlay, the roll log and the fairness statistics.

``rolllog`` and ``fairness`` (with its ``stats`` and ``rejects``) need nothing but the standard
library (the CLI's ``dicetower log`` and ``dicetower fairness`` use them without Starlette);
``app`` builds the Starlette application that ``dicetower serve`` runs with uvicorn.
"""

__all__: list[str] = []
