"""Benchmark: ``dicetower serve`` under load on loopback — many overlay clients while rolls pour in.

Usage::

    .venv/bin/python bench/serve_load.py [--duration 600] [--clients 50] [--slow-clients 200] [--rate 10]
        [--roller sim|rng]

Starts ``dicetower serve`` as a child process on 127.0.0.1 (a temporary data directory; the
sim tower with its virtual clock, so shake and settle waits are zero, or the RNG), connects
``--clients`` WebSocket clients to ``/ws`` as the overlay does, and ``--slow-clients`` that
complete the handshake and never read a byte (each connects again after ``--slow-lifetime``
seconds, so that many are always open), polls ``/api/tower`` twice a second, and posts ``--rate`` rolls
a second for ``--duration`` seconds (at most 64 awaiting their answer; a mix of notation and system
checks; every ``--big-every``th a large roll, ``--big``, whose document is about 170 KB for
``1000d1000``). It prints:

* events: how many each client got, and how many it lost — a gap in the sequence numbers,
  a snapshot that skipped some after a reconnect,
  or an event short of the server's last sequence number at the end (both must be 0);
* event latency: publish time (stamped by the server) to receipt, p50/p99/max over all clients;
* rolls: posted, accepted (202), refused because the queue was full (503), finished, failed;
* server memory: resident set size every 10 s; the second minute (after warm-up) against the last;
* ``/api/tower``: its latency p50/p99/max while all this goes on, polled from a process of its
  own (this script's event loop is busy with its clients); the slow clients the server
  dropped and how often they reconnected; rolls lost (accepted, never finished nor failed);
* CPU seconds used by the server and by this script.

The named baseline is the same load on the RNG roller (``--roller rng``): it costs the
server nothing to roll, so the difference is the tower's share. Loopback only; bounded: each
client keeps counters, not events.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import json
import multiprocessing
import os
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from typing import Any

import httpx
import websockets

__all__ = ["main"]

REQUESTS = (
    {"notation": "4d6kh3+2", "roller": "load"},
    {"notation": "3d6", "roller": "load"},
    {
        "system": "runic-flux",
        "check": "skill",
        "params": {"level": 3, "stat": 4, "difficulty": 15},
        "roller": "load",
    },
    {"system": "wizard-quest", "check": "pool", "params": {"level": 3}, "roller": "load"},
    {"notation": "2d6+1", "roller": "load"},
)


@dataclass
class Client:
    received: int = 0
    gaps: int = 0
    first_seq: int | None = None
    last_seq: int = 0
    latencies: list[float] = field(default_factory=list)
    disconnects: int = 0
    resyncs: int = 0


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _rss_mb(pid: int) -> float:
    with open(f"/proc/{pid}/status") as fh:
        for line in fh:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def _cpu_s(pid: int) -> float:
    with open(f"/proc/{pid}/stat") as fh:
        parts = fh.read().rsplit(")", 1)[1].split()
    return (int(parts[11]) + int(parts[12])) / os.sysconf("SC_CLK_TCK")


async def _client(url: str, c: Client, stop: asyncio.Event) -> None:
    """One overlay: reads every event, checks sequence numbers, notes latency (sampled).

    Closed by the server (it fell behind), it connects again with ``since`` and ``epoch`` as the
    overlay does, and catches up from the ring; a snapshot instead (the ring no longer holds what
    it missed) is counted in ``resyncs``, the events it skipped in ``gaps``.
    """
    epoch: str | None = None
    while not stop.is_set():
        resume = f"&since={c.last_seq}&epoch={epoch}" if epoch else ""
        try:
            async with websockets.connect(url + resume, max_size=2**22) as ws:
                while not stop.is_set():
                    try:
                        raw = await asyncio.wait_for(ws.recv(), timeout=0.5)
                    except TimeoutError:
                        continue
                    now = time.time()
                    msg = json.loads(raw)
                    if msg.get("type") == "snapshot":
                        if epoch is not None:
                            c.resyncs += 1
                            c.gaps += max(0, msg["seq"] - c.last_seq)
                        epoch = msg["epoch"]
                        c.last_seq = msg["seq"]
                        continue
                    seq = msg.get("seq")
                    if msg.get("type") == "hello" or not isinstance(seq, int):
                        epoch = msg.get("epoch", epoch)
                        continue
                    if seq <= c.last_seq:
                        continue  # a replay overlapping what it had
                    if seq != c.last_seq + 1:
                        c.gaps += seq - c.last_seq - 1
                    c.last_seq = seq
                    c.received += 1
                    if c.received % 4 == 0 and len(c.latencies) < 200_000:  # sampled: bounded memory
                        c.latencies.append(now - msg["time"])
        except (websockets.ConnectionClosed, OSError):
            c.disconnects += 1
            await asyncio.sleep(0.5)


_ESTABLISHED = 1  #: ``tcpi_state`` of a live TCP connection (linux/tcp_states.h)


def _alive(sock: socket.socket) -> bool:
    """Whether the connection is still established, asked of the kernel (reading would drain it)."""
    try:
        return sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_INFO, 1)[0] == _ESTABLISHED
    except OSError:
        return False


async def _slow_client(port: int, stop: asyncio.Event, counts: dict[str, int], lifetime: float) -> None:
    """Connects to ``/ws`` and never reads; connects again after ``lifetime`` s or once the connection died.

    Why a lifetime: a client that reads nothing cannot see the server close it (the close waits
    behind the bytes it never took), so it holds its end open; the bench drops it and comes
    back, to keep this many connections open on the client's side all the time.
    """
    while not stop.is_set():
        _, writer = await asyncio.open_connection("127.0.0.1", port)
        key = base64.b64encode(os.urandom(16)).decode()
        writer.write(
            f"GET /ws?last=0 HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n".encode()
        )
        await writer.drain()
        sock = writer.get_extra_info("socket")
        writer.transport.pause_reading()  # never read: the kernel's receive buffer fills, then the server's
        counts["connects"] += 1
        until = time.monotonic() + lifetime
        while not stop.is_set() and _alive(sock) and time.monotonic() < until:
            await asyncio.sleep(1.0)
        writer.transport.abort()


def _poll_tower(base: str, stop: Any, out: Any) -> None:
    """``GET /api/tower`` twice a second, in a process of its own; its latency is what an operator sees.

    A process of its own: the bench's event loop is busy with its overlay clients, and a poll
    answered while that loop is busy would be timed late. Sends ``(latencies, clients)`` to ``out``.
    """
    took: list[float] = []
    clients: list[int] = []
    with httpx.Client(base_url=base, timeout=60) as http:
        while not stop.is_set():
            t0 = time.perf_counter()
            r = http.get("/api/tower")
            took.append(time.perf_counter() - t0)
            clients.append(r.json()["events"]["clients"])
            stop.wait(0.5)
    out.send((took, clients))


async def _run(args: argparse.Namespace, base: str, pid: int) -> dict:
    clients = [Client() for _ in range(args.clients)]
    stop = asyncio.Event()
    ws_url = base.replace("http", "ws") + "/ws?last=0"
    tasks = [asyncio.create_task(_client(ws_url, c, stop)) for c in clients]
    slow_counts = {"connects": 0}
    port = int(base.rsplit(":", 1)[1])
    slow = [
        asyncio.create_task(_slow_client(port, stop, slow_counts, args.slow_lifetime))
        for _ in range(args.slow_clients)
    ]
    spawn = multiprocessing.get_context("spawn")
    poll_stop = spawn.Event()
    poll_in, poll_out = spawn.Pipe(duplex=False)
    poller = spawn.Process(target=_poll_tower, args=(base, poll_stop, poll_out), daemon=True)
    poller.start()
    in_flight = asyncio.Semaphore(64)  # posts waiting for their answer at once (the rate holds under load)
    posts: set[asyncio.Task[None]] = set()
    await asyncio.sleep(1.0)
    codes: dict[int, int] = {}
    rss: list[tuple[float, float]] = []
    t0 = time.monotonic()
    next_rss = t0
    posted = 0

    async def post(http: httpx.AsyncClient, body: dict[str, Any]) -> None:
        async with in_flight:
            try:
                status = (await http.post("/api/rolls", json=body)).status_code
            except httpx.TransportError:
                status = 0  # no answer (a kept-alive connection the server closed as it was reused)
        codes[status] = codes.get(status, 0) + 1

    limits = httpx.Limits(max_connections=80)
    async with httpx.AsyncClient(base_url=base, timeout=60, limits=limits) as http:
        while (now := time.monotonic()) - t0 < args.duration:
            due = int((now - t0) * args.rate) + 1
            while posted < due:
                big = args.big_every and posted % args.big_every == args.big_every - 1
                body = {"notation": args.big, "roller": "big"} if big else REQUESTS[posted % len(REQUESTS)]
                task = asyncio.create_task(post(http, body))
                posts.add(task)
                task.add_done_callback(posts.discard)
                posted += 1
            if now >= next_rss:
                rss.append((now - t0, _rss_mb(pid)))
                next_rss += 10
            await asyncio.sleep(max(0.0, t0 + posted / args.rate - time.monotonic()))
        await asyncio.gather(*posts)
        for _ in range(600):  # let the queue drain (bounded)
            tower = (await http.get("/api/tower")).json()
            if tower["queue_length"] == 0 and tower["rolling"] is None:
                break
            await asyncio.sleep(0.1)
        await asyncio.sleep(1.5)
        tower = (await http.get("/api/tower")).json()
        stop.set()
        poll_stop.set()
        tower_took, following = poll_in.recv() if poll_in.poll(70) else ([], [])
        poller.join(10)
    rss.append((time.monotonic() - t0, _rss_mb(pid)))
    await asyncio.gather(*tasks, *slow, return_exceptions=True)
    final_seq = tower["events"]["seq"]
    lost = sum(c.gaps + max(0, final_seq - c.last_seq) for c in clients)
    lat = sorted(x for c in clients for x in c.latencies)
    return {
        "posted": posted,
        "codes": codes,
        "rolled": tower["rolled"],
        "failed": tower["failed"],
        "final_seq": final_seq,
        "events_per_client": statistics.mean(c.received for c in clients),
        "lost": lost,
        "reconnects": sum(c.disconnects for c in clients),
        "resyncs": sum(c.resyncs for c in clients),
        "lat": lat,
        "rss": rss,
        "tower": sorted(tower_took),
        "slow_connects": slow_counts["connects"],
        "following": following,
        "dropped": tower["events"].get("dropped", 0),
        "lost_rolls": codes.get(202, 0) - tower["rolled"] - tower["failed"],
    }


def _pct(xs: list[float], q: float) -> float:
    return xs[min(len(xs) - 1, int(q * len(xs)))] if xs else float("nan")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--duration", type=float, default=600.0, help="seconds of load (default 600)")
    ap.add_argument("--clients", type=int, default=50, help="overlay WebSocket clients (default 50)")
    ap.add_argument(
        "--slow-clients", type=int, default=0, help="WebSocket clients that never read (default 0)"
    )
    ap.add_argument(
        "--slow-lifetime", type=float, default=60.0, help="seconds before a slow client connects again (60)"
    )
    ap.add_argument("--rate", type=float, default=10.0, help="rolls posted per second (default 10)")
    ap.add_argument(
        "--big-every", type=int, default=0, help="every Nth roll is --big, a large document (default 0: none)"
    )
    ap.add_argument("--big", default="1000d1000", help="the large roll (default 1000d1000, about 170 KB)")
    ap.add_argument("--roller", choices=("sim", "rng"), default="sim", help="the sim tower or the RNG")
    ap.add_argument("--max-queue", type=int, default=100, help="the server's queue bound (default 100)")
    args = ap.parse_args(argv)
    args.duration = max(1.0, min(args.duration, 3600.0))
    args.clients = max(1, min(args.clients, 500))
    args.slow_clients = max(0, min(args.slow_clients, 1000))
    args.rate = max(0.1, min(args.rate, 200.0))
    args.big_every = max(0, min(args.big_every, 1_000_000))
    port = _free_port()
    base = f"http://127.0.0.1:{port}"
    with tempfile.TemporaryDirectory(prefix="dicetower-load-") as data:
        roller = ["--rng"] if args.roller == "rng" else ["--tower", "sim", "--sim-seed", "1"]
        cmd = [
            sys.executable,
            "-m",
            "dicetower.firmware.cli",
            "serve",
            "--port",
            str(port),
            "--data",
            data,
            "--rate",
            "0",
            "--max-queue",
            str(args.max_queue),
            "--photo-cap-mb",
            "64",
            *roller,
        ]
        proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            for _ in range(600):
                try:
                    httpx.get(f"{base}/api/tower", timeout=1).raise_for_status()
                    break
                except httpx.HTTPError:
                    if proc.poll() is not None:
                        raise SystemExit("the server did not start") from None
                    time.sleep(0.1)
            cpu0, wall0 = _cpu_s(proc.pid), time.monotonic()
            me0 = time.process_time()
            got = asyncio.run(_run(args, base, proc.pid))
            server_cpu = _cpu_s(proc.pid) - cpu0
            wall = time.monotonic() - wall0
            mine = time.process_time() - me0
        finally:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(20)
            except subprocess.TimeoutExpired:
                proc.kill()
        verify = subprocess.run(
            [sys.executable, "-m", "dicetower.firmware.cli", "log", "verify", "--data", data],
            capture_output=True,
            text=True,
        )
    lat = got["lat"]
    rss = got["rss"]
    other = sum(v for k, v in got["codes"].items() if k not in (0, 202, 503))
    # the first minute is warm-up (the reader's model, the renderer's buffers): compare after it
    after_warmup = [m for t, m in rss if 60 <= t <= 120] or [rss[0][1]]
    last = [m for t, m in rss if t >= rss[-1][0] - 60] or [rss[-1][1]]
    first_of_minute: dict[int, float] = {}
    for t, m in rss:
        first_of_minute.setdefault(int(t // 60), m)
    by_minute = list(first_of_minute.values())
    print(
        f"serve_load: roller {args.roller}, {args.clients} clients, {args.slow_clients} that never read, "
        f"{args.rate:g} rolls/s for {args.duration:g} s"
        + (f", every {args.big_every}th {args.big}" if args.big_every else "")
    )
    print(
        f"  rolls     posted {got['posted']}, accepted {got['codes'].get(202, 0)}, "
        f"queue full (503) {got['codes'].get(503, 0)}, no answer {got['codes'].get(0, 0)}, other {other}; "
        f"finished {got['rolled']}, failed {got['failed']} ({got['rolled'] / args.duration:.2f} rolls/s)"
    )
    print(
        f"  events    {got['final_seq']} published, {got['events_per_client']:.0f} per client, "
        f"lost {got['lost']} (gaps + short at the end, all clients); clients closed as behind and back with "
        f"since {got['reconnects']}, of which resynced by a snapshot {got['resyncs']}"
    )
    print(
        f"  latency   p50 {1000 * _pct(lat, 0.5):.1f} ms, p99 {1000 * _pct(lat, 0.99):.1f} ms, "
        f"max {1000 * (lat[-1] if lat else float('nan')):.1f} ms ({len(lat)} samples)"
    )
    print(
        f"  memory    server RSS second minute {statistics.mean(after_warmup):.1f} MB, last minute "
        f"{statistics.mean(last):.1f} MB (min {min(m for _, m in rss):.1f}, max {max(m for _, m in rss):.1f})"
    )
    print(f"            RSS each minute (MB): {' '.join(f'{m:.0f}' for m in by_minute)}")
    took = got["tower"]
    print(
        f"  /api/tower p50 {1000 * _pct(took, 0.5):.1f} ms, p99 {1000 * _pct(took, 0.99):.1f} ms, "
        f"max {1000 * (took[-1] if took else float('nan')):.1f} ms ({len(took)} polls)"
    )
    following = got["following"] or [0]
    print(
        f"  slow      {got['slow_connects']} connections that never read, {got['dropped']} closed by the "
        f"server as too slow; /ws clients at the server {min(following)}-{max(following)} "
        f"(median {statistics.median(following):.0f}); rolls lost {got['lost_rolls']}"
    )
    print(
        f"  cpu       server {server_cpu:.1f} s ({100 * server_cpu / wall:.0f} % of one core), "
        f"this script {mine:.1f} s"
    )
    print(f"  log       {verify.stdout.strip() or verify.stderr.strip()}")
    return 0 if got["lost"] == 0 and got["lost_rolls"] == 0 and verify.returncode == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
