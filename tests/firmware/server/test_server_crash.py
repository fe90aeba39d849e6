"""``dicetower serve`` as a real process, killed with SIGKILL mid-roll and started again."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from dicetower.firmware.cli import main
from server_helpers import wait_for


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _get(url: str) -> dict:
    with urllib.request.urlopen(url, timeout=5) as r:
        return json.loads(r.read())


def _post(url: str, body: dict) -> dict:
    req = urllib.request.Request(
        url, data=json.dumps(body).encode(), headers={"content-type": "application/json"}, method="POST"
    )
    with urllib.request.urlopen(req, timeout=5) as r:
        return json.loads(r.read())


def _start(data: Path, port: int) -> subprocess.Popen:
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "dicetower.firmware.cli",
            "serve",
            "--port",
            str(port),
            "--data",
            str(data),
            "--rate",
            "0",
            "--rng",
            "--throw-time",
            "0.4",
            "--seed",
            "5",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )

    def ready():
        if proc.poll() is not None:
            raise AssertionError(f"server exited: {proc.stderr.read().decode() if proc.stderr else ''}")
        try:
            return _get(f"http://127.0.0.1:{port}/api/tower")
        except (urllib.error.URLError, ConnectionError):
            return None

    wait_for(ready, timeout=30, interval=0.1)
    return proc


def test_sigkill_mid_roll_loses_nothing(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data, port = tmp_path / "data", _free_port()
    base = f"http://127.0.0.1:{port}"
    proc = _start(data, port)
    try:
        committed = [_post(f"{base}/api/rolls", {"notation": "3d6", "roller": "Ann"})["id"] for _ in range(2)]
        wait_for(lambda: _get(f"{base}/api/rolls/{committed[-1]}")["status"] == "done")
        in_flight = _post(f"{base}/api/rolls", {"notation": "2d6", "roller": "Bo"})["id"]
        queued = _post(f"{base}/api/rolls", {"notation": "1d6", "roller": "Cy"})["id"]
        wait_for(lambda: _get(f"{base}/api/tower")["rolling"] == in_flight)
        before = {rid: _get(f"{base}/api/rolls/{rid}") for rid in committed}
    finally:
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(10)
        if proc.stderr:
            proc.stderr.close()
    assert main(["log", "verify", "--data", str(data)]) == 0  # the chain is whole even before restart
    assert "ok: 2 rows" in capsys.readouterr().out

    proc = _start(data, port)
    try:
        for rid in committed:
            after = _get(f"{base}/api/rolls/{rid}")
            assert after["status"] == "done" and after["hash"] == before[rid]["hash"]
            assert after["dice"] == before[rid]["dice"]
        lost = _get(f"{base}/api/rolls/{in_flight}")
        assert lost["status"] == "failed" and "while this roll was rolling" in lost["error"]
        waiting = _get(f"{base}/api/rolls/{queued}")
        assert waiting["status"] == "failed" and "was queued" in waiting["error"]
        new = _post(f"{base}/api/rolls", {"notation": "1d6"})["id"]
        assert new == queued + 1  # ids are never reused
        wait_for(lambda: _get(f"{base}/api/rolls/{new}")["status"] == "done")
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(20)
        if proc.stderr:
            proc.stderr.close()
    assert main(["log", "verify", "--data", str(data)]) == 0
    assert "ok: 5 rows" in capsys.readouterr().out
