"""``serve`` and ``hub`` bind before they announce, say what to do when the port is taken, and a client
that leaves mid-body leaves no traceback in the log."""

from __future__ import annotations

import logging
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from dicetower.firmware.cli import main
from dicetower.firmware.server.app import ServerConfig
from dicetower.firmware.server.listen import ListenError, bind_listener
from server_helpers import live_server, wait_for


@pytest.fixture
def busy_port() -> Iterator[int]:
    """A port another process (here: this one) is listening on."""
    with socket.socket() as other:
        other.bind(("127.0.0.1", 0))
        other.listen()
        yield other.getsockname()[1]


@pytest.mark.parametrize("command", [["serve", "--rng"], ["hub", "--mqtt", "mqtt://127.0.0.1:9"]])
def test_a_busy_port_is_named_with_what_to_do_and_nothing_is_announced(
    command: list[str], busy_port: int, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main([*command, "--port", str(busy_port), "--data", str(tmp_path / "data")])
    err = capsys.readouterr().err
    assert code == 1
    assert err.splitlines()[-1] == (
        f"dicetower: error: cannot listen on 127.0.0.1:{busy_port}: the port is in use: give another --port,"
        " or stop the process that listens on it (ss -ltnp shows which)"
    )
    assert "serving on" not in err and "hub on" not in err and "Traceback" not in err


def test_other_bind_failures_say_what_to_do() -> None:
    with pytest.raises(ListenError, match=r"on 192\.0\.2\.77:8080: this machine has no such address"):
        bind_listener("192.0.2.77", 8080)  # TEST-NET-1: never this machine's
    with pytest.raises(ListenError, match=r"--port must be 0\.\.65535"):
        bind_listener("127.0.0.1", 70000)


@pytest.mark.slow
def test_serve_announces_the_port_it_bound_once_it_serves(tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    args = [sys.executable, "-m", "dicetower.firmware.cli", "serve", "--rng", "--port", "0"]
    with subprocess.Popen(
        [*args, "--data", str(tmp_path / "data")], stderr=subprocess.PIPE, text=True, env=env
    ) as proc:
        try:
            line = proc.stderr.readline() if proc.stderr else ""
            assert line.startswith("dicetower: serving on http://127.0.0.1:"), line
            port = int(line.split("127.0.0.1:", 1)[1].split(" ", 1)[0])
            assert port != 0  # the port it bound, not the one asked for
            assert httpx.get(f"http://127.0.0.1:{port}/api/tower", timeout=10).status_code == 200
        finally:
            proc.terminate()
            proc.wait(20)


@pytest.mark.slow
def test_a_client_that_leaves_mid_body_leaves_no_traceback(
    config: ServerConfig, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.DEBUG), live_server(config) as base:
        port = int(base.rsplit(":", 1)[1])
        for path in ("/api/rolls", "/api/teach/white-d6"):
            with socket.create_connection(("127.0.0.1", port), timeout=10) as s:
                s.sendall(
                    f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                    'Content-Length: 1000\r\n\r\n{"notation": '.encode()
                )
                time.sleep(0.2)  # the server is waiting for the rest of the body
        wait_for(lambda: "went away" in caplog.text)
        assert httpx.get(f"{base}/api/tower", timeout=10).status_code == 200  # and it goes on
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING or r.exc_info], caplog.text
