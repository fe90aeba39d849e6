"""Tell systemd how the service is doing: the ``sd_notify`` protocol over a datagram socket.

``systemd/dicetower.service`` runs with ``Type=notify`` and ``WatchdogSec=``: systemd counts the service as
started only when it sends ``READY=1``, and kills and restarts it when ``WATCHDOG=1`` stops arriving — a hung
roll loop is restarted instead of sitting with the solenoid driver wedged. The protocol is one datagram of
``KEY=value`` lines sent to the socket named in ``$NOTIFY_SOCKET``; it is short enough to speak with the
standard library, so the service needs no libsystemd binding.

Outside systemd (a terminal, the tests, CI) ``$NOTIFY_SOCKET`` is unset and every method is a no-op, so the
same code runs everywhere. A failed send never raises into the caller: a service that cannot reach systemd
must still keep the solenoid safe and finish the roll. The first failure is logged as a warning, later ones
at debug level, so a broken socket does not flood the journal once per watchdog ping.
"""

from __future__ import annotations

import logging
import os
import socket
import threading
from collections.abc import Mapping
from types import TracebackType

__all__ = ["SEND_TIMEOUT_S", "STATUS_MAX_CHARS", "Notifier"]

logger = logging.getLogger(__name__)

#: Longest wait, in seconds, for room in the socket's queue. A datagram socket holds only a few unread
#: messages (``net.unix.max_dgram_qlen``); when systemd is busy a blocking send would stall the roll loop,
#: so a send that cannot go out in this time is dropped and logged instead.
SEND_TIMEOUT_S = 0.5

#: Longest ``STATUS=`` text sent; longer text is cut. ``systemctl status`` shows one line, and a bound keeps
#: a runaway message (a whole traceback) well inside one datagram.
STATUS_MAX_CHARS = 400


class Notifier:
    """Send ``READY``, ``STATUS``, ``WATCHDOG`` and ``STOPPING`` to systemd, or nothing outside it.

    :param environ: where to read ``NOTIFY_SOCKET``, ``WATCHDOG_USEC`` and ``WATCHDOG_PID``; the process
        environment by default. The values are read once, here.

    ``NOTIFY_SOCKET`` is a filesystem path (``/run/systemd/notify``) or, with a leading ``@``, a name in the
    Linux abstract socket namespace. Any other form (systemd's ``vsock:`` addresses for virtual machines) is
    logged once and treated as unset.

    Each method returns whether the message reached the socket, so a caller may show it, but none needs to
    check: a failure is already logged. The socket is opened on the first send and closed by :meth:`close`;
    sending from several threads (the roll loop and a watchdog timer) is safe.

    Example, the shape of a service loop::

        with Notifier() as notifier:
            notifier.ready()
            while running:
                notifier.status("idle: waiting for the button")
                ...
                notifier.watchdog()   # at least every notifier.watchdog_interval seconds
            notifier.stopping()
    """

    def __init__(self, environ: Mapping[str, str] | None = None) -> None:
        env = os.environ if environ is None else environ
        self._address = _socket_address(env.get("NOTIFY_SOCKET", ""))
        self._watchdog_usec = _watchdog_usec(env)
        self._socket: socket.socket | None = None
        self._lock = threading.Lock()
        self._failed_once = False
        self._closed = False

    @property
    def enabled(self) -> bool:
        """Whether a notify socket is configured (the process runs under a ``Type=notify`` unit)."""
        return self._address is not None and not self._closed

    @property
    def watchdog_timeout(self) -> float | None:
        """The unit's ``WatchdogSec=`` in seconds, or ``None`` when no watchdog watches this process."""
        return None if self._watchdog_usec is None else self._watchdog_usec / 1_000_000

    @property
    def watchdog_interval(self) -> float | None:
        """How often to call :meth:`watchdog`, in seconds: half the timeout, as sd_watchdog_enabled(3) says.

        ``None`` when ``WATCHDOG_USEC`` is unset, not a positive integer, or ``WATCHDOG_PID`` names another
        process (the watchdog belongs to a parent that passed its environment on).
        """
        timeout = self.watchdog_timeout
        return None if timeout is None else timeout / 2

    @property
    def closed(self) -> bool:
        """Whether :meth:`close` has been called; a closed notifier sends nothing."""
        return self._closed

    def ready(self) -> bool:
        """Tell systemd that start-up is done: the pin is low, the camera open, the button armed."""
        return self._send("READY=1")

    def status(self, text: str) -> bool:
        """Set the one-line status ``systemctl status`` shows; newlines become spaces, long text is cut."""
        line = " ".join(str(text).split())
        if len(line) > STATUS_MAX_CHARS:
            line = line[: STATUS_MAX_CHARS - 1] + "…"
        return self._send(f"STATUS={line}")

    def watchdog(self) -> bool:
        """Tell systemd the service is alive; it restarts the service when these stop for ``WatchdogSec=``."""
        return self._send("WATCHDOG=1")

    def stopping(self) -> bool:
        """Tell systemd a clean shutdown has begun, so a slow stop is not taken for a hang."""
        return self._send("STOPPING=1")

    def close(self) -> None:
        """Close the socket; idempotent. Later calls send nothing and return ``False``."""
        with self._lock:
            self._closed = True
            if self._socket is not None:
                self._socket.close()
                self._socket = None

    def __enter__(self) -> Notifier:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def __repr__(self) -> str:
        if self._closed:
            return "<Notifier closed>"
        if self._address is None:
            return "<Notifier disabled>"
        return f"<Notifier socket={_show_address(self._address)!r}>"

    def _send(self, message: str) -> bool:
        if self._address is None:
            return False
        with self._lock:
            if self._closed:
                return False
            try:
                if self._socket is None:
                    self._socket = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM | socket.SOCK_CLOEXEC)
                    self._socket.settimeout(SEND_TIMEOUT_S)
                self._socket.sendto(message.encode("utf-8"), self._address)
            except OSError as error:
                self._report_failure(message, error)
                return False
        return True

    def _report_failure(self, message: str, error: OSError) -> None:
        where = _show_address(self._address or "")
        if self._failed_once:
            logger.debug("systemd notify %r to %s failed: %s", message, where, error)
            return
        self._failed_once = True
        logger.warning(
            "cannot notify systemd at %s (%s); the service keeps running, "
            "but systemd may count it as not started or hung. Later failures are logged at debug level.",
            where,
            error,
        )


def _socket_address(value: str) -> str | None:
    """The address to ``sendto``: a path as is, ``@name`` as an abstract name (leading NUL), else ``None``."""
    if not value:
        return None
    if value.startswith("/"):
        return value
    if value.startswith("@") and len(value) > 1:
        return "\0" + value[1:]
    logger.warning("NOTIFY_SOCKET=%r is not a socket path or @abstract name; systemd is not notified", value)
    return None


def _watchdog_usec(env: Mapping[str, str]) -> int | None:
    """``WATCHDOG_USEC`` as microseconds when it is meant for this process, else ``None``."""
    raw = env.get("WATCHDOG_USEC", "")
    if not raw:
        return None
    pid = env.get("WATCHDOG_PID", "")
    if pid and pid.strip() != str(os.getpid()):
        return None
    try:
        usec = int(raw)
    except ValueError:
        logger.warning("WATCHDOG_USEC=%r is not a whole number of microseconds; the watchdog is ignored", raw)
        return None
    return usec if usec > 0 else None


def _show_address(address: str) -> str:
    return "@" + address[1:] if address.startswith("\0") else address
