"""The tower's one service, run by its own command as systemd runs it (``dicetower serve --tower sim``).

Three ways in: the start button pressed on gpiozero's MockFactory pins (``--autopress``), ``POST
/api/rolls`` and a request over a real Mosquitto. Three ways out: the hash-chained roll log
(``dicetower log verify``), the rolls published to the broker, and the overlay in headless Chromium.
Every roll says which way it came (``via``), in the API and in the chained row. The test speaks only
HTTP, MQTT and the command line, so it holds whatever the modules behind them are called.
"""

from __future__ import annotations

import json
import signal
import time
from pathlib import Path
from typing import Any

import pytest
from dicetower.firmware.cli import main
from dicetower.firmware.mqtt.wire import check_event
from dicetower.firmware.rolllog import GENESIS
from mqtt_broker import Mosquitto, Probe, free_port
from mqtt_table import Process

pytestmark = pytest.mark.slow

REPLY_TO = "dicetower/_hub/test/replies"


def _until(predicate: Any, timeout_s: float = 60.0) -> Any:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        got = predicate()
        if got:
            return got
        time.sleep(0.1)
    raise AssertionError(f"not within {timeout_s} s")


def _finished(tower: Process, count: int) -> list[dict[str, Any]] | None:
    rolls = tower.get("/api/rolls?limit=50")["rolls"]
    done = [r for r in rolls if r["status"] in ("done", "failed")]
    return sorted(done, key=lambda r: r["id"]) if len(done) >= count else None


def test_a_press_an_http_roll_and_an_mqtt_request_are_rolls_of_one_service(
    broker: Mosquitto, browser: Any, tmp_path: Path
) -> None:
    port = free_port()
    data = tmp_path / "tower"
    args = ["serve", "--tower", "sim", "--sim-seed", "5", "--autopress", "--presses", "2"]
    args += [
        "--port",
        str(port),
        "--data",
        str(data),
        "--rate",
        "0",
        "--mqtt",
        broker.url,
        "--mqtt-tower",
        "t1",
    ]
    probe = Probe(broker.port, ["dicetower/t1/rolls", REPLY_TO])
    tower = Process("t1", args, port, tmp_path)
    page = browser.new_page(viewport={"width": 600, "height": 370})
    try:
        tower.wait_up()
        pressed = _until(lambda: _finished(tower, 2))  # the button pressed itself twice once serving
        assert [r["via"] for r in pressed] == ["button", "button"]
        assert [r["label"] for r in pressed] == ["4d6kh3", "4d6kh3"]  # [roll] default

        answer = tower.post("/api/rolls", {"notation": "2d6", "roller": "Ann"})
        assert answer.status_code == 202 and answer.json()["via"] == "http"
        _until(lambda: tower.get("/api/tower")["mqtt"]["connected"])
        time.sleep(0.3)  # the subscription to its requests goes out on connect
        request = {"request_id": "r1", "from": "gm", "reply_to": REPLY_TO, "roll": {"notation": "3d6"}}
        probe.publish("dicetower/t1/requests/gm", request)  # the requester is the topic's last level
        queued, done = probe.wait("replies", 2)
        assert queued["status"] == "queued" and queued["via"] == "mqtt" and done["status"] == "done"

        rolls = _until(lambda: _finished(tower, 4))
        ids = [r["id"] for r in rolls]
        assert [r["via"] for r in rolls] == ["button", "button", "http", "mqtt"]
        assert ids[2] == answer.json()["id"] and ids[3] == queued["id"]
        assert [tower.get(f"/api/rolls/{i}")["via"] for i in ids] == ["button", "button", "http", "mqtt"]
        assert tower.get("/api/tower")["button"]["accepted"] == 2

        published = _until(lambda: (got := probe.json("rolls")) and len({e["seq"] for e in got}) >= 4 and got)
        by_seq = {e["seq"]: e for e in published}
        last = GENESIS
        for roll_id in ids:  # in order, each chained to the one before, its way in inside the hashed row
            event = by_seq[roll_id]
            assert check_event(event, last).ok
            assert json.loads(event["row"]["request"])["via"] == rolls[ids.index(roll_id)]["via"]
            last = event["hash"]

        page.goto(f"http://127.0.0.1:{port}/overlay?history=4")
        page.wait_for_function(
            "id => document.querySelector('#current')?.dataset.rollId === String(id)", arg=ids[-1]
        )
        history = page.eval_on_selector_all("#history li", "els => els.map(e => e.dataset.rollId)")
        assert history == [str(i) for i in ids[-2::-1]]  # every way in, on the overlay
        outputs = {o["name"]: o for o in tower.get("/api/tower")["outputs"]}
        assert set(outputs) == {"overlay", "mqtt"}
        assert all(o["state"] == "ok" and o["dropped"] == 0 for o in outputs.values())
    finally:
        page.close()
        tower.stop()
        probe.close()
    # uvicorn ends a SIGTERM'd server by re-raising the signal once shut down: systemd counts that clean
    assert tower.proc.returncode in (0, -signal.SIGTERM), tower.log_path.read_text()[-2000:]
    assert main(["log", "verify", "--data", str(data)]) == 0
