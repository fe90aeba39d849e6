"""A real Mosquitto on a free loopback port, with a config written for it (no system service).

Tests and ``bench/hub_load.py`` start their own broker: the binary from Debian's ``mosquitto``
package (``.ci/run`` installs it). :func:`mosquitto_path` is None where it is missing, and the
tests that need it skip.

A broker may require passwords (a ``password_file`` made by ``mosquitto_passwd``), TLS (a
throwaway CA and a server certificate for 127.0.0.1 made by the ``openssl`` CLI:
:func:`make_certificates`) and an ACL, as docs/towers.md configures a public host.
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
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = ["Certificates", "Mosquitto", "Probe", "free_port", "make_certificates", "mosquitto_path"]


def mosquitto_path() -> str | None:
    return shutil.which("mosquitto") or next(
        (p for p in ("/usr/sbin/mosquitto", "/usr/local/sbin/mosquitto") if Path(p).is_file()), None
    )


@dataclass(frozen=True)
class Certificates:
    """A throwaway CA, the broker's certificate chain and key, and a second CA that signed nothing
    of the broker's (what a tower trusting the wrong CA holds)."""

    ca: Path
    fullchain: Path
    key: Path
    other_ca: Path


def _openssl(*args: str | Path, cwd: Path) -> None:
    subprocess.run(["openssl", *map(str, args)], cwd=cwd, check=True, capture_output=True, timeout=60)


def _new_ca(folder: Path, name: str) -> tuple[Path, Path]:
    key, cert = folder / f"{name}.key", folder / f"{name}.pem"
    _openssl("ecparam", "-name", "prime256v1", "-genkey", "-noout", "-out", key, cwd=folder)
    _openssl(
        "req", "-x509", "-new", "-key", key, "-out", cert, "-days", "2", "-subj", f"/CN={name}",
        "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign,cRLSign",
        cwd=folder,
    )  # fmt: skip
    return cert, key


def make_certificates(folder: Path) -> Certificates:
    """A CA, a certificate it signs for 127.0.0.1 (the name a client checks), and another CA."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    ca, ca_key = _new_ca(folder, "test-ca")
    other_ca, _ = _new_ca(folder, "other-ca")
    key, csr, cert = folder / "privkey.pem", folder / "broker.csr", folder / "broker.pem"
    _openssl("ecparam", "-name", "prime256v1", "-genkey", "-noout", "-out", key, cwd=folder)
    _openssl("req", "-new", "-key", key, "-out", csr, "-subj", "/CN=127.0.0.1", cwd=folder)
    ext = folder / "broker.ext"
    ext.write_text("subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth\n")
    _openssl(
        "x509", "-req", "-in", csr, "-CA", ca, "-CAkey", ca_key, "-CAcreateserial", "-out", cert,
        "-days", "2", "-extfile", ext, cwd=folder,
    )  # fmt: skip
    fullchain = folder / "fullchain.pem"
    fullchain.write_bytes(cert.read_bytes() + ca.read_bytes())
    return Certificates(ca=ca, fullchain=fullchain, key=key, other_ca=other_ca)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Mosquitto:
    """One broker process in ``folder``; :meth:`kill` and :meth:`start` again keep the port."""

    def __init__(
        self,
        folder: Path,
        *,
        port: int | None = None,
        persistence: bool = False,
        users: dict[str, str] | None = None,
        tls: Certificates | None = None,
        acl: str | None = None,
    ) -> None:
        """``users`` (name to password): only they may connect; ``tls``: the listener speaks TLS
        only, with that chain; ``acl``: an ACL file's text (docs/towers.md)."""
        binary = mosquitto_path()
        if binary is None:
            raise FileNotFoundError("mosquitto is not installed (apt-get install mosquitto)")
        self.binary = binary
        self.folder = Path(folder)
        self.folder.mkdir(parents=True, exist_ok=True)
        self.port = port or free_port()
        self.tls = tls
        self.conf = self.folder / "mosquitto.conf"
        lines = [f"listener {self.port} 127.0.0.1"]
        if tls is not None:
            lines += [f"cafile {tls.ca}", f"certfile {tls.fullchain}", f"keyfile {tls.key}"]
        if users:
            lines += ["allow_anonymous false", f"password_file {self._password_file(users)}"]
        else:
            lines.append("allow_anonymous true")
        if acl is not None:
            (self.folder / "acl").write_text(acl)
            lines.append(f"acl_file {self.folder / 'acl'}")
        if persistence:
            lines += ["persistence true", f"persistence_location {self.folder}/"]
        else:
            lines.append("persistence false")
        if os.geteuid() == 0:  # as root, mosquitto would drop to its own user, who may not write here
            lines.append("user root")
        if tls is not None:  # the public host's limits in docs/towers.md
            lines += ["max_queued_messages 10000", "message_size_limit 262144"]
        else:
            lines.append("max_queued_messages 100000")
        lines += [
            "log_dest stderr",
            "log_type error",
            "log_type warning",
            "log_type notice",
        ]
        self.conf.write_text("\n".join(lines) + "\n")
        self.proc: subprocess.Popen[bytes] | None = None

    def _password_file(self, users: dict[str, str]) -> Path:
        """``mosquitto_passwd -b``: the broker's own tool hashes each password."""
        tool = shutil.which("mosquitto_passwd") or "/usr/bin/mosquitto_passwd"
        path = self.folder / "passwd"
        for i, (user, password) in enumerate(users.items()):
            first = ["-c"] if i == 0 else []
            subprocess.run([tool, *first, "-b", str(path), user, password], check=True, timeout=30)
        return path

    def config_lines(self) -> list[str]:
        """The config's lines as the broker reads them."""
        return self.conf.read_text().splitlines()

    @property
    def url(self) -> str:
        return f"{'mqtts' if self.tls else 'mqtt'}://127.0.0.1:{self.port}"

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
    None: a clean one. ``login`` (user, password) and ``ca`` (TLS) for a broker that needs them.
    """

    def __init__(
        self,
        port: int,
        topics: list[str],
        *,
        session: str | None = None,
        limit: int = 100_000,
        login: tuple[str, str] | None = None,
        ca: Path | None = None,
    ):
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
        if login is not None:
            self.client.username_pw_set(*login)
        if ca is not None:
            self.client.tls_set(ca_certs=str(ca))
        self.client.connect("127.0.0.1", port)
        self.client.loop_start()
        if not self.subscribed.wait(10):
            raise RuntimeError("the probe did not subscribe")

    def _on_connect(self, client: Any, userdata: Any, flags: Any, reason: Any, props: Any) -> None:
        if getattr(reason, "is_failure", False):
            return  # refused: the wait for the subscription fails
        if self.topics:  # a probe that only publishes subscribes to nothing
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
