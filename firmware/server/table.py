"""The table's HTTP side: its code, the ``/table`` page for phones and the corrections endpoint.

Who may act from the table: whoever holds the server's token, or the players' code
(``DATA/table-code``, made beside the token when the server needs one). The players' code allows
only the table's acts (a correction, an answer to a die the tower could not read), never a roll:
a phone left on the table cannot drive the solenoid. On loopback without ``--require-token``
neither is asked for, as with rolling.
"""

from __future__ import annotations

import hmac
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from starlette.requests import Request
from starlette.responses import FileResponse, JSONResponse, Response
from starlette.routing import Route

from ..rolls.corrections import DEFAULT_WINDOW_S, CorrectionDesk
from ..web.guards import ApiError, json_body
from .clients import client_address

__all__ = ["TABLE_CODE_FILE", "TableCodes", "TableSettings", "check_table_code", "table_routes"]

#: the players' code's file in the data directory (mode 0600)
TABLE_CODE_FILE = "table-code"
#: SQLite's largest id: a larger one in a URL is no roll
_MAX_ROLL_ID = 2**63 - 1


@dataclass(frozen=True)
class TableSettings:
    """``[roll]``'s table keys: how long a roll may be corrected."""

    correct_window_s: float = DEFAULT_WINDOW_S


@dataclass(frozen=True)
class TableCodes:
    """The codes that open the table: the server's token and the players' code (None: no code needed)."""

    token: str | None = None
    players: str | None = None

    @property
    def required(self) -> bool:
        return self.token is not None


def check_table_code(given: str | None, codes: TableCodes) -> None:
    """Refuse (401) unless ``given`` is the server's token or the players' code, when one is needed."""
    if not codes.required:
        return
    if not given:
        raise ApiError(
            401, "the table needs its code: Authorization: Bearer CODE", field_name="authorization"
        )
    for code in (codes.token, codes.players):
        if code and hmac.compare_digest(given.encode(), code.encode()):
            return
    raise ApiError(401, "that is not this table's code", field_name="authorization")


def _bearer(request: Request) -> str | None:
    scheme, _, value = request.headers.get("authorization", "").partition(" ")
    return value.strip() if scheme.lower() == "bearer" and value.strip() else None


def _desk(request: Request) -> tuple[CorrectionDesk, TableCodes]:
    state = request.state.server
    desk: CorrectionDesk = state.corrections
    codes: TableCodes = state.table_codes
    return desk, codes


def _client(request: Request) -> str:
    """The client to rate-limit and record, as the roll endpoints name it (``clients.py``)."""
    peer = request.client.host if request.client else None
    return client_address(peer, request.headers.getlist("x-forwarded-for"), request.state.server.proxies)


async def post_correction(request: Request) -> Response:
    desk, codes = _desk(request)
    check_table_code(_bearer(request), codes)
    roll_id: int = request.path_params["roll_id"]
    if roll_id > _MAX_ROLL_ID:
        raise ApiError(404, f"no roll {str(roll_id)[:24]}...", field_name="roll_id")
    body = await json_body(request, "the correction")
    view = await desk.correct(roll_id, body, _client(request))
    url = f"/api/rolls/{roll_id}"
    return JSONResponse(view, status_code=201, headers={"Location": url})


def _page(name: str) -> Path:
    return Path(str(resources.files(__package__) / "static" / name))


async def table_page(request: Request) -> Response:
    return FileResponse(_page("table.html"), media_type="text/html")


def table_routes() -> list[Route]:
    """The page and the corrections endpoint."""
    return [
        Route("/table", table_page),
        Route("/api/rolls/{roll_id:int}/corrections", post_correction, methods=["POST"]),
    ]
