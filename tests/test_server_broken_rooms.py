"""A stored match that cannot be rebuilt, whatever is broken in it, is answered as no room: its
link ``GET /api/rooms/{code}`` answers 404 ``no_such_room``, a socket to it closes with 4003, the
lobby's "Your tables" (``GET /api/rooms/status``) shows it as null once its link was opened (at
once for rules that cannot be made), and the server logs each failure once with the room's code
(``room_restore_failed``, no traceback, no token). A failure reading the match back
(`app.store.Store.load_room`) was not caught: the link answered 500 and the socket failed with an
internal error. A real server on a real store, SQLite and PostgreSQL (when
DOMENG_TEST_POSTGRES_URL is set), whose rows are broken as no release writes them."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
import pytest
from sqlalchemy import insert, update
from websockets.exceptions import ConnectionClosed, InvalidStatus
from websockets.sync.client import connect

from app.edge.protocol import CLOSE_ROOM_CLOSED
from app.store import SeatSpec, Store, sqlite_url
from app.store.models import Hint, Match, Round, Tally
from engine.hashing import commitment_of
from engine.variants import make_rules
from tests.adminkit import POSTGRES_URL, scratch_postgres
from tests.serverkit import ServerProcess
from tests.test_store import deal_json, new_match

HOST_HASH = "host-hash-of-a-broken-room"
SEATS = [
    SeatSpec("human", name="Ana", token_hash="seat-hash-of-a-broken-room", seat=0, ready=True),
    *(SeatSpec("bot", bot_level="easy", seat=seat) for seat in range(1, 5)),
]

Break = Callable[[Store, int], Awaitable[None]]


@pytest.fixture(params=["sqlite", "postgresql"])
def database_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """A fresh SQLite file, or a scratch PostgreSQL database: the server runs without Redis, so it
    holds its database alone (`app.store.pghold`) and shares none with other tests' servers."""
    if request.param == "sqlite":
        yield sqlite_url(tmp_path / "data")
        return
    if not POSTGRES_URL:
        pytest.skip("DOMENG_TEST_POSTGRES_URL is not set")
    with scratch_postgres("server") as url:
        yield url


async def _change(store: Store, statement: Any) -> None:
    async with store.engine.begin() as connection:
        await connection.execute(statement)


def _match(**values: Any) -> Break:
    async def apply(store: Store, match_id: int) -> None:
        await _change(store, update(Match).where(Match.id == match_id).values(**values))

    return apply


def _rounds(before: int, **values: Any) -> Break:
    """The rounds before round ``before`` given ``values`` (an ``outcome``: ended)."""

    async def apply(store: Store, match_id: int) -> None:
        await _change(
            store, update(Round).where(Round.match_id == match_id, Round.index < before).values(**values)
        )

    return apply


async def _as_stored(store: Store, match_id: int) -> None:
    """Nothing changed: the rounds as dealt, none ended."""


def _both(*steps: Break) -> Break:
    async def apply(store: Store, match_id: int) -> None:
        for step in steps:
            await step(store, match_id)

    return apply


def _tally_of_no_seat(store: Store, match_id: int) -> Awaitable[None]:
    row = {"match_id": match_id, "round_index": 0, "seat": 7, "stones": 0, "received": 1, "paid": 0}
    return _change(store, insert(Tally).values(**row, points=0, pending=0))


def _hint_no_object(store: Store, match_id: int) -> Awaitable[None]:
    row = {"match_id": match_id, "round_index": 2, "seq": 0, "seat": 0, "action": [1, 2]}
    return _change(store, insert(Hint).values(**row, created_at=datetime.now(UTC)))


_ENDED = _rounds(2, outcome={"table": 0})
BROKEN: dict[str, tuple[int, Break]] = {
    # (rounds dealt, what breaks the stored match); read back by the store (`Store.load_room`):
    "earlier round without its end": (3, _as_stored),
    "tally of no seat": (3, _both(_ENDED, _tally_of_no_seat)),
    "hint that is no action": (3, _hint_no_object),
    # rebuilt by the room (`RoomMaker.restore`):
    "options that are no object": (1, _match(options=[1, 2])),
    "start that is no object": (1, _match(start="x")),
    "earlier outcome that is no object": (3, _rounds(2, outcome=[1])),
    "outcome without its table": (3, _ENDED),
    "deal that does not replay": (1, _rounds(1, deal={"hands": [], "rest": []})),
}


