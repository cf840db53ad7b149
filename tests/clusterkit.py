"""Several processes sharing rooms (docs/cluster.md), for the tests: the real Redis named by
DOMENG_TEST_REDIS_URL (e.g. ``redis://127.0.0.1:6379/9``) and the real PostgreSQL named by
DOMENG_TEST_POSTGRES_URL; the tests skip cleanly without them. `RedisProxy` stands between a
process and Redis, so a test can make Redis unreachable for it (and reachable again) without
touching the Redis that others share.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import uuid
from collections.abc import Awaitable, Callable
from urllib.parse import urlsplit, urlunsplit

import pytest

REDIS_URL = os.environ.get("DOMENG_TEST_REDIS_URL")
POSTGRES_URL = os.environ.get("DOMENG_TEST_POSTGRES_URL")


def need_redis() -> str:
    """DOMENG_TEST_REDIS_URL, or skip the test."""
    if not REDIS_URL:
        pytest.skip("DOMENG_TEST_REDIS_URL is not set")
    return REDIS_URL


def need_postgres() -> str:
    """DOMENG_TEST_POSTGRES_URL, or skip the test."""
    if not POSTGRES_URL:
        pytest.skip("DOMENG_TEST_POSTGRES_URL is not set")
    return POSTGRES_URL


def key_prefix() -> str:
    """A key prefix no other test (or test run) uses, for `app.cluster.RedisLeases`."""
    return f"test-{uuid.uuid4().hex[:10]}"


async def wait_until(condition: Callable[[], bool], timeout: float = 10.0, what: str = "condition") -> None:
    """Wait (bounded by ``timeout`` seconds) until ``condition()`` holds; TimeoutError if not."""
    async with asyncio.timeout(timeout):
        while not condition():
            await asyncio.sleep(0.01)


async def wait_for(attempt: Callable[[], Awaitable[object]], timeout: float = 10.0) -> object:
    """Call ``attempt`` until it returns something other than None (bounded by ``timeout``)."""
    async with asyncio.timeout(timeout):
        while (found := await attempt()) is None:
            await asyncio.sleep(0.02)
        return found


class RedisProxy:
    """A TCP relay on 127.0.0.1 to the Redis of ``url``; `url` is Redis through it. `cut` closes
    the relay and every connection through it (Redis unreachable: connection refused), `mend`
    listens again on the same port."""

    def __init__(self, url: str) -> None:
        parts = urlsplit(url)
        self._target = (parts.hostname or "127.0.0.1", parts.port or 6379)
        self._parts = parts
        self._server: asyncio.Server | None = None
        self._writers: set[asyncio.StreamWriter] = set()
        self.port = 0

    @property
    def url(self) -> str:
        """The same Redis URL, through the relay."""
        return urlunsplit(self._parts._replace(netloc=f"127.0.0.1:{self.port}"))

    async def start(self) -> RedisProxy:
        self._server = await asyncio.start_server(self._relay, "127.0.0.1", self.port)
        self.port = self._server.sockets[0].getsockname()[1]
        return self

    async def cut(self) -> None:
        """Redis unreachable through the relay from now on."""
        server, self._server = self._server, None
        if server is not None:
            server.close()
        for writer in list(self._writers):
            writer.close()
        self._writers.clear()
        if server is not None:
            await server.wait_closed()

    async def mend(self) -> None:
        """Redis reachable through the relay again (same port)."""
        await self.start()

    async def _relay(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            up_reader, up_writer = await asyncio.open_connection(*self._target)
        except OSError:
            writer.close()
            return
        self._writers |= {writer, up_writer}

        async def pipe(source: asyncio.StreamReader, sink: asyncio.StreamWriter) -> None:
            with contextlib.suppress(OSError, asyncio.CancelledError):
                while data := await source.read(65536):
                    sink.write(data)
                    await sink.drain()
            sink.close()

        await asyncio.gather(pipe(reader, up_writer), pipe(up_reader, writer))
        self._writers -= {writer, up_writer}
