"""The tower's service under a ``Type=notify`` unit: ``dicetower serve`` speaks sd_notify to a real socket."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest


@pytest.fixture
def notify_socket() -> Iterator[tuple[socket.socket, str]]:
    # a short folder of its own: AF_UNIX paths are limited to 107 bytes
    directory = tempfile.mkdtemp(prefix="dt-serve-notify-")
    path = os.path.join(directory, "notify")
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    try:
        sock.bind(path)
        sock.settimeout(30.0)
        yield sock, path
    finally:
        sock.close()
        shutil.rmtree(directory)


def _messages(sock: socket.socket, until: str, timeout_s: float = 60.0) -> list[str]:
    got: list[str] = []
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        got.append(sock.recv(65536).decode())
        if got[-1].startswith(until):
            return got
    raise AssertionError(f"no {until} within {timeout_s} s: {got}")


def test_serve_says_ready_pings_the_watchdog_reports_status_and_says_stopping(
    notify_socket: tuple[socket.socket, str], tmp_path: Path
) -> None:
    sock, path = notify_socket
    env = {**os.environ, "NOTIFY_SOCKET": path, "WATCHDOG_USEC": "2000000"}  # a tick a second
    argv = ["serve", "--tower", "sim", "--port", "0", "--data", str(tmp_path / "data"), "--autopress"]
    log = tmp_path / "serve.log"
    with log.open("wb") as out:
        child = subprocess.Popen(
            [sys.executable, "-m", "dicetower.firmware.cli", *argv], stdout=out, stderr=out, env=env
        )
    try:
        before = _messages(sock, "READY=1")
        assert before == [
            "READY=1"
        ]  # nothing before it: ready means the log, tower, outputs and button are up
        after = _messages(sock, "WATCHDOG=1") + _messages(sock, "WATCHDOG=1")
        statuses = [m for m in after if m.startswith("STATUS=")]
        assert statuses and statuses[0].startswith(("STATUS=idle", "STATUS=rolling"))
        deadline = time.monotonic() + 60
        while "STATUS=idle: 1 rolled, 0 failed" not in statuses:  # the press was rolled
            assert time.monotonic() < deadline, statuses
            statuses += [m for m in _messages(sock, "WATCHDOG=1") if m.startswith("STATUS=")]
        child.terminate()
        assert _messages(sock, "STOPPING=1")[-1] == "STOPPING=1"
        child.wait(60)
    except AssertionError as exc:
        raise AssertionError(f"{exc}\n{log.read_text()[-2000:]}") from None
    finally:
        if child.poll() is None:
            child.kill()
            child.wait(10)
