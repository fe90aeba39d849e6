"""Helpers for the server tests: a real uvicorn on loopback in a thread, bounded polling, screenshots.

Screenshots go to ``out/screenshots/`` (git-ignored test artefacts); the copies in ``docs/img/``
that the docs show are refreshed by running with ``DICETOWER_UPDATE_DOCS_IMG=1``.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from dicetower.firmware.server.app import ServerConfig, create_app

__all__ = ["live_server", "shot", "wait_for"]

REPO = Path(__file__).resolve().parents[3]
SHOTS = REPO / "out" / "screenshots"
DOCS_IMG = REPO / "docs" / "img"


def shot(page: Any, name: str, **kw: Any) -> Path:
    """Screenshot ``page`` to ``out/screenshots/NAME`` (and ``docs/img/`` when asked to)."""
    SHOTS.mkdir(parents=True, exist_ok=True)
    path = SHOTS / name
    page.screenshot(path=str(path), **kw)
    if os.environ.get("DICETOWER_UPDATE_DOCS_IMG"):
        DOCS_IMG.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, DOCS_IMG / name)
    return path


@contextlib.contextmanager
def live_server(config: ServerConfig, port: int = 0, **listen: Any) -> Iterator[str]:
    """``create_app(config)`` under a real uvicorn on 127.0.0.1, in a thread; yields its base URL.

    uvicorn gets the settings and the listening socket ``dicetower serve`` uses (``listen.py``);
    ``listen`` changes the socket's options (``stalled_peer_s``, ``send_buffer_bytes``).
    """
    import uvicorn
    from dicetower.firmware.server.listen import listening_socket, uvicorn_config

    sock = listening_socket("127.0.0.1", port, **listen)
    server = uvicorn.Server(uvicorn_config(create_app(config), "127.0.0.1", port))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
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
        sock.close()


def wait_for(predicate, timeout: float = 10.0, interval: float = 0.02):
    """Poll ``predicate`` until it returns something truthy (bounded)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        got = predicate()
        if got:
            return got
        time.sleep(interval)
    raise AssertionError(f"timed out after {timeout} s")
