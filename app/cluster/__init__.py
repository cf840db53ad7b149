"""Several server processes sharing the rooms (docs/cluster.md): each room's ownership lease in
Redis, with its fencing token, and the relay of sockets to a room's owner (Redis pub/sub).
Imported only when ``DOMENG_REDIS_URL`` is set; it imports nothing of the server (the hub holds
leases through its `app.rooms.ports.Leases` port, the edge the relay through its own ports)."""

from __future__ import annotations

from app.cluster.leases import RedisLease, RedisLeases
from app.cluster.relay import RedisRelay, RelayLink, RelayOutbox

__all__ = ["RedisLease", "RedisLeases", "RedisRelay", "RelayLink", "RelayOutbox"]
