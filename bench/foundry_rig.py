"""The Foundry module's rig: a real tower (``dicetower serve --tower sim``) and a static page server on
loopback, used by ``bench/foundry_e2e.py`` and by tests/foundry (which load this file as a module). The
module runs in Chromium under the fake of Foundry's documented API (``foundry/test/harness.html``) and talks
to the tower across origins (CORS)."""

from __future__ import annotations

import contextlib
import functools
import http.server
import json
import os
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import ClassVar

__all__ = ["HARNESS", "REPO", "TRAY_TOML", "free_port", "get_json", "page_server", "sim_tower"]

REPO = Path(__file__).resolve().parents[1]

#: the page that loads the module under the fake Foundry, as a path on the page server
HARNESS = "/foundry/test/harness.html"

#: the simulated tray of the end-to-end roll ``2d20kh + 1d6``
TRAY_TOML = '[dice]\nplain = ["2 blue d20", "white d6"]\n'


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class _Static(http.server.SimpleHTTPRequestHandler):
    extensions_map: ClassVar[dict[str, str]] = {
        **http.server.SimpleHTTPRequestHandler.extensions_map,
        ".mjs": "text/javascript",
    }

    def log_message(self, *args: object) -> None:  # the test's output stays the test's
        pass


@contextlib.contextmanager
def page_server() -> Iterator[str]:
    """The repository over HTTP on loopback (the harness page and the module's files); yields its origin."""
    handler = functools.partial(_Static, directory=str(REPO))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def get_json(url: str, timeout: float = 10.0) -> dict:
    with urllib.request.urlopen(url, timeout=timeout) as response:
        return json.load(response)


@contextlib.contextmanager
def sim_tower(data: Path, *extra: str) -> Iterator[str]:
    """``dicetower serve --tower sim`` with the two-d20-and-a-d6 tray, as a process; yields its URL."""
    data.mkdir(parents=True, exist_ok=True)
    config = data / "tower.toml"
    config.write_text(TRAY_TOML, encoding="utf-8")
    port = free_port()
    command = [sys.executable, "-m", "dicetower.firmware.cli", "serve", "--tower", "sim"]
    command += ["--config", str(config), "--port", str(port), "--data", str(data / "log"), *extra]
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    log = data / "serve.log"
    with log.open("w", encoding="utf-8") as out:
        process = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT, env=env)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            if process.poll() is not None:
                raise RuntimeError(f"the tower exited: {log.read_text(encoding='utf-8')[-2000:]}")
            try:
                get_json(f"{url}/api/tower", timeout=2)
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.2)
        yield url
    finally:
        process.terminate()
        try:
            process.wait(20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
