"""Which names a request's ``Host`` header may give: this machine's, and the ones its owner configured.

Why: a server on loopback without a token trusts whoever can reach it, and a web page can reach
it by DNS rebinding. A page on ``attacker.example`` whose name then resolves to 127.0.0.1 makes
the browser send its requests here, with ``Host: attacker.example`` and the page's own origin, so
the same-origin rule lets it roll, rename a teach folder's groups or open the event stream.
The page cannot choose the ``Host`` header: it is the name in the page's URL. So a server that
answers only to its own names (``localhost``, its host name, its addresses) and to the names
configured for it (``[server] allowed_hosts``, ``--allowed-host``) answers no such page.

This module needs only the standard library: the tower's config checks the configured names
with :func:`check_allowed_host` without importing the server. The middleware that refuses a
request is :mod:`.hosts`.
"""

from __future__ import annotations

import ipaddress
import re
import socket
import time
from collections.abc import Callable, Iterable
from pathlib import Path

__all__ = [
    "ANY_HOST",
    "MAX_ALLOWED_HOSTS",
    "REFRESH_S",
    "AllowedHosts",
    "check_allowed_host",
    "check_allowed_hosts",
    "host_name",
    "machine_names",
]

#: the configured name that turns the check off (behind a proxy that checks names itself)
ANY_HOST = "*"
#: configured names at most (a list longer than this is a mistake, and each request walks no list)
MAX_ALLOWED_HOSTS = 64
#: seconds between two looks at the machine's names and addresses when a request names an unknown one
REFRESH_S = 30.0
#: a DNS name: dot-separated labels of letters, digits, ``-`` and ``_``, 253 characters at most
_LABEL = r"[a-z0-9_]([a-z0-9_-]{0,61}[a-z0-9_])?"
_DNS_NAME = re.compile(rf"(?=.{{1,253}}$){_LABEL}(\.{_LABEL})*")
#: where Linux lists the machine's IPv4 (``/32 host LOCAL``) and IPv6 addresses
_FIB_TRIE = Path("/proc/net/fib_trie")
_IF_INET6 = Path("/proc/net/if_inet6")
#: bytes of either file read at most
_PROC_BYTES = 1 << 20


def host_name(header: str | None) -> str | None:
    """The name or address a ``Host`` header gives, lower-case, without port or trailing dot; None if
    it is malformed. An IP address comes back in its canonical form (``[::1]:8080`` is ``::1``)."""
    if header is None or not header or len(header) > 300:
        return None
    text = header.strip().lower()
    if text.startswith("["):  # an IPv6 literal, with or without a port
        end = text.find("]")
        rest = text[end + 1 :]
        if end < 0 or (rest and not re.fullmatch(r":\d{1,5}", rest)):
            return None
        return _canonical_ip(text[1:end])
    name, colon, port = text.rpartition(":")
    if not colon:
        name = text
    elif not port.isdigit() or len(port) > 5:
        return None
    name = name[:-1] if name.endswith(".") else name
    ip = _canonical_ip(name)
    if ip is not None:
        return ip
    return name if _DNS_NAME.fullmatch(name) else None


def _canonical_ip(text: str) -> str | None:
    try:
        return str(ipaddress.ip_address(text))
    except ValueError:
        return None


def check_allowed_host(value: object) -> str:
    """A configured name as it is stored (lower-case), or ``ValueError`` saying what it may be."""
    what = "a host name (tower.lan) or IP address without a port, or * for any"
    if not isinstance(value, str):
        raise ValueError(what)
    text = value.strip().lower()
    if text == ANY_HOST:
        return ANY_HOST
    if text.startswith("[") and text.endswith("]"):
        text = text[1:-1]
    ip = _canonical_ip(text)
    if ip is not None:
        return ip
    name = text[:-1] if text.endswith(".") else text
    if not _DNS_NAME.fullmatch(name):
        raise ValueError(f"{what}; got {value[:80]!r}")
    return name


