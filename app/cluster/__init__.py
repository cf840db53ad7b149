"""Several server processes sharing the rooms (docs/cluster.md): each room's ownership lease in Redis, with
its fencing token; the relay of sockets to a room's owner (Redis pub/sub); and what else they share
(`RedisShared`: admin sessions, the lobby's tables, open rooms per address, asks to every process;
`RedisAttempts`: failed admin sign-ins, checked and counted in one step). Imported only when
``DOMENG_REDIS_URL`` is set; it imports nothing of the server (the hub holds leases through its
`app.rooms.ports.Leases` port, the edge the relay through its own ports)."""

from __future__ import annotations

from app.cluster.attempts import RedisAttempts
from app.cluster.leases import RedisLease, RedisLeases
from app.cluster.relay import RedisRelay, RelayLink, RelayOutbox
from app.cluster.shared import AskHandler, RedisShared

__all__ = [
    "AskHandler",
    "RedisAttempts",
    "RedisLease",
    "RedisLeases",
    "RedisRelay",
    "RedisShared",
    "RelayLink",
    "RelayOutbox",
]
