"""The one JSON error document every server answers with (the tower's and the hub's):
``{"error": {"status", "field", "message", ...}}``, so a client reads every refusal the same way."""

from __future__ import annotations

from typing import Any

from starlette.responses import JSONResponse

__all__ = ["error_response"]


def error_response(status: int, message: str, field_name: str | None = None, **extra: Any) -> JSONResponse:
    """The API's error document; ``retry_after`` in ``extra`` also sets the ``Retry-After`` header."""
    body: dict[str, Any] = {"status": status, "field": field_name, "message": message, **extra}
    headers = {"Retry-After": str(extra["retry_after"])} if "retry_after" in extra else None
    return JSONResponse({"error": body}, status_code=status, headers=headers)
