"""The client a per-address limit or cap counts a peer address as: every limit of the server
(admin sign-ins, room creation, open rooms, sockets and connections per address) keys on it."""

from __future__ import annotations

import ipaddress
from typing import Final

__all__ = ["IPV6_PREFIX", "counted_address"]

IPV6_PREFIX: Final = 64
"""An IPv6 client is counted by its network of this many bits (RFC 6177: a home or a host gets
at least a /64)."""


def counted_address(host: str) -> str:
    """The client a per-address limit counts the address ``host`` as: an IPv4 address itself; an
    IPv4-mapped IPv6 address (``::ffff:192.0.2.7``) as its IPv4 address; any other IPv6 address
    as its /64 network (`IPV6_PREFIX`, e.g. ``2001:db8:1:2::/64``), since whoever holds one
    address of a /64 usually holds them all and could use a fresh one for every attempt;
    anything else (``unknown``, a name) as given."""
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return host
    if isinstance(address, ipaddress.IPv4Address):
        return str(address)
    if address.ipv4_mapped is not None:
        return str(address.ipv4_mapped)
    bare = ipaddress.IPv6Address(address.packed)  # without a zone (fe80::1%eth0)
    return str(ipaddress.IPv6Network((bare, IPV6_PREFIX), strict=False))
