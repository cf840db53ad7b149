"""Several server processes sharing the rooms (docs/cluster.md): each room's ownership lease in
Redis, with its fencing token; and what else they share (`RedisShared`: admin sessions, the
lobby's tables, open rooms per address, asks to every process). Imported only when
``DOMENG_REDIS_URL`` is set; it imports nothing of the server (the hub holds leases through its
`app.rooms.ports.Leases` port)."""

from __future__ import annotations

from app.cluster.leases import RedisLease, RedisLeases
from app.cluster.shared import AskHandler, RedisShared

__all__ = ["AskHandler", "RedisLease", "RedisLeases", "RedisShared"]
