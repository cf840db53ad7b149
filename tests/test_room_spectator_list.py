"""The host's list of who watches, in-process: every spectator present, silent ones too, by the
name it gave or none, in the order they came; a name, a leaving and a removal change it. Only the
host's sockets get it: a silent spectator's tag reaches nobody else."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from starlette.websockets import WebSocketState

from app.edge.connection import Connection
from app.rooms import chat, host
from app.rooms.errors import RoomError
from tests.roomkit import FakeOutbox, Table, reopen, run_table

BOTS = [None, None, "greedy", "greedy", "greedy"]


async def _spectate(
    table: Table, key: str | None = None, as_host: bool = False, address: str | None = None
) -> tuple[FakeOutbox, str, str]:
    """A spectator connects (with the ``key`` an earlier welcome gave it; with ``as_host``, the
    host's token too; from client ``address``): its outbox, tag and key."""
    conn = FakeOutbox()
    await table.room.connect(
        conn, None, host=table.host_token if as_host else None, watcher=key, address=address
    )
    (welcome,) = conn.of_type("welcome")
    return conn, welcome["tag"], welcome["watcher"]


def _listed(conn: FakeOutbox) -> list[tuple[str, str]]:
    """The last list of spectators ``conn`` was sent, as (tag, name)."""
    return [(s["tag"], s["name"]) for s in conn.of_type("spectators")[-1]["spectators"]]


def test_the_host_is_told_every_spectator_present_and_nobody_else_is(tmp_path: Path) -> None:
    async def body(table: Table) -> None:
        ana_token = await table.room.call(lambda r: host.claim(r, 0, "Ana"))
        ana = await table.watch(ana_token, host=True)  # the host, seated
        _, budi = await table.sit(1, "Budi")
        assert _listed(ana) == []
        dewi, dewi_tag, dewi_key = await _spectate(table)
        quiet, quiet_tag, _ = await _spectate(table)
        assert _listed(ana) == [(dewi_tag, ""), (quiet_tag, "")]  # nobody wrote a line
        await table.room.call(lambda r: chat.name_spectator(r, dewi, "Dewi"))
        assert _listed(ana) == [(dewi_tag, "Dewi"), (quiet_tag, "")]
        tab, tab_tag, _ = await _spectate(table, dewi_key)  # Dewi's second tab: listed once
        assert tab_tag == dewi_tag and _listed(ana) == [(dewi_tag, "Dewi"), (quiet_tag, "")]
        watching_host, _, _ = await _spectate(table, as_host=True)  # the host's own tab watching
        assert _listed(watching_host) == _listed(ana)  # told too, and not listed itself

        table.room.disconnect(quiet)
        await table.room.settled()
        assert _listed(ana) == [(dewi_tag, "Dewi")]
        removed = await table.room.call(lambda r: host.remove_spectator(r, dewi_tag))
        assert removed == 2 and _listed(ana) == []

        for other in (budi, dewi, quiet, tab):  # a seat and the spectators: no list, no silent tag
            assert other.of_type("spectators") == []
        assert quiet_tag not in json.dumps(budi.frames) + json.dumps(dewi.frames)

    run_table(tmp_path, body, bots=BOTS)


async def _refused(table: Table, key: str | None, address: str | None) -> None:
    """A spectator's socket with ``key`` from ``address`` is refused as removed (4006 at the edge)."""
    conn = FakeOutbox()
    with pytest.raises(RoomError) as refused:
        await table.room.connect(conn, None, watcher=key, address=address)
    assert refused.value.code == "spectator_removed"
    assert conn.frames == [] and conn not in table.room.conns


def test_a_removed_spectator_stays_out_by_key_and_address_after_a_restart_too(tmp_path: Path) -> None:
    async def body(table: Table) -> None:
        ana_token = await table.room.call(lambda r: host.claim(r, 0, "Ana"))
        ana = await table.watch(ana_token, host=True)
        await table.room.call(lambda r: chat.set_rules(r, True, {}))
        dewi, dewi_tag, dewi_key = await _spectate(table, address="192.0.2.7")
        flat, flat_tag, flat_key = await _spectate(table, address="192.0.2.7")  # Dewi's flatmate
        other, _, _ = await _spectate(table, address="198.51.100.1")
        assert await table.room.call(lambda r: host.remove_spectator(r, dewi_tag)) == 1
        assert dewi.closed_for == "spectator_removed"

        await _refused(table, dewi_key, "192.0.2.7")  # a reload
        await _refused(table, None, "192.0.2.7")  # a private window: a new key, the same address
        await _refused(table, dewi_key, "203.0.113.9")  # the same key from elsewhere
        # the flatmate the host saw watching is spared, a new window of theirs too; others come
        again, again_tag, _ = await _spectate(table, flat_key, address="192.0.2.7")
        assert again_tag == flat_tag
        await _spectate(table, address="198.51.100.2")
        await _spectate(table, as_host=True, address="192.0.2.7")  # the host's own tab: never
        assert not flat.closed and not other.closed and not again.closed
        assert dewi_tag not in [tag for tag, _ in _listed(ana)]

        moved = await reopen(table)  # a restart (or the room moving): the removal was stored
        await _refused(moved, dewi_key, "192.0.2.7")
        await _refused(moved, None, "192.0.2.7")
        await _spectate(moved, flat_key, address="192.0.2.7")
        assert "192.0.2.7" not in json.dumps(await moved.room.call(chat.rules_of))  # only its hash

    run_table(tmp_path, body, bots=BOTS)


class _StalledSocket:
    """A host's WebSocket that does not read: every write waits until ``reading`` is set."""

    def __init__(self) -> None:
        self.written: list[dict[str, Any]] = []
        self.closed_with: list[int] = []
        self.reading = asyncio.Event()
        self.application_state = WebSocketState.CONNECTED

    async def send_text(self, text: str) -> None:
        await self.reading.wait()
        self.written.append(json.loads(text))

    async def close(self, code: int = 1000, reason: str | None = None) -> None:
        self.closed_with.append(code)
        self.application_state = WebSocketState.DISCONNECTED


def test_a_host_that_reads_slowly_gets_the_latest_list_and_is_not_cut_off(tmp_path: Path) -> None:
    async def body(table: Table) -> None:
        socket = _StalledSocket()
        host_conn = Connection(socket, 16)  # type: ignore[arg-type]
        host_conn.start()
        await table.room.connect(host_conn, None, host=table.host_token)
        dewi, dewi_tag, _ = await _spectate(table)
        for n in range(60):  # a spectator renaming itself over and over
            await table.room.call(lambda r, n=n: chat.name_spectator(r, dewi, f"Dewi {n}"))
        _, quiet_tag, _ = await _spectate(table)
        assert not host_conn.closed  # the old code queued every list and closed it (4002)
        socket.reading.set()
        latest = [
            {"tag": dewi_tag, "name": "Dewi 59", "muted": False},
            {"tag": quiet_tag, "name": "", "muted": False},
        ]
        async with asyncio.timeout(5):
            while not any(f.get("spectators") == latest for f in socket.written):
                await asyncio.sleep(0)
        lists = [f["spectators"] for f in socket.written if f["type"] == "spectators"]
        assert lists[-1] == latest and len(lists) <= 3  # stale lists were never sent
        assert socket.closed_with == [] and not host_conn.closed
        await host_conn.stop()

    run_table(tmp_path, body, bots=BOTS)
