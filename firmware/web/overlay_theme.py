"""An overlay's look, as its URL asks for it: ``?theme=`` and ``?scale=``, the same on the tower's
overlay and the hub's.

Why the server checks ``theme``: the page itself cannot say much in OBS (a Browser source shows no
console), and a theme it silently ignored left the owner guessing why ``?theme=neon`` looked dark.
``scale`` is clamped by the page (:data:`SCALE_MIN` to :data:`SCALE_MAX`; not a number is 1), as
both ``overlay.js`` files do.
"""

from __future__ import annotations

from collections.abc import Mapping

from .guards import ApiError

__all__ = ["QUOTED_CHARS", "SCALE_MAX", "SCALE_MIN", "THEMES", "check_theme"]

#: ``?theme=``: the first is the default
THEMES = ("dark", "light", "glass")
#: ``?scale=``: the overlay's size, clamped to this range by the page
SCALE_MIN, SCALE_MAX = 0.25, 4.0
#: characters of a refused value quoted back
QUOTED_CHARS = 40


def check_theme(query: Mapping[str, str]) -> None:
    """Refuse (400) a ``theme`` the overlays do not know; empty means the default."""
    theme = query.get("theme", "").strip()
    if theme and theme not in THEMES:
        raise ApiError(
            400, f"theme must be one of {', '.join(THEMES)}; got {theme[:QUOTED_CHARS]!r}", field_name="theme"
        )