def check_allowed_hosts(value: object) -> tuple[str, ...]:
    """The config key ``[server] allowed_hosts``: a list of names, each checked."""
    if isinstance(value, str) or not isinstance(value, list | tuple):
        raise ValueError('a list of host names, e.g. ["tower.lan", "192.168.1.20"]')
    if len(value) > MAX_ALLOWED_HOSTS:
        raise ValueError(f"at most {MAX_ALLOWED_HOSTS} host names")
    return tuple(check_allowed_host(v) for v in value)


def _proc_text(path: Path) -> str:
    try:
        with path.open("rb") as fh:
            return fh.read(_PROC_BYTES).decode("ascii", errors="replace")
    except OSError:
        return ""


def _linux_addresses() -> set[str]:
    """Every address of this machine's interfaces, as Linux lists them (none elsewhere)."""
    found: set[str] = set()
    previous = ""
    for line in _proc_text(_FIB_TRIE).splitlines():
        stripped = line.strip()
        if stripped.startswith("/32 host LOCAL") and previous:
            found.add(previous)
        elif stripped.startswith(("|--", "+--")):
            previous = stripped[3:].strip().split()[0] if stripped[3:].strip() else ""
    for line in _proc_text(_IF_INET6).splitlines():
        raw = line.split()[0] if line.split() else ""
        if len(raw) == 32:
            ip = _canonical_ip(":".join(raw[i : i + 4] for i in range(0, 32, 4)))
            if ip is not None:
                found.add(ip)
    return {a for a in (_canonical_ip(x) for x in found) if a is not None}


def _resolved(name: str) -> set[str]:
    """The addresses ``name`` resolves to here (where there is no ``/proc`` to read them from)."""
    try:
        infos = socket.getaddrinfo(name, None, proto=socket.IPPROTO_TCP)
    except (OSError, UnicodeError):
        return set()
    return {ip for ip in (_canonical_ip(str(info[4][0]).split("%")[0]) for info in infos) if ip is not None}


def machine_names() -> set[str]:
    """This machine's host name (also with ``.local``, as mDNS serves it) and its addresses."""
    names: set[str] = set()
    host = socket.gethostname().lower().rstrip(".")
    if host and _DNS_NAME.fullmatch(host):
        names |= {host, f"{host.split('.')[0]}.local"}
    addresses = _linux_addresses()
    if not addresses and host:
        addresses = _resolved(host)
    return names | addresses


class AllowedHosts:
    """The names a request may give in ``Host``: loopback, this machine's, the bound address, the configured.

    Loopback is ``localhost``, any name under ``.localhost`` (which browsers resolve to loopback
    themselves), and every loopback address. The machine's names and addresses are looked up again,
    at most every :data:`REFRESH_S` seconds, when a request names one not known: an address a Pi
    gets from DHCP after the server started is then allowed without a restart.
    """

    def __init__(
        self,
        bound: str,
        configured: Iterable[str] = (),
        *,
        machine: Callable[[], set[str]] = machine_names,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.configured = tuple(check_allowed_host(n) for n in configured)
        self.any = ANY_HOST in self.configured
        self._fixed = set(self.configured)
        bound_name = host_name(bound)
        if bound_name is not None and bound_name not in ("0.0.0.0", "::"):
            self._fixed.add(bound_name)
        self._machine = machine
        self._clock = clock
        self._known = machine()
        self._looked = clock()

    def allows(self, header: str | None) -> bool:
        """Whether a request whose ``Host`` header is ``header`` is for this server."""
        if self.any:
            return True
        name = host_name(header)
        if name is None:
            return False
        if self._static(name) or name in self._known:
            return True
        if self._clock() - self._looked >= REFRESH_S:
            self._known = self._machine()
            self._looked = self._clock()
            return name in self._known
        return False

    def _static(self, name: str) -> bool:
        if name == "localhost" or name.endswith(".localhost") or name in self._fixed:
            return True
        try:
            return ipaddress.ip_address(name).is_loopback
        except ValueError:
            return False
