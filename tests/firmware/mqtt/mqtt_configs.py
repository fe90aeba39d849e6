"""Server configs for the MQTT tests: a tower that publishes to the test's broker, dice from a seeded RNG;
and a hub served by a real uvicorn in this process."""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Iterator
from pathlib import Path

from dicetower.firmware.hub.app import HubConfig, create_hub_app
from dicetower.firmware.mqtt.settings import MqttConfig
from dicetower.firmware.server.app import ServerConfig
from dicetower.firmware.server.rolling import RandomSupply


def tower_config(data_dir: Path, url: str, name: str = "t1", **mqtt: object) -> ServerConfig:
    return ServerConfig(
        data_dir=data_dir,
        supply_factory=lambda: RandomSupply(7),
        mqtt=MqttConfig(url=url, tower=name, **mqtt),  # type: ignore[arg-type]
        allowed_hosts=("testserver",),  # TestClient's Host
    )


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
