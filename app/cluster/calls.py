"""One Redis call bounded in time, as every part of `app.cluster` makes it."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from typing import Any

from redis.exceptions import RedisError

__all__ = ["bounded"]


async def bounded(work: Awaitable[Any], timeout_s: float) -> Any:
    """``work``'s result (a redis-py call); raises ConnectionError when Redis does not answer
    within ``timeout_s`` seconds, refuses the connection or fails it (this never retries)."""
    try:
        async with asyncio.timeout(timeout_s):
            return await work
    except (RedisError, OSError, TimeoutError) as error:
        raise ConnectionError(f"Redis did not answer: {type(error).__name__}") from None
