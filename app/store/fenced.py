"""`FencedStore`: the store as one room hosted under a lease sees it, every write carrying the
owner's fencing token (docs/cluster.md)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

from app.store.chat import ChatRow
from app.store.errors import FencedOutError
from app.store.rows import NewRound, RoundEnd, SeatChange, SeatSpec, TallySpec

if TYPE_CHECKING:
    from app.store.repository import Store

__all__ = ["FencedStore"]

_T = TypeVar("_T")


class FencedStore:
    """The rooms' `MatchStore` port over ``store`` for a room whose lease gave fencing ``token``:
    each write is `app.store.Store`'s with ``fence=token``, so it raises `app.store.FencedOutError`,
    storing nothing, once another process took the room with a higher token, after calling
    ``on_fenced`` (the hub unloads the room). Reads pass through."""

    __slots__ = ("on_fenced", "store", "token")

    def __init__(self, store: Store, token: int, on_fenced: Callable[[], None] | None = None) -> None:
        self.store = store
        self.token = token
        self.on_fenced = on_fenced

    async def _write(self, write: Awaitable[_T]) -> _T:
        try:
            return await write
        except FencedOutError:
            if self.on_fenced is not None:
                self.on_fenced()
            raise

    async def create_match(
        self,
        code: str,
        variant: str,
        options: dict[str, Any],
        seat_count: int,
        turn_timer_s: float,
        host_token_hash: str,
        seats: Sequence[SeatSpec],
        start: dict[str, Any] | None = None,
        *,
        room_match: int = 1,
        version: int = 0,
        open_table: bool = False,
        chat_rules: dict[str, Any] | None = None,
        hints: bool = False,
    ) -> int:
        """`app.store.Store.create_match` under the token."""
        return await self._write(
            self.store.create_match(
                code,
                variant,
                options,
                seat_count,
                turn_timer_s,
                host_token_hash,
                seats,
                start,
                room_match=room_match,
                version=version,
                open_table=open_table,
                chat_rules=chat_rules,
                hints=hints,
                fence=self.token,
            )
        )

    async def append_action(
        self,
        match_id: int,
        round_index: int,
        seq: int,
        version: int,
        seat: int,
        action: dict[str, Any],
        actor: str,
        round_end: RoundEnd | None = None,
    ) -> None:
        """`app.store.Store.append_action` under the token."""
        await self._write(
            self.store.append_action(
                match_id, round_index, seq, version, seat, action, actor, round_end, fence=self.token
            )
        )

    async def save_room(
        self,
        match_id: int,
        version: int,
        *,
        seats: Sequence[SeatChange] = (),
        status: str | None = None,
        new_round: NewRound | None = None,
        open_table: bool | None = None,
        options: dict[str, Any] | None = None,
        turn_timer_s: float | None = None,
        hints: bool | None = None,
    ) -> None:
        """`app.store.Store.save_room` under the token."""
        await self._write(
            self.store.save_room(
                match_id,
                version,
                seats=seats,
                status=status,
                new_round=new_round,
                open_table=open_table,
                options=options,
                turn_timer_s=turn_timer_s,
                hints=hints,
                fence=self.token,
            )
        )

    async def end_round(
        self,
        match_id: int,
        index: int,
        outcome: dict[str, Any],
        table_after: int | None,
        tallies: Sequence[TallySpec],
        version: int,
        match_finished: bool = False,
    ) -> None:
        """`app.store.Store.end_round` under the token."""
        await self._write(
            self.store.end_round(
                match_id, index, outcome, table_after, tallies, version, match_finished, fence=self.token
            )
        )

    async def add_chat(
        self,
        match_id: int,
        seat: int | None,
        name: str,
        *,
        text: str | None = None,
        reaction: str | None = None,
        round_index: int = 0,
        seq: int = 0,
    ) -> ChatRow:
        """`app.store.Store.add_chat` under the token."""
        return await self._write(
            self.store.add_chat(
                match_id,
                seat,
                name,
                text=text,
                reaction=reaction,
                round_index=round_index,
                seq=seq,
                fence=self.token,
            )
        )

    async def set_chat_rules(self, match_id: int, rules: dict[str, Any]) -> None:
        """`app.store.Store.set_chat_rules` under the token."""
        await self._write(self.store.set_chat_rules(match_id, rules, fence=self.token))

    async def load_chat(
        self, match_id: int, last: int | None = None
    ) -> tuple[dict[str, Any] | None, list[ChatRow]]:
        """`app.store.Store.load_chat` (a read: no token)."""
        return await self.store.load_chat(match_id, last)

    async def add_hint(
        self, match_id: int, round_index: int, seq: int, seat: int, action: dict[str, Any]
    ) -> None:
        """`app.store.Store.add_hint` under the token."""
        await self._write(self.store.add_hint(match_id, round_index, seq, seat, action, fence=self.token))

    async def abandon(self, match_id: int, reason: str, version: int | None = None) -> bool:
        """`app.store.Store.abandon` under the token."""
        return await self._write(self.store.abandon(match_id, reason, version, fence=self.token))
