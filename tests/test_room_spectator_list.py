"""The host's list of who watches, in-process: every spectator present, silent ones too, by the
name it gave or none, in the order they came; a name, a leaving and a removal change it. Only the
host's sockets get it: a silent spectator's tag reaches nobody else."""

from __future__ import annotations

import json
from pathlib import Path

from app.rooms import chat, host
from tests.roomkit import FakeOutbox, Table, run_table

BOTS = [None, None, "greedy", "greedy", "greedy"]


async def _spectate(
    table: Table, key: str | None = None, as_host: bool = False
) -> tuple[FakeOutbox, str, str]:
    """A spectator connects (with the ``key`` an earlier welcome gave it; with ``as_host``, the
    host's token too): its outbox, tag and key."""
    conn = FakeOutbox()
    await table.room.connect(conn, None, host=table.host_token if as_host else None, watcher=key)
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
