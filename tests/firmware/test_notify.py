"""The systemd notifier speaks the sd_notify protocol to a real datagram socket, and is silent without one."""

from __future__ import annotations

import logging
import os
import shutil
import socket
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from dicetower.firmware import notify
from dicetower.firmware.notify import SEND_TIMEOUT_S, STATUS_MAX_CHARS, Notifier


class Listener:
    """A bound AF_UNIX datagram socket standing in for systemd's notify socket."""

    def __init__(self, sock: socket.socket, notify_socket: str) -> None:
        self.sock = sock
        self.notify_socket = notify_socket
        sock.settimeout(2.0)

    def receive(self) -> bytes:
        return self.sock.recv(65536)

    def assert_empty(self) -> None:
        self.sock.settimeout(0.05)
        with pytest.raises(TimeoutError):
            self.sock.recv(65536)
        self.sock.settimeout(2.0)


@pytest.fixture
def path_listener() -> Iterator[Listener]:
    # A short directory of its own: AF_UNIX paths are limited to 107 bytes, which pytest's tmp_path may pass.
    directory = tempfile.mkdtemp(prefix="dt-notify-")
    path = os.path.join(directory, "notify")
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    try:
        sock.bind(path)
        yield Listener(sock, path)
    finally:
        sock.close()
        shutil.rmtree(directory)


@pytest.fixture
def abstract_listener() -> Iterator[Listener]:
    name = f"dicetower-test-{os.getpid()}-{threading.get_ident()}"
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    try:
        sock.bind("\0" + name)
        yield Listener(sock, "@" + name)
    finally:
        sock.close()


@pytest.mark.parametrize("listener_name", ["path_listener", "abstract_listener"])
def test_each_message_is_one_exact_datagram(listener_name: str, request: pytest.FixtureRequest) -> None:
    listener: Listener = request.getfixturevalue(listener_name)
    with Notifier({"NOTIFY_SOCKET": listener.notify_socket}) as notifier:
        assert notifier.enabled
        assert notifier.ready() is True
        assert notifier.status("idle: waiting for the button") is True
        assert notifier.watchdog() is True
        assert notifier.stopping() is True
    assert listener.receive() == b"READY=1"
    assert listener.receive() == b"STATUS=idle: waiting for the button"
    assert listener.receive() == b"WATCHDOG=1"
    assert listener.receive() == b"STOPPING=1"
    listener.assert_empty()


def test_status_is_one_line_and_bounded(path_listener: Listener) -> None:
    with Notifier({"NOTIFY_SOCKET": path_listener.notify_socket}) as notifier:
        notifier.status("rolling 3d6\nREADY=1\n  shake 2 of 3")
        notifier.status("x" * (STATUS_MAX_CHARS * 3))
        notifier.status("tray: 5 dice · wild = red d6")
    # A newline would start a second assignment: a status text must never smuggle in READY=1.
    assert path_listener.receive() == b"STATUS=rolling 3d6 READY=1 shake 2 of 3"
    long = path_listener.receive().decode("utf-8")
    assert long == "STATUS=" + "x" * (STATUS_MAX_CHARS - 1) + "…"
    assert path_listener.receive() == "STATUS=tray: 5 dice · wild = red d6".encode()


def test_without_notify_socket_every_method_is_a_no_op(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.DEBUG, logger="dicetower.firmware.notify"):
        notifier = Notifier({})
        assert not notifier.enabled
        assert notifier.ready() is False
        assert notifier.status("x") is False
        assert notifier.watchdog() is False
        assert notifier.stopping() is False
        assert notifier.watchdog_interval is None
        notifier.close()
    assert caplog.records == []


