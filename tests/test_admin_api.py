"""The admin area's API against real server processes on SQLite, and on PostgreSQL (a scratch
database of its own) when DOMENG_TEST_POSTGRES_URL is set: access control on every admin route,
sign-in, the match list and its filters, a match in full, round replays, exports that
`domeng replay` reproduces, players' totals, live rooms and closing one."""

from __future__ import annotations

import contextlib
import io
import itertools
import json
import re
import time
import uuid
import zipfile
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from types import SimpleNamespace
from typing import Any, cast
from urllib.parse import urlencode

import httpx
import pytest
from fastapi.routing import iter_route_contexts
from websockets.exceptions import ConnectionClosed

from app.admin.routes import record_name
from app.store import MatchRow
from app.web.app import create_app
from app.web.settings import Settings
from tests.adminkit import (
    COOKIE,
    POSTGRES_URL,
    SECRET,
    admin_client,
    assert_replay_reproduces,
    login,
    play_bot_match,
    replay_export,
    scratch_postgres,
)
from tests.serverkit import Client, ServerProcess

RUN = uuid.uuid4().hex[:6]
ANA = f"Ana {RUN}"
BUDI = f"Budi {RUN}"
PUBLIC = {("POST", "/api/admin/login"), ("POST", "/api/admin/logout"), ("GET", "/admin/login")}
"""The admin routes open without a session: signing in and out, and the sign-in form."""


def _can_play(message: dict[str, Any]) -> bool:
    view = message.get("view") if message["type"] == "state" else None
    return bool(view) and view["phase"] == "playing" and any("play" in a for a in view["legal"])


