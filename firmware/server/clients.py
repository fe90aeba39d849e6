"""Who sent a request: the socket's peer, or the client a trusted reverse proxy names.

Why not simply read ``X-Forwarded-For``: anyone can send it. A client that names a new address
on each request escapes the per-client rate limit, and whatever it names is written into the
hash-chained ``client`` column of the roll log for good. So the header counts only when the
socket's peer is a proxy the owner named (``--trusted-proxy``, ``DICETOWER_TRUSTED_PROXIES``),
and then only up to the first hop that is not itself a trusted proxy, read from the right: the
hops to its left were written by the client and prove nothing. What is kept is always an IP
address in canonical form (at most 45 characters), never header text.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Iterable, Sequence

__all__ = [
    "MAX_FORWARDED_CHARS",
    "MAX_FORWARDED_HOPS",
    "TrustedProxies",
    "clean_peer",
    "client_address",
]

#: the most of ``X-Forwarded-For`` read (from its right end, where the trusted hops write)
MAX_FORWARDED_CHARS = 1024
#: the most hops of ``X-Forwarded-For`` walked
MAX_FORWARDED_HOPS = 16
#: a peer that is not an IP address (a test client, a Unix socket) is kept only if it looks like this
_PEER_NAME = re.compile(r"[A-Za-z0-9._-]{1,64}")

_Network = ipaddress.IPv4Network | ipaddress.IPv6Network


def _ip(text: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    """An address in any usual spelling (``::ffff:10.0.0.1`` is 10.0.0.1); None if it is not one."""
    text = text.strip()
    if len(text) > 45 or not text:
        return None
    try:
        ip = ipaddress.ip_address(text)
    except ValueError:
        return None
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        return ip.ipv4_mapped
    return ip


class TrustedProxies:
    """The reverse proxies whose ``X-Forwarded-For`` is believed: addresses or networks (``10.0.0.0/8``).

    Empty (the default): the header is never read, whoever sends it.
    """

    def __init__(self, entries: Iterable[str] = ()) -> None:
        networks: list[_Network] = []
        for entry in entries:
            entry = entry.strip()
            if not entry:
                continue
            try:
                networks.append(ipaddress.ip_network(entry, strict=False))
            except ValueError:
                raise ValueError(f"trusted proxy {entry[:60]!r} is not an IP address or network") from None
        self.networks: tuple[_Network, ...] = tuple(networks)

    @classmethod
    def parse(cls, text: str) -> TrustedProxies:
        """From a comma-separated list (the environment variable's form)."""
        return cls(text.split(","))

    def __bool__(self) -> bool:
        return bool(self.networks)

    def __contains__(self, address: object) -> bool:
        ip = _ip(address) if isinstance(address, str) else None
        return ip is not None and any(ip in n for n in self.networks)

    def __repr__(self) -> str:
        return f"TrustedProxies({[str(n) for n in self.networks]!r})"


def clean_peer(peer: str | None) -> str:
    """The socket's peer as stored: a canonical IP address, a short plain name, or ``unknown``."""
    if peer is None:
        return "unknown"
    ip = _ip(peer)
    if ip is not None:
        return str(ip)
    return peer if _PEER_NAME.fullmatch(peer) else "unknown"


def client_address(peer: str | None, forwarded: Sequence[str], trusted: TrustedProxies) -> str:
    """The client to rate-limit and log: ``peer``, or the hop a trusted proxy at ``peer`` names.

    ``forwarded`` holds every ``X-Forwarded-For`` header value in order. Read from the right, each
    hop that is a trusted proxy is skipped; the first that is not is the client. A hop that is
    not an IP address ends the walk at the last good one: nothing past a malformed entry can be
    trusted either.
    """
    client = clean_peer(peer)
    if not trusted or client not in trusted or not forwarded:
        return client
    joined = ",".join(forwarded)
    hops = joined[-MAX_FORWARDED_CHARS:].split(",")[::-1][:MAX_FORWARDED_HOPS]
    if len(joined) > MAX_FORWARDED_CHARS:
        hops = hops[:-1]  # the leftmost hop read may be cut in half ("10.1.2.3" read as "0.1.2.3")
    for hop in hops:
        ip = _ip(hop)
        if ip is None:
            break
        client = str(ip)
        if client not in trusted:
            break
    return client
