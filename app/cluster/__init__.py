"""Several server processes sharing the rooms (docs/cluster.md): each room's ownership lease in
Redis, with its fencing token. Imported only when ``DOMENG_REDIS_URL`` is set; it imports nothing
of the server (the hub holds leases through its `app.rooms.ports.Leases` port)."""

from __future__ import annotations

from app.cluster.leases import RedisLease, RedisLeases

__all__ = ["RedisLease", "RedisLeases"]
