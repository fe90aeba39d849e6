"""What the tower's server and the hub's page share as HTTP servers: refusals, the token check,
the JSON body reader, rate limits, the security middleware and the overlays' themes.

Why a package of its own: the hub is an HTTP app of its own, and it guards its endpoints as the
tower's server does; it borrows these pieces from here, not from the tower's server.
"""

__all__: list[str] = []
