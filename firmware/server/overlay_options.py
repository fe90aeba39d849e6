"""The overlay's query options, checked by the server: an unknown ``theme`` or ``fields`` value is a
400 that names the option and lists what it may be.

Why on the server: the page itself cannot say much in OBS (a Browser source shows no console), and
an option it silently ignored left the owner guessing why ``?theme=neon`` looked dark or
``?fields=dice,totals`` hid the total. The lists here are the ones ``static/overlay.js`` applies and
docs/server.md documents.
"""

from __future__ import annotations

from collections.abc import Mapping

from ..web.guards import ApiError
from ..web.overlay_theme import QUOTED_CHARS, THEMES, check_theme

__all__ = ["FIELDS", "THEMES", "check_overlay_query"]

#: ``?fields=``: the parts of the overlay that can be shown (all by default)
FIELDS = ("dice", "total", "outcome", "roller", "odds", "history")


def check_overlay_query(query: Mapping[str, str]) -> None:
    """Refuse (400) a ``theme`` or a ``fields`` entry the overlay does not know; empty means the default.

    The theme is checked as the hub's overlay checks it (:mod:`dicetower.firmware.web.overlay_theme`).
    """
    check_theme(query)
    asked = [f.strip() for f in query.get("fields", "").split(",")]
    unknown = [f for f in asked if f and f not in FIELDS]
    if unknown:
        shown = ", ".join(repr(f[:QUOTED_CHARS]) for f in unknown[:5])
        verb = "is not one" if len(unknown) == 1 else "are not"
        raise ApiError(
            400, f"fields takes a comma list of {', '.join(FIELDS)}; {shown} {verb}", field_name="fields"
        )
