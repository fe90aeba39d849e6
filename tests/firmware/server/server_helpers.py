"""Helpers for the server tests: a real uvicorn on loopback in a thread, bounded polling."""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Iterator

from dicetower.firmware.server.app import ServerConfig, create_app

__all__ = ["live_server", "wait_for"]


@contextlib.contextmanager
def live_server(config: ServerConfig, port: int = 0) -> Iterator[str]:
    """``create_app(config)`` under a real uvicorn on 127.0.0.1, in a thread; yields its base URL."""
    import uvicorn

    server = uvicorn.Server(
        uvicorn.Config(
            create_app(config), host="127.0.0.1", port=port, log_level="warning", ws="websockets-sansio"
        )
    )
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            raise RuntimeError("uvicorn did not start")
        time.sleep(0.02)
    bound = server.servers[0].sockets[0].getsockname()[1]
    try:
        yield f"http://127.0.0.1:{bound}"
    finally:
        server.should_exit = True
        thread.join(20)


def wait_for(predicate, timeout: float = 10.0, interval: float = 0.02):
    """Poll ``predicate`` until it returns something truthy (bounded)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        got = predicate()
        if got:
            return got
        time.sleep(interval)
    raise AssertionError(f"timed out after {timeout} s")
