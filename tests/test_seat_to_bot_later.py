"""A person whose seat the host gave to a bot while they were away opens the link later: their
token's hello is closed with 4007 ("the host gave this seat to a bot"), as their socket would
have been, not with 4004 (a token the room never knew), also after a restart that loads the room
from the store (``seats.former_token_hash``, migration 0024); an unknown token still gets 4004."""

from __future__ import annotations

import contextlib
from pathlib import Path

import httpx
import pytest
from websockets.exceptions import ConnectionClosed

from tests.adminkit import POSTGRES_URL, scratch_postgres
from tests.serverkit import Client, ServerProcess


def _close_of(server: ServerProcess, code: str, token: str) -> tuple[int, str]:
    """The code and reason the server closes a hello with ``token`` with."""
    client = Client(server, code, token)
    with pytest.raises(ConnectionClosed) as closed:
        client.wait_for(lambda m: False, timeout=10)
    assert closed.value.rcvd is not None
    return closed.value.rcvd.code, closed.value.rcvd.reason


@pytest.mark.parametrize("database", ["sqlite", "postgresql"])
def test_an_away_players_token_is_told_the_host_gave_the_seat_to_a_bot(tmp_path: Path, database: str) -> None:
    if database == "postgresql" and not POSTGRES_URL:
        pytest.skip("DOMENG_TEST_POSTGRES_URL is not set")
    with contextlib.ExitStack() as stack:
        # a server without Redis holds its PostgreSQL database alone (app.store.pghold): one of its own
        url = stack.enter_context(scratch_postgres("seat")) if database == "postgresql" else None
        server = ServerProcess(tmp_path, database_url=url).start()
        stack.callback(server.stop)
        room = server.create_room(bots=[None, None, "greedy", "greedy", "greedy"], turn_timer_s=0)
        code, host = room["code"], {"Authorization": f"Bearer {room['host_token']}"}
        ana = server.claim(code, 0, "Ana").json()["token"]
        dewi = server.claim(code, 1, "Dewi").json()["token"]
        assert server.start_match(code, room["host_token"]).status_code == 200
        # Dewi has no socket open: the host gives her seat to a bot, then changes its level
        seat = f"{server.url}/api/rooms/{code}/seats/1/bot"
        for level in ("medium", "hard"):
            swap = httpx.put(seat, json={"level": level}, headers=host)
            assert swap.status_code == 200, swap.text
        said = (4007, "the host gave this seat to a bot")
        assert _close_of(server, code, dewi) == said
        assert _close_of(server, code, "forged-token-forged-token")[0] == 4004
        # the room loaded again from the store knows it too, and Ana's token still opens her seat
        server.stop()
        server = ServerProcess(tmp_path, database_url=url).start()
        stack.callback(server.stop)
        assert _close_of(server, code, dewi) == said
        assert _close_of(server, code, "forged-token-forged-token")[0] == 4004
        player = Client(server, code, ana)
        stack.callback(player.close)
        assert player.wait_for(lambda m: m["type"] == "welcome")["seat"] == 0
