"""Outputs plug in: each gets every event in order; one that is slow or fails holds no roll and says so."""

from __future__ import annotations

import asyncio
from dataclasses import replace
from typing import Any, ClassVar

from dicetower.firmware.outputs import OUTPUTS
from dicetower.firmware.rolls.outputs import Output, OutputEvent
from dicetower.firmware.server.app import ServerConfig, create_app
from server_helpers import wait_for
from starlette.testclient import TestClient


class Recording(Output):
    """Keeps what it is sent (class-wide: the lifespan makes the instance)."""

    name = "recording"
    seen: ClassVar[list[tuple[str, int]]] = []

    async def send(self, event: OutputEvent) -> None:
        Recording.seen.append((event.type, event.data["id"]))


class Failing(Output):
    name = "failing"

    async def send(self, event: OutputEvent) -> None:
        raise ConnectionError("the bridge is down")


class Stuck(Output):
    """Never finishes a send: its first send times out, its small queue fills."""

    name = "stuck"
    queue_size = 2
    send_timeout_s = 60.0
    behind_calls: ClassVar[list[int]] = []

    async def send(self, event: OutputEvent) -> None:
        await asyncio.sleep(3600)

    def fell_behind(self) -> None:
        Stuck.behind_calls.append(1)


def _roll_all(client: TestClient, count: int) -> list[int]:
    ids = [client.post("/api/rolls", json={"notation": "2d6"}).json()["id"] for _ in range(count)]
    wait_for(lambda: client.get("/api/tower").json()["rolled"] == count, timeout=20)
    return ids


def test_an_output_gets_every_event_in_order(config: ServerConfig) -> None:
    Recording.seen.clear()
    with TestClient(create_app(replace(config, rate_per_second=0, outputs=(*OUTPUTS, Recording)))) as client:
        ids = _roll_all(client, 3)
        wait_for(lambda: ("result", ids[-1]) in Recording.seen)
        outputs = {o["name"]: o for o in client.get("/api/tower").json()["outputs"]}
    results = [rid for kind, rid in Recording.seen if kind == "result"]
    assert results == ids
    for rid in ids:  # each roll's events in their order: queued, rolling, settled, result
        kinds = [kind for kind, i in Recording.seen if i == rid]
        assert kinds == ["queued", "rolling", "settled", "result"], kinds
    assert outputs["recording"]["state"] == "ok" and outputs["recording"]["sent"] == len(Recording.seen)
    assert "mqtt" not in outputs  # off without [mqtt] url


def test_a_failing_and_a_stuck_output_hold_no_roll_and_say_so(config: ServerConfig) -> None:
    Stuck.behind_calls.clear()
    app = create_app(replace(config, rate_per_second=0, outputs=(*OUTPUTS, Failing, Stuck)))
    with TestClient(app) as client:
        ids = _roll_all(client, 4)  # within the wait: neither output holds the roll cycle
        assert [client.get(f"/api/rolls/{i}").json()["status"] for i in ids] == ["done"] * 4
        outputs = {o["name"]: o for o in client.get("/api/tower").json()["outputs"]}
    assert outputs["overlay"]["state"] == "ok" and outputs["overlay"]["sent"] == 16
    failing = outputs["failing"]
    assert failing["state"] == "failing" and failing["failed"] == 16 and failing["sent"] == 0
    assert failing["last_error"] == "the bridge is down"
    stuck = outputs["stuck"]
    assert stuck["state"] == "behind" and stuck["dropped"] == 16 - 1 - 2  # one in its send, two waiting
    assert stuck["waiting"] == 2 and stuck["sent"] == 0


def test_a_send_that_times_out_counts_as_too_slow_and_the_output_goes_on(config: ServerConfig) -> None:
    class Slow(Output):
        name = "slow"
        send_timeout_s = 0.05
        sends: ClassVar[list[str]] = []

        async def send(self, event: OutputEvent) -> None:
            Slow.sends.append(event.type)
            if event.type == "rolling":
                await asyncio.sleep(5)

    with TestClient(create_app(replace(config, rate_per_second=0, outputs=(Slow,)))) as client:
        _roll_all(client, 2)
        status: dict[str, Any] = wait_for(
            lambda: (o := client.get("/api/tower").json()["outputs"][0])["sent"] == 6 and o
        )
    assert status["failed"] == 2 and status["last_error"] == "too slow" and status["state"] == "ok"
    assert sorted(Slow.sends) == sorted(["queued", "rolling", "settled", "result"] * 2)  # none skipped
