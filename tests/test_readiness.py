"""``/readyz``'s database check is shared (`app.web.readiness.SharedCheck`): a client asking it
sixty times at once held every read connection of the process (and could time readiness out into
a false 503); now the asks that come while a check runs share it."""

from __future__ import annotations

import asyncio
import concurrent.futures
from collections.abc import Iterator

import httpx
import pytest

from app.web.readiness import SharedCheck
from tests.serverkit import ServerProcess


class _GatedCheck:
    """A readiness check that waits for ``gate`` and counts its runs."""

    def __init__(self, result: bool = True) -> None:
        self.gate = asyncio.Event()
        self.started = asyncio.Event()
        self.runs = 0
        self.result = result

    async def __call__(self) -> bool:
        self.runs += 1
        self.started.set()
        await self.gate.wait()
        return self.result


def test_asks_while_a_check_runs_share_it() -> None:
    async def main() -> None:
        check = _GatedCheck()
        shared = SharedCheck(check)
        asks = [asyncio.ensure_future(shared()) for _ in range(60)]
        await check.started.wait()
        check.gate.set()
        assert await asyncio.gather(*asks) == [True] * 60
        assert check.runs == 1

    asyncio.run(main())


def test_an_ask_after_a_check_ended_runs_a_new_one() -> None:
    """Nothing is reused once a check has answered: a database that stops answering is reported
    by the very next ask (tests/test_cluster_outages.py cuts it and asks at once)."""

    async def main() -> None:
        check = _GatedCheck(result=False)
        check.gate.set()
        shared = SharedCheck(check)
        assert await shared() is False
        check.result = True  # the database answers again
        assert await shared() is True
        assert check.runs == 2

    asyncio.run(main())


def test_an_asker_that_goes_away_leaves_the_check_to_the_others() -> None:
    async def main() -> None:
        check = _GatedCheck()
        shared = SharedCheck(check)
        gone, staying = asyncio.ensure_future(shared()), asyncio.ensure_future(shared())
        await check.started.wait()
        gone.cancel()
        check.gate.set()
        assert await staying is True
        assert gone.cancelled() and check.runs == 1

    asyncio.run(main())


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    proc = ServerProcess(tmp_path_factory.mktemp("server")).start()
    yield proc
    proc.stop()


def test_readyz_asked_many_times_at_once_answers_every_ask(server: ServerProcess) -> None:
    """The route asks the shared check (`app.web.app` wires it): every ask is answered, ready."""

    def ask(_: int) -> int:
        return httpx.get(f"{server.url}/readyz", timeout=30).status_code

    with concurrent.futures.ThreadPoolExecutor(16) as pool:
        assert set(pool.map(ask, range(64))) == {200}