@pytest.fixture(scope="module", params=["sqlite", "postgresql"])
def world(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[dict[str, Any]]:
    """A server with the admin secret and three matches: one of five bots played to its end, one
    waiting with Ana seated (and a spectator), one in play stuck on Budi's turn (Budi connected)."""
    if request.param == "postgresql" and not POSTGRES_URL:
        pytest.skip("DOMENG_TEST_POSTGRES_URL is not set")
    with contextlib.ExitStack() as stack:
        database_url = stack.enter_context(scratch_postgres()) if request.param == "postgresql" else None
        server = ServerProcess(
            tmp_path_factory.mktemp(f"admin-{request.param}"),
            env={
                "DOMENG_ADMIN_TOKEN": SECRET,
                "DOMENG_ADMIN_LOGIN_LIMIT": "1000 per minute",
                "DOMENG_ADMIN_LOGIN_LIMIT_ALL": "1000 per minute",
            },
            database_url=database_url,
        ).start()
        try:
            finished = play_bot_match(server)
            waiting = server.create_room(bots=[None, "greedy", "greedy", "random", "random"])
            ana = server.claim(waiting["code"], 0, ANA).json()["token"]
            stuck = server.create_room(bots=[None, "greedy", "greedy", "random", "random"], turn_timer_s=600)
            budi_token = server.claim(stuck["code"], 0, BUDI).json()["token"]
            budi = Client(server, stuck["code"], budi_token)
            assert server.start_match(stuck["code"], stuck["host_token"]).status_code == 200
            budi.wait_for(_can_play, timeout=30)
            spectator = Client(server, waiting["code"])
            spectator.wait_for(lambda m: m["type"] == "state")
            admin = admin_client(server)
            ids = {item["code"]: item["id"] for item in admin.get("/api/admin/matches").json()["items"]}
            yield {
                "server": server,
                "admin": admin,
                "finished": ids[finished["code"]],
                "waiting": ids[waiting["code"]],
                "stuck": ids[stuck["code"]],
                "codes": {"finished": finished["code"], "waiting": waiting["code"], "stuck": stuck["code"]},
                "ana_token": ana,
                "host_token": waiting["host_token"],
                "budi": budi,
                "spectator": spectator,
            }
            admin.close()
            budi.close()
            spectator.close()
        finally:
            server.stop()


# -- access ---------------------------------------------------------------------------------------


def admin_routes() -> list[tuple[str, str]]:
    """Every (method, path) of the app under /admin or /api/admin, from the app's own routes."""
    app = create_app(Settings(admin_token=SECRET))
    found = []
    for route in iter_route_contexts(app.routes):  # included routers flattened, as FastAPI serves them
        if re.match(r"^/(api/)?admin(/|$)", route.path):
            assert route.methods, f"{route.path}: an admin route that is not HTTP needs its own test"
            found += [(method, route.path) for method in sorted(route.methods - {"HEAD"})]
    return found


def test_the_route_list_covers_pages_and_api() -> None:
    routes = set(admin_routes())
    assert routes >= PUBLIC
    assert {
        ("GET", "/api/admin/matches"),
        ("POST", "/api/admin/rooms/{code}/close"),
        ("GET", "/admin"),
    } <= routes
    assert len(routes - PUBLIC) >= 13


def _fill(path: str, world: dict[str, Any]) -> str:
    return (
        path.replace("{match_id}", str(world["finished"]))
        .replace("{index}", "0")
        .replace("{code}", world["codes"]["waiting"])
    )


def test_every_admin_route_refuses_anonymous_players_and_wrong_secrets(world: dict[str, Any]) -> None:
    server = world["server"]
    seat, host = world["ana_token"], world["host_token"]
    attempts: dict[str, dict[str, Any]] = {
        "anonymous": {},
        "seat token as bearer": {"headers": {"Authorization": f"Bearer {seat}"}},
        "seat token as cookie": {"headers": {"Cookie": f"{COOKIE}={seat}; token={seat}"}},
        "seat token in the query": {"params": {"token": seat, "secret": seat}},
        "host token as bearer": {"headers": {"Authorization": f"Bearer {host}"}},
        "wrong secret as bearer": {"headers": {"Authorization": "Bearer not-the-admin-secret-0000"}},
        "wrong secret as cookie": {"headers": {"Cookie": f"{COOKIE}=not-the-admin-secret-0000"}},
        "the secret itself as cookie": {"headers": {"Cookie": f"{COOKIE}={SECRET}"}},
    }
    checked = 0
    for method, path in admin_routes():
        if (method, path) in PUBLIC:
            continue
        url = server.url + _fill(path, world)
        for what, extra in attempts.items():
            reply = httpx.request(method, url, follow_redirects=False, timeout=10, **extra)
            if path.startswith("/api/"):
                assert reply.status_code == 401, (method, path, what, reply.text)
                assert reply.json()["detail"]["code"] == "not_authenticated"
            else:
                assert reply.status_code == 303, (method, path, what)
                # back to the page asked for once signed in (``/admin`` leads to the matches anyway)
                back = "" if path == "/admin" else "?" + urlencode({"next": _fill(path, world)})
                assert reply.headers["location"] == "/admin/login" + back
            assert SECRET not in reply.text
            checked += 1
    assert checked >= 13 * len(attempts)
    # nothing was closed by any of these
    assert world["admin"].get("/api/admin/rooms").json()["rooms"][0]["code"] in world["codes"].values()


def test_the_secret_as_bearer_opens_the_api(world: dict[str, Any]) -> None:
    reply = httpx.get(
        f"{world['server'].url}/api/admin/session", headers={"Authorization": f"Bearer {SECRET}"}, timeout=10
    )
    assert reply.status_code == 200 and reply.json() == {"via": "bearer", "expires_at": None}


def test_login_sets_a_secure_http_only_strict_session_cookie_and_logout_ends_it(
    world: dict[str, Any],
) -> None:
    server = world["server"]
    wrong = login(server, "not-the-admin-secret-0000")
    assert wrong.status_code == 401 and wrong.json()["detail"]["code"] == "wrong_secret"
    assert "set-cookie" not in wrong.headers
    reply = login(server)
    assert reply.status_code == 200
    header = reply.headers["set-cookie"]
    attributes = {part.strip().split("=")[0].lower() for part in header.split(";")}
    assert {"httponly", "secure", "samesite", "max-age", "path"} <= attributes
    assert "samesite=strict" in header.lower() and "path=/" in header.lower()
    assert "max-age=28800" in header.lower()
    token = reply.cookies[COOKIE]
    assert SECRET not in header and len(token) >= 40
    expires = datetime.fromisoformat(reply.json()["expires_at"])
    assert timedelta(hours=7.9) < expires - datetime.now(UTC) <= timedelta(hours=8)
    cookie = {"Cookie": f"{COOKIE}={token}"}
    session = httpx.get(f"{server.url}/api/admin/session", headers=cookie, timeout=10)
    assert session.status_code == 200 and session.json()["via"] == "cookie"
    # another login's session is another token
    assert login(server).cookies[COOKIE] != token
    out = httpx.post(f"{server.url}/api/admin/logout", headers=cookie, timeout=10)
    assert out.status_code == 204 and "max-age=0" in out.headers["set-cookie"].lower()
    assert httpx.get(f"{server.url}/api/admin/session", headers=cookie, timeout=10).status_code == 401


def test_requests_from_another_site_are_refused(world: dict[str, Any]) -> None:
    server = world["server"]
    evil = {"Origin": "http://evil.example"}
    reply = httpx.post(f"{server.url}/api/admin/login", json={"secret": SECRET}, headers=evil, timeout=10)
    assert reply.status_code == 403 and reply.json()["detail"]["code"] == "cross_origin"
    admin: httpx.Client = world["admin"]
    code = world["codes"]["waiting"]
    assert admin.post(f"/api/admin/rooms/{code}/close", headers=evil).status_code == 403
    assert code in {r["code"] for r in admin.get("/api/admin/rooms").json()["rooms"]}


def test_the_api_is_in_the_openapi_schema_with_response_models(world: dict[str, Any]) -> None:
    schema = httpx.get(f"{world['server'].url}/openapi.json", timeout=10).json()
    for method, path in admin_routes():
        if path.startswith("/admin"):
            assert path not in schema["paths"]
            continue
        operation = schema["paths"][path][method.lower()]
        assert "admin" in operation["tags"]
        if path not in ("/api/admin/logout", "/api/admin/matches/{match_id}/record", "/api/admin/export"):
            assert "$ref" in str(operation["responses"]["200"]), path
    components = schema["components"]["schemas"]
    assert {"MatchPage", "MatchDetail", "RoundReplay", "PlayerPage", "RoomList", "RoomClosed"} <= set(
        components
    )


# -- matches --------------------------------------------------------------------------------------


def _ids(admin: httpx.Client, **params: Any) -> list[int]:
    reply = admin.get("/api/admin/matches", params=params)
    assert reply.status_code == 200, reply.text
    return [item["id"] for item in reply.json()["items"]]


def test_match_list_filters_paginates_and_puts_the_newest_first(world: dict[str, Any]) -> None:
    admin: httpx.Client = world["admin"]
    finished, waiting, stuck = world["finished"], world["waiting"], world["stuck"]
    everything = admin.get("/api/admin/matches").json()
    assert [i["id"] for i in everything["items"]] == [stuck, waiting, finished]
    assert everything["total"] == 3
    by_id = {i["id"]: i for i in everything["items"]}
    assert by_id[finished]["status"] == "finished" and by_id[finished]["result"]["match_over"]
    assert by_id[waiting]["status"] == "waiting" and by_id[waiting]["result"] is None
    assert by_id[stuck]["status"] == "playing" and by_id[stuck]["live"]
    assert by_id[finished]["round_count"] == by_id[finished]["result"]["finished_rounds"] >= 1
    seats = by_id[waiting]["seats"]
    assert seats[0] == {
        "seat": 0,
        "kind": "human",
        "name": ANA,
        "bot_level": None,
        "display_name": ANA,
        "former": None,
    }
    assert [s["bot_level"] for s in seats[1:]] == ["greedy", "greedy", "random", "random"]
    result = by_id[finished]["result"]
    assert sum(result["camat_elections"]) == 1 and result["leaders"] == [result["camat"]]

    assert _ids(admin, status="finished") == [finished]
    assert _ids(admin, status="waiting") == [waiting]
    assert _ids(admin, status="playing") == [stuck]
    assert _ids(admin, status="abandoned") == []
    assert _ids(admin, variant="domeng") == [stuck, waiting, finished]
    assert _ids(admin, variant="kozel") == []
    assert _ids(admin, player=ANA.upper()) == [waiting]
    assert _ids(admin, player="budi") == [stuck]
    assert _ids(admin, player="greedy") == [stuck, waiting, finished]
    assert _ids(admin, player="Bot") == [stuck, waiting, finished]  # bots show as "Bot 2 (greedy)"
    assert _ids(admin, player="100%_") == []
    today = datetime.now(UTC).date()
    assert _ids(admin, since=today.isoformat(), until=today.isoformat()) == [stuck, waiting, finished]
    assert _ids(admin, until=(today - timedelta(days=1)).isoformat()) == []
    assert _ids(admin, since=(today + timedelta(days=1)).isoformat()) == []
    first = admin.get("/api/admin/matches", params={"per_page": 2}).json()
    second = admin.get("/api/admin/matches", params={"per_page": 2, "page": 2}).json()
    assert [i["id"] for i in first["items"]] == [stuck, waiting] and first["total"] == 3
    assert [i["id"] for i in second["items"]] == [finished]
    # unknown filters are refused with a message that says what is known (never an empty 200)
    chess = admin.get("/api/admin/matches", params={"variant": "chess"})
    assert chess.status_code == 422
    assert chess.json()["detail"] == {
        "code": "unknown_variant",
        "message": "unknown variant: the variants are domeng, kozel",
    }
    lost = admin.get("/api/admin/matches", params={"status": "lost"})
    assert lost.status_code == 422 and lost.json()["detail"][0]["loc"] == ["query", "status"]
    assert "'waiting', 'playing', 'finished' or 'abandoned'" in lost.json()["detail"][0]["msg"]


def test_a_match_in_full_deals_outcomes_transfers_and_chart(world: dict[str, Any]) -> None:
    admin: httpx.Client = world["admin"]
    detail = admin.get(f"/api/admin/matches/{world['finished']}").json()
    assert detail["options"] == {"camat_target": 1} and detail["replay_error"] is None
    assert len(detail["seats"]) == 5 and detail["turn_timer_s"] == 0
    totals = {"received": [0] * 5, "paid": [0] * 5}
    for r in detail["rounds"]:
        tiles = [t for hand in r["hands"] for t in hand] + r["rest"]
        assert sorted(tiles) == sorted({*tiles}) and len(tiles) == 28
        assert r["rest_name"] == "unused" and len(r["rest"]) == 3
        assert r["replay_agrees"] is True and r["summary"]
        assert r["outcome"]["end"] in {"out", "ceki", "pollo", "block"}
        # the transfers are the round's settlements: one per paid pass, one at the end
        passes = [i for i, a in enumerate(r["actions"]) if a.get("pass")]
        assert [t["action"] for t in r["transfers"]] == [*passes, None]
        received, paid = [0] * 5, [0] * 5
        for t in r["transfers"]:
            assert t["owed"] == t["from_table"] + sum(p["stones"] for p in t["from_payers"]) + t["cancelled"]
            assert t["reason"] in t["text"]
            received[t["receiver"]] += t["received"]
            for p in t["from_payers"]:
                paid[p["seat"]] += p["stones"]
        assert [t["received"] for t in r["tallies"]] == received
        assert [t["paid"] for t in r["tallies"]] == paid
        assert [t["stones"] for t in r["tallies"]] == r["outcome"]["stones"]
        for seat in range(5):
            totals["received"][seat] += received[seat]
            totals["paid"][seat] += paid[seat]
    chart = detail["chart"]
    assert chart["unit"] == "stones" and chart["rounds"] == list(range(1, len(detail["rounds"]) + 1))
    assert [s["values"] for s in chart["series"]] == [
        [r["outcome"]["stones"][seat] for r in detail["rounds"]] for seat in range(5)
    ]
    assert chart["table"] == [r["outcome"]["table"] for r in detail["rounds"]]
    assert detail["rounds"][-1]["outcome"]["camat_elected"]
    assert admin.get("/api/admin/matches/999999").json()["detail"]["code"] == "no_such_match"
    # ids no row can have (past SQL's 64-bit integers, or below 1) name no match either: a clear
    # 404 on every path that takes one, never the database's overflow as a 500
    for match_id in (2**63, 10**30, 0, -1):
        for tail in ("", "/chat", "/record", "/rounds/0/replay", "/rounds/0/review?seat=0"):
            gone = admin.get(f"/api/admin/matches/{match_id}{tail}")
            assert gone.status_code == 404 and gone.json()["detail"]["code"] == "no_such_match", (
                tail,
                gone.text,
            )
    for listing in ("/api/admin/matches", "/api/admin/players"):
        too_far = admin.get(listing, params={"page": 10**20})
        assert too_far.status_code == 422, too_far.text


def test_round_replay_steps_through_every_action_with_every_hand(world: dict[str, Any]) -> None:
    admin: httpx.Client = world["admin"]
    detail = admin.get(f"/api/admin/matches/{world['finished']}").json()
    for index, stored in enumerate(detail["rounds"]):
        replay = admin.get(f"/api/admin/matches/{world['finished']}/rounds/{index}/replay").json()
        frames = replay["frames"]
        assert replay["finished"] and len(frames) == len(stored["actions"]) + 1
        assert frames[0]["hands"] == stored["hands"] and frames[0]["rest"] == stored["rest"]
        assert frames[0]["chain"] == [] and frames[0]["action"] is None
        for before, after in itertools.pairwise(frames):
            held = sum(len(h) for h in after["hands"])
            assert held + len(after["chain"]) == 25
            assert after["action"] == stored["actions"][after["step"] - 1]
            placed = "play" in after["action"]
            assert len(after["chain"]) == len(before["chain"]) + placed
            assert after["text"]
        assert frames[-1]["outcome"] == stored["outcome"]
        assert all(f["outcome"] is None for f in frames[:-1])
        assert frames[-1]["score"]["stones"] == stored["outcome"]["stones"]
    missing = admin.get(f"/api/admin/matches/{world['finished']}/rounds/{len(detail['rounds'])}/replay")
    assert missing.status_code == 404 and missing.json()["detail"]["code"] == "no_such_round"


def test_export_downloads_a_record_that_replays_to_the_stored_results(
    world: dict[str, Any], tmp_path: Path
) -> None:
    admin: httpx.Client = world["admin"]
    reply = admin.get(f"/api/admin/matches/{world['finished']}/record")
    assert reply.status_code == 200
    day = admin.get(f"/api/admin/matches/{world['finished']}").json()["created_at"][:10]
    code = world["codes"]["finished"]
    assert (
        reply.headers["content-disposition"]
        == f'attachment; filename="domeng-{day}-{code}-match1-id{world["finished"]}.json"'
    )
    record = reply.json()
    assert record["format"] == "domeng-record/1" and record["variant"] == "domeng"
    # bots carry their seat (numbered from 1, as at the table), so they stay apart in the record
    assert record["seats"] == [
        "Bot 1 (greedy)",
        "Bot 2 (random)",
        "Bot 3 (greedy)",
        "Bot 4 (random)",
        "Bot 5 (greedy)",
    ]
    path = tmp_path / "export.json"
    path.write_bytes(reply.content)
    detail = admin.get(f"/api/admin/matches/{world['finished']}").json()
    assert_replay_reproduces(replay_export(path), detail)


def test_record_names_say_day_room_and_match_and_never_clash() -> None:
    """Two matches of one room on one day (Play again) get different names: the room's match
    number and the id are in them; a code's odd characters cannot leave the name."""
    at = datetime(2026, 12, 5, 23, 59, tzinfo=UTC)
    rows = [
        SimpleNamespace(id=41, code="ABC123", room_match=1, created_at=at),
        SimpleNamespace(id=42, code="ABC123", room_match=2, created_at=at),
        SimpleNamespace(id=43, code='x/"y', room_match=1, created_at=at),
    ]
    names = [record_name(cast(MatchRow, r)) for r in rows]
    assert names == [
        "domeng-2026-12-05-ABC123-match1-id41.json",
        "domeng-2026-12-05-ABC123-match2-id42.json",
        "domeng-2026-12-05-x__y-match1-id43.json",
    ]


def test_bulk_export_zips_the_records_of_the_filtered_list(world: dict[str, Any], tmp_path: Path) -> None:
    admin: httpx.Client = world["admin"]
    reply = admin.get("/api/admin/export")
    assert reply.status_code == 200, reply.text
    assert reply.headers["content-type"] == "application/zip"
    assert re.fullmatch(
        r'attachment; filename="domeng-matches-\d{4}-\d\d-\d\dT\d{6}Z\.zip"',
        reply.headers["content-disposition"],
    )
    listed = admin.get("/api/admin/matches").json()["items"]
    with zipfile.ZipFile(io.BytesIO(reply.content)) as archive:
        index = [json.loads(line) for line in archive.read("index.jsonl").decode().splitlines()]
        assert [e["id"] for e in index] == [m["id"] for m in listed]  # newest first, as the list
        assert sorted(archive.namelist()) == sorted([*(e["file"] for e in index), "index.jsonl"])
        assert len({e["file"] for e in index}) == len(index)
        # hosted as the list says it: a room in memory holds the waiting and playing ones
        assert {e["id"]: e["hosted"] for e in index} == {m["id"]: m["hosted"] for m in listed}
        assert {e["id"]: e["hosted"] for e in index} == {
            world["finished"]: None,
            world["waiting"]: True,
            world["stuck"]: True,
        }
        for entry in index:
            record = json.loads(archive.read(entry["file"]))
            assert record["format"] == "domeng-record/1"
            assert entry["file"].endswith(f"-{entry['code']}-match1-id{entry['id']}.json")
        finished = next(e for e in index if e["id"] == world["finished"])
        path = tmp_path / finished["file"]
        path.write_bytes(archive.read(finished["file"]))
    detail = admin.get(f"/api/admin/matches/{world['finished']}").json()
    assert_replay_reproduces(replay_export(path), detail)
    # the list's filters choose what is exported
    only = admin.get("/api/admin/export", params={"status": "finished"})
    with zipfile.ZipFile(io.BytesIO(only.content)) as archive:
        assert [json.loads(line)["id"] for line in archive.read("index.jsonl").decode().splitlines()] == [
            world["finished"]
        ]
    unknown = admin.get("/api/admin/export", params={"variant": "chess"})
    assert unknown.status_code == 422 and unknown.json()["detail"]["code"] == "unknown_variant"


def test_matches_in_memory_say_they_are_hosted(world: dict[str, Any]) -> None:
    """A waiting or playing match a room holds now is ``hosted``; a finished one is not asked."""
    admin: httpx.Client = world["admin"]
    hosted = {m["id"]: m["hosted"] for m in admin.get("/api/admin/matches").json()["items"]}
    assert hosted == {world["finished"]: None, world["waiting"]: True, world["stuck"]: True}
    assert admin.get(f"/api/admin/matches/{world['stuck']}").json()["hosted"] is True


# -- players --------------------------------------------------------------------------------------


def test_players_have_totals_of_matches_rounds_stones_and_elections(world: dict[str, Any]) -> None:
    admin: httpx.Client = world["admin"]
    players = admin.get("/api/admin/players").json()
    by_name = {p["display_name"]: p for p in players["items"]}
    assert players["total"] == len(players["items"]) == 4  # Ana, Budi, and two bot levels
    assert by_name[ANA] == {
        "display_name": ANA,
        "kind": "human",
        "name": ANA,
        "bot_level": None,
        "matches": 1,
        "rounds": 0,
        "stones_received": 0,
        "stones_paid": 0,
        "camat_elections": 0,
        "points": 0,
        "goats": 0,
        "replaced": 0,
    }
    detail = admin.get(f"/api/admin/matches/{world['finished']}").json()
    for level, seats in (("greedy", (0, 2, 4)), ("random", (1, 3))):
        bot = by_name[f"Bot ({level})"]
        assert bot["kind"] == "bot" and bot["matches"] == 3
        rounds = [t for r in detail["rounds"] for t in r["tallies"] if t["seat"] in seats]
        assert bot["stones_received"] == sum(t["received"] for t in rounds)
        assert bot["stones_paid"] == sum(t["paid"] for t in rounds)
        assert bot["rounds"] == len(rounds)  # the stuck match has no finished round yet
        elected = [r for r in detail["rounds"] if r["outcome"]["camat_elected"]]
        assert bot["camat_elections"] == sum(1 for r in elected if r["outcome"]["winner"] in seats)
    assert [
        p["display_name"] for p in admin.get("/api/admin/players", params={"name": "ANA "}).json()["items"]
    ] == [ANA]
    bots = admin.get("/api/admin/players", params={"name": "bot"}).json()["items"]
    assert bots and all(p["kind"] == "bot" for p in bots)
    page = admin.get("/api/admin/players", params={"per_page": 1, "page": 2}).json()
    assert len(page["items"]) == 1 and page["total"] == 4


# -- live rooms -----------------------------------------------------------------------------------


def test_live_rooms_show_connections_and_closing_one_keeps_everything_stored(
    world: dict[str, Any], tmp_path: Path
) -> None:
    admin: httpx.Client = world["admin"]
    server: ServerProcess = world["server"]
    rooms = {r["code"]: r for r in admin.get("/api/admin/rooms").json()["rooms"]}
    codes = world["codes"]
    assert set(codes.values()) <= set(rooms)
    waiting, stuck = rooms[codes["waiting"]], rooms[codes["stuck"]]
    assert waiting["status"] == "waiting" and waiting["spectators"] == 1 and waiting["connections"] == 1
    assert waiting["seats"][0]["name"] == ANA and waiting["seats"][0]["connections"] == 0
    assert stuck["status"] == "playing" and stuck["phase"] == "playing" and stuck["to_act"] == 0
    assert stuck["seats"][0]["connections"] == 1 and stuck["turn_deadline_ms"] > time.time() * 1000
    assert stuck["task_alive"] and stuck["match_id"] == world["stuck"]

    before = admin.get(f"/api/admin/matches/{world['stuck']}").json()
    closed = admin.post(f"/api/admin/rooms/{codes['stuck']}/close")
    assert closed.status_code == 200, closed.text
    assert closed.json() == {
        "code": codes["stuck"],
        "match_id": world["stuck"],
        "disconnected": 1,
        "task": "stopped",
        "status": "abandoned",
    }
    with pytest.raises(ConnectionClosed) as gone:
        world["budi"].wait_for(lambda m: False, timeout=10)
    assert gone.value.rcvd is not None and gone.value.rcvd.code == 4003
    assert codes["stuck"] not in {r["code"] for r in admin.get("/api/admin/rooms").json()["rooms"]}
    assert httpx.get(f"{server.url}/api/rooms/{codes['stuck']}", timeout=10).status_code == 404
    assert admin.post(f"/api/admin/rooms/{codes['stuck']}/close").status_code == 404
    # nothing stored is lost: the same rounds and actions, now abandoned (closed), and exportable
    after = admin.get(f"/api/admin/matches/{world['stuck']}").json()
    assert after["status"] == "abandoned" and after["abandoned_reason"] == "closed"
    assert after["rounds"] == before["rounds"] and not after["live"]
    assert after["rounds"][-1]["outcome"] is None
    assert _ids(admin, status="abandoned") == [world["stuck"]]
    assert world["stuck"] not in _ids(admin, status="playing")
    path = tmp_path / "closed.json"
    path.write_bytes(admin.get(f"/api/admin/matches/{world['stuck']}/record").content)
    assert_replay_reproduces(replay_export(path), after)
    last = admin.get(f"/api/admin/matches/{world['stuck']}/rounds/{len(after['rounds']) - 1}/replay").json()
    assert not last["finished"] and last["frames"][-1]["to_act"] == 0


# -- a server without the secret, and one that counts failures ---------------------------------------


def test_without_a_secret_the_admin_area_is_disabled_and_says_so(tmp_path: Path) -> None:
    server = ServerProcess(tmp_path / "data", env={"DOMENG_ADMIN_TOKEN": ""}).start()
    try:
        for method, path in admin_routes():
            url = server.url + path.replace("{match_id}", "1").replace("{index}", "0").replace("{code}", "x")
            reply = httpx.request(method, url, json={"secret": SECRET}, follow_redirects=False, timeout=10)
            assert reply.status_code == 503, (method, path)
            if path.startswith("/api/"):
                assert reply.json()["detail"] == {
                    "code": "admin_disabled",
                    "message": "admin disabled: set DOMENG_ADMIN_TOKEN",
                }
            else:
                assert "admin disabled: set DOMENG_ADMIN_TOKEN" in reply.text
    finally:
        server.stop()


def test_failed_logins_are_rate_limited_per_client_address(tmp_path: Path) -> None:
    server = ServerProcess(
        tmp_path / "data", env={"DOMENG_ADMIN_TOKEN": SECRET, "DOMENG_ADMIN_LOGIN_LIMIT": "3 per minute"}
    ).start()
    try:
        for _ in range(3):
            assert login(server, "wrong-secret-wrong-secret").status_code == 401
        # a made-up X-Forwarded-For is not another address (no proxy is trusted by default)
        spoofed = httpx.post(
            f"{server.url}/api/admin/login",
            json={"secret": "wrong-secret-wrong-secret"},
            headers={"X-Forwarded-For": "203.0.113.9"},
            timeout=10,
        )
        assert spoofed.status_code == 429
        limited = login(server, "wrong-secret-wrong-secret")
        assert limited.status_code == 429 and limited.json()["detail"]["code"] == "too_many_attempts"
        assert int(limited.headers["retry-after"]) >= 1
        # over the limit even the right secret is refused, as a bearer too
        assert login(server).status_code == 429
        bearer = {"Authorization": f"Bearer {SECRET}"}
        assert httpx.get(f"{server.url}/api/admin/session", headers=bearer, timeout=10).status_code == 429
        # another client address has its own count
        other = httpx.Client(transport=httpx.HTTPTransport(local_address="127.0.0.2"), timeout=10)
        assert other.post(f"{server.url}/api/admin/login", json={"secret": SECRET}).status_code == 200
        other.close()
    finally:
        server.stop()
