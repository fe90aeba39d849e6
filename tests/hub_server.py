"""The hub's app under a real uvicorn on loopback, in a thread of the test's process (the MQTT tests and
the table's end-to-end test)."""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Iterator

from dicetower.firmware.hub.app import HubConfig, create_hub_app

__all__ = ["live_hub"]


@contextlib.contextmanager
def live_hub(config: HubConfig) -> Iterator[str]:
    import uvicorn

    server = uvicorn.Server(
        uvicorn.Config(
            create_hub_app(config), host="127.0.0.1", port=0, log_level="warning", ws="websockets-sansio"
        )
    )
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started:
        assert thread.is_alive() and time.monotonic() < deadline, "the hub did not start"
        time.sleep(0.02)
    try:
        yield f"http://127.0.0.1:{server.servers[0].sockets[0].getsockname()[1]}"
    finally:
        server.should_exit = True
        thread.join(20)
