"""A real Mosquitto on a free loopback port, with a config written for it (no system service).

Tests and ``bench/hub_load.py`` start their own broker: the binary from Debian's ``mosquitto``
package (``.ci/run`` installs it). :func:`mosquitto_path` is None where it is missing, and the
tests that need it skip.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import socket
import subprocess
import threading
import time
from pathlib import Path
from typing import Any

__all__ = ["Mosquitto", "Probe", "free_port", "mosquitto_path"]


def mosquitto_path() -> str | None:
    return shutil.which("mosquitto") or next(
        (p for p in ("/usr/sbin/mosquitto", "/usr/local/sbin/mosquitto") if Path(p).is_file()), None
    )


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Mosquitto:
    """One broker process in ``folder``; :meth:`kill` and :meth:`start` again keep the port."""

    def __init__(self, folder: Path, *, port: int | None = None, persistence: bool = False) -> None:
        binary = mosquitto_path()
        if binary is None:
            raise FileNotFoundError("mosquitto is not installed (apt-get install mosquitto)")
        self.binary = binary
        self.folder = Path(folder)
        self.folder.mkdir(parents=True, exist_ok=True)
        self.port = port or free_port()
        self.conf = self.folder / "mosquitto.conf"
        stored = f"persistence true\npersistence_location {self.folder}/\n" if persistence else ""
        # as root, mosquitto would drop to its own user, who may not write this folder
        user = "user root\n" if os.geteuid() == 0 else ""
        self.conf.write_text(
            f"listener {self.port} 127.0.0.1\nallow_anonymous true\n{stored or 'persistence false'}\n"
            f"{user}max_queued_messages 100000\nlog_dest stderr\n"
            "log_type error\nlog_type warning\nlog_type notice\n"
        )
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"mqtt://127.0.0.1:{self.port}"

    def start(self, timeout_s: float = 10.0) -> Mosquitto:
        with open(self.folder / "mosquitto.log", "ab") as log:
            self.proc = subprocess.Popen(
                [self.binary, "-c", str(self.conf)], stdout=subprocess.DEVNULL, stderr=log
            )
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"mosquitto exited with {self.proc.returncode}; see {self.folder}")
            with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", self.port), 0.2):
                return self
            time.sleep(0.05)
        raise RuntimeError(f"mosquitto did not listen on port {self.port} within {timeout_s} s")

    @property
    def pid(self) -> int | None:
        return None if self.proc is None else self.proc.pid

    def kill(self) -> None:
        """SIGKILL: the broker vanishes with whatever it held in memory."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
            self.proc.wait(10)
        self.proc = None

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(10)
        self.proc = None

    def __enter__(self) -> Mosquitto:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


class Probe:
    """A paho subscriber that keeps every message it gets (bounded) for a test to read.

    ``session`` names a persistent session (the broker queues for it while it is away);
    None: a clean one.
    """

    def __init__(self, port: int, topics: list[str], *, session: str | None = None, limit: int = 100_000):
        import paho.mqtt.client as mqtt

        self.topics = topics
        self.limit = limit
        self.messages: list[tuple[str, bytes]] = []
        self._lock = threading.Lock()
        self.client = mqtt.Client(
            mqtt.CallbackAPIVersion.VERSION2,
            client_id=session or f"probe-{port}-{id(self)}",
            clean_session=session is None,
        )
        self.client.reconnect_delay_set(1, 2)
        self.client.on_connect = self._on_connect
        self.client.on_message = self._on_message
        self.subscribed = threading.Event()
        self.client.connect("127.0.0.1", port)
        self.client.loop_start()
        if not self.subscribed.wait(10):
            raise RuntimeError("the probe did not subscribe")

    def _on_connect(self, client: Any, userdata: Any, flags: Any, reason: Any, props: Any) -> None:
        client.subscribe([(t, 1) for t in self.topics])
        self.subscribed.set()

    def _on_message(self, client: Any, userdata: Any, message: Any) -> None:
        with self._lock:
            if len(self.messages) < self.limit:
                self.messages.append((message.topic, bytes(message.payload)))

    def json(self, leaf: str) -> list[dict[str, Any]]:
        """The JSON messages on topics ending in ``/leaf``, in arrival order."""
        with self._lock:
            return [json.loads(p) for t, p in self.messages if t.endswith("/" + leaf)]

    def wait(self, leaf: str, count: int, timeout_s: float = 30.0) -> list[dict[str, Any]]:
        """At least ``count`` messages on ``leaf`` (bounded wait; returns what came)."""
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            got = self.json(leaf)
            if len(got) >= count:
                return got
            time.sleep(0.05)
        return self.json(leaf)

    def publish(self, topic: str, message: dict[str, Any]) -> None:
        self.client.publish(topic, json.dumps(message), qos=1).wait_for_publish(10)

    def close(self) -> None:
        self.client.disconnect()
        self.client.loop_stop()