def test_the_process_environment_is_the_default(
    path_listener: Listener, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("NOTIFY_SOCKET", path_listener.notify_socket)
    monkeypatch.setenv("WATCHDOG_USEC", "30000000")
    monkeypatch.delenv("WATCHDOG_PID", raising=False)
    with Notifier() as notifier:
        notifier.ready()
        assert notifier.watchdog_interval == 15.0
    assert path_listener.receive() == b"READY=1"


def test_a_send_failure_is_logged_once_and_never_raised(caplog: pytest.LogCaptureFixture) -> None:
    missing = os.path.join(tempfile.gettempdir(), f"dt-notify-missing-{os.getpid()}", "notify")
    with (
        caplog.at_level(logging.DEBUG, logger="dicetower.firmware.notify"),
        Notifier({"NOTIFY_SOCKET": missing}) as notifier,
    ):
        assert notifier.ready() is False
        assert notifier.watchdog() is False
        assert notifier.watchdog() is False
    warnings = [r for r in caplog.records if r.levelno >= logging.WARNING]
    assert len(warnings) == 1
    assert missing in warnings[0].getMessage()
    assert sum(r.levelno == logging.DEBUG for r in caplog.records) == 2


def test_a_listener_that_goes_away_does_not_break_the_caller(
    path_listener: Listener, caplog: pytest.LogCaptureFixture
) -> None:
    with (
        caplog.at_level(logging.WARNING, logger="dicetower.firmware.notify"),
        Notifier({"NOTIFY_SOCKET": path_listener.notify_socket}) as notifier,
    ):
        assert notifier.ready() is True
        path_listener.sock.close()
        os.unlink(path_listener.notify_socket)
        assert notifier.watchdog() is False
        assert notifier.stopping() is False
    assert len(caplog.records) == 1


def test_close_is_idempotent_and_stops_sending(path_listener: Listener) -> None:
    notifier = Notifier({"NOTIFY_SOCKET": path_listener.notify_socket})
    notifier.ready()
    notifier.close()
    notifier.close()
    assert notifier.closed
    assert not notifier.enabled
    assert notifier.watchdog() is False
    assert path_listener.receive() == b"READY=1"
    path_listener.assert_empty()
    assert repr(notifier) == "<Notifier closed>"


def test_sends_from_many_threads_each_arrive_whole(path_listener: Listener) -> None:
    received: list[bytes] = []
    reader = threading.Thread(target=lambda: received.extend(path_listener.receive() for _ in range(100)))
    reader.start()
    with Notifier({"NOTIFY_SOCKET": path_listener.notify_socket}) as notifier:
        threads = [
            threading.Thread(target=lambda: [notifier.watchdog() for _ in range(25)]) for _ in range(4)
        ]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    reader.join()
    assert received == [b"WATCHDOG=1"] * 100
    path_listener.assert_empty()


def test_a_listener_that_never_reads_cannot_stall_the_caller(
    path_listener: Listener, caplog: pytest.LogCaptureFixture
) -> None:
    # The kernel queues only a few datagrams per socket; past that a blocking send would wait for systemd.
    queue_length = int(Path("/proc/sys/net/unix/max_dgram_qlen").read_text())
    sends = queue_length + 3
    with (
        caplog.at_level(logging.WARNING, logger="dicetower.firmware.notify"),
        Notifier({"NOTIFY_SOCKET": path_listener.notify_socket}) as notifier,
    ):
        started = time.monotonic()
        results = [notifier.watchdog() for _ in range(sends)]
        elapsed = time.monotonic() - started
    assert results.count(False) >= 1
    assert results[0] is True
    assert elapsed < (results.count(False) + 1) * SEND_TIMEOUT_S + 2.0
    assert len(caplog.records) == 1


@pytest.mark.parametrize(
    ("environ", "interval"),
    [
        ({"WATCHDOG_USEC": "30000000"}, 15.0),
        ({"WATCHDOG_USEC": "30000000", "WATCHDOG_PID": str(os.getpid())}, 15.0),
        ({"WATCHDOG_USEC": "30000000", "WATCHDOG_PID": str(os.getpid() + 1)}, None),
        ({"WATCHDOG_USEC": "0"}, None),
        ({"WATCHDOG_USEC": "-5"}, None),
        ({"WATCHDOG_USEC": "thirty"}, None),
        ({"WATCHDOG_USEC": ""}, None),
        ({}, None),
    ],
)
def test_watchdog_interval_is_half_the_timeout_for_this_process(
    environ: dict[str, str], interval: float | None, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.WARNING, logger="dicetower.firmware.notify"):
        notifier = Notifier(environ)
    assert notifier.watchdog_interval == interval
    assert notifier.watchdog_timeout == (None if interval is None else interval * 2)
    # Only a value that is present but not a number deserves a word in the journal.
    assert len(caplog.records) == (1 if environ.get("WATCHDOG_USEC") == "thirty" else 0)


@pytest.mark.parametrize("value", ["vsock:2:1234", "relative/notify", "@"])
def test_an_address_of_another_form_is_logged_and_treated_as_unset(
    value: str, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.WARNING, logger="dicetower.firmware.notify"):
        notifier = Notifier({"NOTIFY_SOCKET": value})
        assert notifier.ready() is False
    assert not notifier.enabled
    assert len(caplog.records) == 1
    assert repr(notifier) == "<Notifier disabled>"


def test_repr_names_the_socket(abstract_listener: Listener) -> None:
    with Notifier({"NOTIFY_SOCKET": abstract_listener.notify_socket}) as notifier:
        assert repr(notifier) == f"<Notifier socket={abstract_listener.notify_socket!r}>"


def test_the_module_needs_only_the_standard_library() -> None:
    source = Path(notify.__file__)
    imports = {
        line.split()[1].split(".")[0]
        for line in source.read_text(encoding="utf-8").splitlines()
        if line.startswith(("import ", "from "))
    }
    assert imports <= {"__future__", "logging", "os", "socket", "threading", "collections", "types"}
