"""What several server processes share besides the rooms' leases (docs/cluster.md, "What is
shared"): admin sessions, each process's board (its listed tables and the open rooms per creating
address), and asks to every process (the admin's live rooms, closing a room hosted elsewhere).

Keys (``P`` is the prefix, ``domeng`` by default; ``ID`` a process's holder id, host:pid:random):

- ``P:admin:session:SHA``: an admin session's expiry (epoch seconds), expiring with it; ``SHA``
  is the SHA-256 of its token (the token itself is never stored);
- ``P:procs``: sorted set of the live processes' ids, scored by their last publication (epoch ms);
- ``P:proc:ID:tables``: the process's listed tables (JSON), expiring after ``stale_s``;
- ``P:proc:ID:owners``: hash, client address (and IPv6 /48, for all its /64s together) →
  unfinished rooms it created on that process, expiring after ``stale_s``;
- ``P:ask:dbN`` (a channel; N is the Redis URL's database, as Redis's channels are shared by all
  its databases): asks to every process, ``{"kind", "body", "reply", "from", "until"}``;
  an ask received after ``until`` (epoch ms: the asker stopped waiting) is not acted on;
- ``P:reply:RANDOM``: the answers to one ask (a list of ``{"from", "answer"}``), for a minute.

Every call is bounded by ``timeout_s`` and raises ConnectionError when Redis does not answer in
time (this module never retries); the board's readers skip a process whose publication is older
than ``stale_s`` (it died or lost Redis).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import secrets
import time
from collections.abc import Awaitable, Callable
from typing import Any, Final

import structlog
from redis.asyncio import Redis
from redis.asyncio.retry import Retry
from redis.backoff import NoBackoff
from redis.exceptions import RedisError
from redis.exceptions import TimeoutError as RedisTimeoutError

from app.cluster.calls import bounded
from app.tasks import stop

__all__ = ["AskHandler", "RedisShared"]

_log = structlog.get_logger("domeng.cluster")

AskHandler = Callable[[str, dict[str, Any]], Awaitable[Any]]
"""Answers an ask of ``kind`` with ``body`` on this process: a JSON-able answer (None: nothing here)."""

_PUBLISH: Final = """
redis.call('ZADD', KEYS[1], ARGV[1], ARGV[2])
redis.call('SET', KEYS[2], ARGV[3], 'PX', ARGV[4])
redis.call('DEL', KEYS[3])
for i = 5, #ARGV, 2 do redis.call('HSET', KEYS[3], ARGV[i], ARGV[i + 1]) end
redis.call('PEXPIRE', KEYS[3], ARGV[4])
return 1
"""
"""KEYS: procs, tables, owners; ARGV: now ms, id, tables JSON, stale ms, then address, count pairs."""


class RedisShared:
    """The shared state of the processes on the Redis at ``url``; this process is ``holder`` (the
    id its leases carry). `close` it after use; `serve` answers asks until then."""

    def __init__(
        self, url: str, holder: str, *, prefix: str = "domeng", timeout_s: float = 1.0, stale_s: float = 6.0
    ) -> None:
        self.holder = holder
        self.prefix = prefix
        self.timeout_s = timeout_s
        self.stale_s = stale_s
        self._redis: Redis = Redis.from_url(
            url, socket_timeout=timeout_s, socket_connect_timeout=timeout_s, retry=Retry(NoBackoff(), 0)
        )
        self._publish = self._redis.register_script(_PUBLISH)
        database = self._redis.connection_pool.connection_kwargs.get("db", 0)
        self.ask_channel = self._key("ask", f"db{database}")
        """The channel of the asks: a deployment on another database of the same Redis, with the
        same prefix, neither hears this one's asks nor is waited for."""
        self._listener: asyncio.Task[None] | None = None
        self.serving = False
        """Whether this process is subscribed to the asks now (tests wait on it)."""
        self._answering: set[asyncio.Task[None]] = set()

    async def close(self) -> None:
        """Stop answering asks, take this process off the board, close the connections."""
        listener, self._listener = self._listener, None
        if listener is not None:
            await stop(listener)  # a Redis call may swallow one cancellation (app.tasks)
        with contextlib.suppress(ConnectionError):
            await self._call(self._unpublish())
        await self._redis.aclose()

    async def _call(self, work: Awaitable[Any]) -> Any:
        return await bounded(work, self.timeout_s)

    def _key(self, *parts: str) -> str:
        return ":".join((self.prefix, *parts))

    # -- admin sessions ------------------------------------------------------------------------

    async def put_session(self, digest: str, expires_at: float) -> None:
        """Keep a session (``digest``: `app.admin.auth.AdminAuth.digest`) until ``expires_at``
        (epoch seconds)."""
        key = self._key("admin", "session", digest)
        await self._call(self._redis.set(key, repr(expires_at), pxat=max(1, int(expires_at * 1000))))

    async def session(self, digest: str) -> float | None:
        """The expiry (epoch seconds) of the session ``digest``, or None (unknown or expired)."""
        value = await self._call(self._redis.get(self._key("admin", "session", digest)))
        return None if value is None else float(value)

    async def end_session(self, digest: str) -> None:
        """End the session ``digest`` on every process."""
        await self._call(self._redis.delete(self._key("admin", "session", digest)))

    # -- the board: what each process hosts ----------------------------------------------------

    async def publish(self, tables: list[dict[str, Any]], owners: dict[str, int]) -> None:
        """This process's listed tables (each with ``waiting_s`` as of now) and its unfinished rooms
        per creating address, replacing what it published before."""
        now_ms = int(time.time() * 1000)
        pairs = [item for address, count in owners.items() if count for item in (address, count)]
        mine = self._key("proc", self.holder)
        keys = [self._key("procs"), f"{mine}:tables", f"{mine}:owners"]
        body = json.dumps({"at": now_ms, "tables": tables})
        await self._call(
            self._publish(keys=keys, args=[now_ms, self.holder, body, int(self.stale_s * 1000), *pairs])
        )

    async def _unpublish(self) -> None:
        async with self._redis.pipeline(transaction=True) as pipe:
            pipe.zrem(self._key("procs"), self.holder)
            pipe.delete(self._key("proc", self.holder, "tables"), self._key("proc", self.holder, "owners"))
            await pipe.execute()

    async def processes(self) -> list[str]:
        """The ids of the processes that published within ``stale_s`` (this one included);
        forgets the others."""
        now_ms = int(time.time() * 1000)
        key = self._key("procs")
        async with self._redis.pipeline(transaction=False) as pipe:
            pipe.zremrangebyscore(key, "-inf", now_ms - int(self.stale_s * 1000))
            pipe.zrange(key, 0, -1)
            _, members = await self._call(pipe.execute())
        return sorted(m.decode() for m in members)

    async def tables(self) -> list[dict[str, Any]]:
        """The tables the *other* processes list, each with ``waiting_s`` brought up to now and
        ``process`` (its host's id)."""
        others = [p for p in await self.processes() if p != self.holder]
        if not others:
            return []
        bodies = await self._call(self._redis.mget([self._key("proc", p, "tables") for p in others]))
        now_ms = time.time() * 1000
        listed: list[dict[str, Any]] = []
        for process, body in zip(others, bodies, strict=True):
            if body is None:
                continue
            board = json.loads(body)
            for table in board["tables"]:
                waited = table["waiting_s"] + max(0.0, now_ms - board["at"]) / 1000
                listed.append({**table, "waiting_s": round(waited, 1), "process": process})
        return listed

    async def rooms_of(self, address: str) -> int:
        """Unfinished rooms ``address`` created on the *other* processes (as last published)."""
        others = [p for p in await self.processes() if p != self.holder]
        if not others:
            return 0
        async with self._redis.pipeline(transaction=False) as pipe:
            for process in others:
                pipe.hget(self._key("proc", process, "owners"), address)
            counts = await self._call(pipe.execute())
        return sum(int(c) for c in counts if c is not None)

    # -- asks to every process -----------------------------------------------------------------

    def serve(self, handler: AskHandler) -> None:
        """Answer every ask with ``handler`` in the background until `close` (subscribing, and
        subscribing again after Redis was unreachable, by itself)."""
        if self._listener is not None:
            raise RuntimeError("already answering asks")
        self._listener = asyncio.create_task(self._listen(handler), name="cluster-asks")

    async def _listen(self, handler: AskHandler) -> None:
        pubsub = self._redis.pubsub(ignore_subscribe_messages=True)
        try:
            while True:
                try:
                    if not self.serving:
                        await pubsub.subscribe(self.ask_channel)
                        self.serving = True
                    message = await pubsub.get_message(timeout=1.0)
                except (RedisError, OSError) as error:
                    if self.serving:
                        _log.warning("redis_unreachable", at="asks", error=type(error).__name__)
                    self.serving = False
                    await asyncio.sleep(1.0)
                    continue
                if message is None or message.get("type") != "message":
                    continue
                task = asyncio.create_task(self._answer(message["data"], handler))
                self._answering.add(task)
                task.add_done_callback(self._answering.discard)
        finally:
            self.serving = False
            with contextlib.suppress(Exception):
                await pubsub.aclose()

    async def _answer(self, data: bytes, handler: AskHandler) -> None:
        try:
            ask = json.loads(data)
            kind, body, reply = str(ask["kind"]), dict(ask.get("body") or {}), str(ask["reply"])
        except (ValueError, TypeError, KeyError):
            _log.warning("ask_malformed", size=len(data))
            return
        if ask.get("from") == self.holder:
            return  # the asker answers for itself
        if time.time() * 1000 > float(ask.get("until") or 0):
            _log.warning("ask_expired", kind=kind)  # e.g. this process was paused: nobody waits now
            return
        try:
            answer = await handler(kind, body)
        except Exception:
            _log.exception("ask_failed", kind=ask.get("kind"))
            answer = {"error": "failed"}
        record = json.dumps({"from": self.holder, "answer": answer})
        with contextlib.suppress(ConnectionError):
            async with self._redis.pipeline(transaction=True) as pipe:
                pipe.rpush(reply, record)
                pipe.expire(reply, 60)
                await self._call(pipe.execute())

    async def ask(self, kind: str, body: dict[str, Any], timeout_s: float = 3.0) -> dict[str, Any]:
        """Ask every other process (``kind``, ``body``); their answers by process id, as many as
        came within ``timeout_s`` seconds (a process that did not answer is missing, and does not
        act on the ask later). Raises ConnectionError when Redis cannot be reached (a wait whose
        empty reply only came late is not that: the next wait goes on until the deadline)."""
        reply = self._key("reply", secrets.token_hex(8))
        until = int((time.time() + timeout_s) * 1000)  # an answer after that is never acted on
        message = json.dumps(
            {"kind": kind, "body": body, "reply": reply, "from": self.holder, "until": until}
        )
        receivers = int(await self._call(self._redis.publish(self.ask_channel, message)))
        expected = receivers - 1 if self.serving else receivers
        answers: dict[str, Any] = {}
        deadline = time.monotonic() + timeout_s
        while len(answers) < expected and (left := deadline - time.monotonic()) > 0:
            # Redis ends the wait after half the socket's timeout, so its empty reply has the other
            # half to arrive; on a loaded machine it can still come late: the client then drops the
            # connection, and the next wait takes a new one (a Redis that is gone shows in its error)
            try:
                popped = await self._redis.blpop([reply], timeout=max(0.01, min(left, self.timeout_s * 0.5)))
            except (RedisTimeoutError, TimeoutError):
                continue
            except (RedisError, OSError) as error:
                raise ConnectionError(f"Redis did not answer: {type(error).__name__}") from None
            if popped is not None:
                record = json.loads(popped[1])
                answers[record["from"]] = record["answer"]
        with contextlib.suppress(RedisError, OSError):
            await self._redis.delete(reply)
        return answers

    async def holder_of(self, code: str) -> str | None:
        """The id of the process holding room ``code``'s lease now (docs/cluster.md), or None."""
        value = await self._call(self._redis.get(f"{self.prefix}:{{{code}}}:lease"))
        if value is None:
            return None
        holder, _, _ = bytes(value).decode().rpartition(":")
        return holder
