"""The client a per-address limit or cap counts a peer address as: every limit of the server
(admin sign-ins, room creation, open rooms, sockets and connections per address) keys on it; and
the wider network (an IPv6 /48) the caps of many clients count besides, at a larger share."""

from __future__ import annotations

import functools
import ipaddress
from collections import Counter
from typing import Final

__all__ = [
    "IPV6_PREFIX",
    "IPV6_SITE_PREFIX",
    "SITE_SHARE",
    "count_within",
    "counted_address",
    "counted_keys",
    "counted_site",
]

IPV6_PREFIX: Final = 64
"""An IPv6 client is counted by its network of this many bits (RFC 6177: a home or a host gets
at least a /64)."""

IPV6_SITE_PREFIX: Final = 48
"""The IPv6 network every client inside it is also counted under (`counted_site`), at `SITE_SHARE`
times a cap: a /48 is what a site (a home with a generous provider, an office, a small hosting
customer) is given (RFC 6177), and holds 65,536 /64s, each a client of its own (`IPV6_PREFIX`)."""

SITE_SHARE: Final = 4
"""How many times a per-address cap one IPv6 /48 holds, all its /64s together (`counted_keys`).
Counted by the /64 alone, whoever holds a /48 would be 65,536 clients, enough to fill the server's
cap of rooms (``DOMENG_MAX_ROOMS``, 20 each) or the lobby's list (3 tables each) by itself. Four:
a site is rarely one person (a household, a club, an office whose machines each have a /64 of
their own), so it gets what four IPv4 addresses get, and no more; where a provider hands its
customers /56s or /60s, up to 256 of them share one /48 and its four shares, which is still more
than the many users behind one IPv4 address of a carrier-grade NAT get (one share)."""


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


@functools.lru_cache(maxsize=4096)  # the open rooms' creators, each read at every creation
def counted_site(address: str) -> str | None:
    """The IPv6 /48 network (`IPV6_SITE_PREFIX`) a client ``address`` belongs to, as a cap
    counts it besides its /64: ``address`` is a peer address or a client as `counted_address`
    gives it (``2001:db8:1:2::/64`` → ``2001:db8:1::/48``); None for an IPv4 client (an IPv4
    address is counted by itself alone, as always), an IPv4-mapped one and anything else.

    >>> counted_site("2001:db8:1:2::/64"), counted_site("2001:db8:1:ffff::9"), counted_site("192.0.2.7")
    ('2001:db8:1::/48', '2001:db8:1::/48', None)
    """
    try:
        client = ipaddress.ip_network(counted_address(address), strict=False)
    except ValueError:
        return None
    if not isinstance(client, ipaddress.IPv6Network) or client.prefixlen < IPV6_SITE_PREFIX:
        return None
    return str(ipaddress.IPv6Network((client.network_address, IPV6_SITE_PREFIX), strict=False))


def counted_keys(address: str) -> tuple[tuple[str, int], ...]:
    """What a per-address cap of client ``address`` (a peer address, or a client as
    `counted_address` gives it) counts it under, each with how many times the cap it may hold
    there: the client itself once, and for an IPv6 client its /48 `SITE_SHARE` times
    (`counted_site`). A use is refused when any of them is full.

    >>> counted_keys("2001:db8:1:2::7")
    (('2001:db8:1:2::/64', 1), ('2001:db8:1::/48', 4))
    >>> counted_keys("192.0.2.7")
    (('192.0.2.7', 1),)
    """
    client = counted_address(address)
    site = counted_site(client)
    return ((client, 1),) if site is None else ((client, 1), (site, SITE_SHARE))


def count_within(counts: Counter[str], address: str | tuple[tuple[str, int], ...], cap: int) -> bool:
    """Count one more use of client ``address`` in ``counts`` under each of its `counted_keys`
    (or under the keys given in its place, each with its share, as `counted_keys` gives them),
    unless one of them already holds its share of ``cap`` (0: no cap); whether it was counted.

    >>> held: Counter[str] = Counter()
    >>> [count_within(held, "2001:db8:1:2::7", 1) for _ in range(2)]
    [True, False]
    >>> held["2001:db8:1::/48"]
    1
    """
    keys = counted_keys(address) if isinstance(address, str) else address
    if cap and any(counts[key] >= cap * share for key, share in keys):
        return False
    counts.update(key for key, _share in keys)
    return True
