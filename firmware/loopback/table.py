"""A table of real processes for the MQTT tests and ``bench/hub_load.py``: towers
(``dicetower serve --mqtt``), a hub (``dicetower hub``), and a WebSocket client of the hub's
overlay that counts what it receives."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import httpx

__all__ = ["HubWatcher", "Process", "start_hub", "start_tower"]

DICETOWER = [sys.executable, "-m", "dicetower.firmware.cli"]


class Process:
    """One child process with its HTTP port; its output goes to a file beside its data."""

    def __init__(self, name: str, args: list[str], port: int, folder: Path) -> None:
        self.name = name
        self.port = port
        self.base = f"http://127.0.0.1:{port}"
        folder.mkdir(parents=True, exist_ok=True)
        self.log_path = folder / f"{name}.log"
        with open(self.log_path, "ab") as out:
            env = {**os.environ, "PYTHONUNBUFFERED": "1"}
            self.proc = subprocess.Popen([*DICETOWER, *args], stdout=out, stderr=out, env=env)

    def wait_up(self, timeout_s: float = 60.0) -> Process:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"{self.name} exited: {self.log_path.read_text()[-2000:]}")
            with contextlib.suppress(httpx.HTTPError):
                httpx.get(self.base + "/favicon.ico", timeout=2)
                return self
            time.sleep(0.1)
        raise RuntimeError(f"{self.name} did not start within {timeout_s} s")

    def get(self, path: str) -> Any:
        return httpx.get(self.base + path, timeout=10).json()

    def post(self, path: str, body: dict[str, Any]) -> httpx.Response:
        return httpx.post(self.base + path, json=body, timeout=10)

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
            self.proc.wait(10)

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(20)
            except subprocess.TimeoutExpired:
                self.kill()


def start_tower(
    name: str, url: str, port: int, folder: Path, *, rng: bool = False, sign: bool = True
) -> Process:
    """``dicetower serve --mqtt`` as tower ``name``; ``sign=False`` (an RNG tower only) publishes
    unsigned, through a config file whose ``[mqtt] sign`` is off."""
    supply = ["--rng"] if rng else ["--tower", "sim"]
    if not sign:
        if not rng:
            raise ValueError("an unsigned tower is an RNG tower here")
        config = folder / f"{name}-unsigned.toml"
        folder.mkdir(parents=True, exist_ok=True)
        config.write_text("[mqtt]\nsign = false\n")
        supply += ["--config", str(config)]
    args = ["serve", *supply, "--mqtt", url, "--mqtt-tower", name, "--port", str(port)]
    return Process(name, [*args, "--data", str(folder / name), "--rate", "0"], port, folder)


def start_hub(
    url: str,
    port: int,
    folder: Path,
    *,
    trust: str = "first-use",
    keys: Path | None = None,
    log_cap_mb: float | None = None,
) -> Process:
    """``dicetower hub``; ``trust``: ``first-use`` (pin each tower's first key), ``unsigned``
    (take unsigned events) or ``ask`` (only the ``keys`` file's towers, new ones wait);
    ``log_cap_mb``: its ``--log-cap-mb``."""
    args = ["hub", "--mqtt", url, "--port", str(port), "--data", str(folder / "hub")]
    if log_cap_mb is not None:
        args += ["--log-cap-mb", f"{log_cap_mb:g}"]
    args += {"first-use": ["--trust-first-use"], "unsigned": ["--accept-unsigned"], "ask": []}[trust]
    if keys is not None:
        args += ["--tower-keys", str(keys)]
    return Process("hub", args, port, folder)


class HubWatcher:
    """A WebSocket client of the hub's ``/ws``, as the overlay is: every roll it is sent, with
    the time it came (bounded by ``limit``)."""

    def __init__(self, base: str, *, limit: int = 100_000) -> None:
        self.results: list[tuple[str, int, float, float]] = []  # tower, seq, finished_at, received
        self.limit = limit
        self.url = base.replace("http://", "ws://") + "/ws"
        self.closed_at: float | None = None
        self.why = ""
        self._ws: Any = None
        self._ready = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()
        if not self._ready.wait(30):
            raise RuntimeError(f"no WebSocket to {self.url}: {self.why}")

    def _run(self) -> None:
        from websockets.sync.client import connect

        try:
            # no keepalive pings, as a browser sends none: a loaded machine must not end the count early
            with connect(self.url, max_size=2**22, ping_interval=None) as ws:
                self._ws = ws
                self._ready.set()
                for text in ws:
                    now = time.time()
                    m = json.loads(text)
                    if m.get("type") == "result" and len(self.results) < self.limit:
                        roll = m["roll"]
                        self.results.append((m["tower"], roll["seq"], roll.get("finished_at") or 0.0, now))
                self.why = f"closed: {ws.close_code} {ws.close_reason}"
        except Exception as exc:  # the end, and why: for the test's message
            self.why = f"{type(exc).__name__}: {exc}"
        self.closed_at = time.time()

    def keys(self) -> list[tuple[str, int]]:
        return [(t, s) for t, s, _f, _r in list(self.results)]

    def close(self) -> None:
        if self._ws is not None:
            self._ws.close()
        self._thread.join(5)