async def _stored(url: str) -> tuple[str, dict[str, str]]:
    """A sound playing room and one room for each of `BROKEN`, by case."""
    async with Store(url) as store:
        codes: dict[str, str] = {}
        for case, (dealt, breaks) in [("sound", (1, _as_stored)), *BROKEN.items()]:
            match_id, code = await new_match(store, seats=SEATS, host_token_hash=HOST_HASH)
            await store.save_room(match_id, 1, status="playing")
            for index in range(dealt):
                deal = make_rules("domeng").deal_from_seed(f"s{index}")
                await store.start_round(
                    match_id, index, f"s{index}", commitment_of(f"s{index}"), deal_json(deal), 2 + index
                )
            await breaks(store, match_id)
            codes[case] = code
        return codes.pop("sound"), codes


def _close_code(server: ServerProcess, code: str) -> int | str | None:
    """The close code of a socket to room ``code`` that says hello as a spectator, None when the
    room sends a state, or ``"HTTP 500"`` say when the handshake was refused."""
    try:
        ws = connect(f"{server.ws_base}/ws/rooms/{code}", open_timeout=10)
    except InvalidStatus as refused:
        return f"HTTP {refused.response.status_code}"
    with ws:
        try:
            ws.send(json.dumps({"type": "hello", "protocol": 1}))
            while True:
                if json.loads(ws.recv(timeout=10))["type"] == "state":
                    return None
        except ConnectionClosed as closed:
            return None if closed.rcvd is None else closed.rcvd.code


def test_a_stored_match_that_cannot_be_rebuilt_is_no_room(database_url: str, tmp_path: Path) -> None:
    """Each case of `BROKEN`: 404 ``no_such_room``, a socket closed with 4003, null in "Your
    tables" (before its link is opened too, for rules that cannot be made), one log line for each
    opening; the sound room beside them opens."""
    sound, broken = asyncio.run(_stored(database_url))
    server = ServerProcess(tmp_path / "data", database_url=database_url).start()
    try:
        codes = [sound, *broken.values()]
        before = _statuses(server, codes)
        linked = {
            case: httpx.get(f"{server.url}/api/rooms/{code}", timeout=10) for case, code in broken.items()
        }
        closed = {case: _close_code(server, code) for case, code in broken.items()}
        shown = _statuses(server, codes)
        played = httpx.get(f"{server.url}/api/rooms/{sound}", timeout=10)
        sound_closed = _close_code(server, sound)
    finally:
        server.stop()
    assert {case: reply.status_code for case, reply in linked.items()} == dict.fromkeys(broken, 404)
    assert all(reply.json()["detail"]["code"] == "no_such_room" for reply in linked.values())
    assert closed == dict.fromkeys(broken, CLOSE_ROOM_CLOSED)
    assert {case: shown[code] for case, code in broken.items()} == dict.fromkeys(broken)
    assert shown[sound] is not None and shown[sound]["status"] == "playing"
    assert before[broken["options that are no object"]] is None  # its rules cannot be made: known unread
    assert played.status_code == 200 and sound_closed is None
    log = server.log()
    failures = [line for line in map(_json, log.splitlines()) if line.get("event") == "room_restore_failed"]
    # once for each opening (the link, then the socket), naming the room
    assert sorted(line["room"] for line in failures) == sorted([*broken.values()] * 2), failures
    assert "Traceback" not in log and HOST_HASH not in log and "seat-hash-of" not in log


def _statuses(server: ServerProcess, codes: list[str]) -> dict[str, Any]:
    """``GET /api/rooms/status`` of each code (as "Your tables" asks for a few at a time): its
    answer, or ``"HTTP 500"`` say when the read was not answered 200."""
    shown: dict[str, Any] = {}
    for code in codes:
        reply = httpx.get(f"{server.url}/api/rooms/status", params={"codes": code}, timeout=10)
        shown[code] = reply.json()["rooms"][code] if reply.status_code == 200 else f"HTTP {reply.status_code}"
    return shown


def _json(line: str) -> dict[str, Any]:
    try:
        found = json.loads(line)
    except ValueError:
        return {}
    return found if isinstance(found, dict) else {}
