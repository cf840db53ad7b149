"""Domeng, the five-player game of South Sulawesi: passes, stones, cucuq, manguno, camat.

Implements RULES.md's Domeng part (D2–D20) on the shared core. Stones move only through `award`
(D5), so ``table + sum(stones) == 25`` holds after every event.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar, cast

from engine.actions import Pass
from engine.core import _FIT_MASKS, Deal, Phase, State
from engine.errors import EngineError, quoted
from engine.events import DomengOutcome, Passed, Placed, Reason, RoundEnded, Settlement, Termination
from engine.pickling import pickle_by_fields
from engine.rules.base import Rules, check_seat
from engine.score import DomengScore
from engine.tiles import Tile, mask_of, pip_sum

if TYPE_CHECKING:
    from engine.views import PlayerView

__all__ = [
    "CYCLE_STONES",
    "MAX_CAMAT_TARGET",
    "OPENING_LEMPAS",
    "Domeng",
    "DomengState",
    "domeng_standing_key",
    "domeng_standings",
]

MAX_CAMAT_TARGET = 100
"""The most camat elections a match may be set to last (0 means no limit)."""

CYCLE_STONES = 25
"""Stones on the table at the start of every cycle (D16–D18)."""

OPENING_LEMPAS = tuple(Tile.parse(t) for t in ("6-6", "5-5", "4-4", "3-3"))
"""D11: the first round's leader holds the highest of these and must open with it."""

# Module constants for the hot path: looking up an Enum member on its class costs a descriptor call.
_OUT, _CEKI, _POLLO = Termination.OUT, Termination.CEKI, Termination.POLLO
_HAND_SIZES = (5, 5, 5, 5, 5)  # D10: five seats, five tiles each


def _settlement_one(
    reason: Reason, receiver: int, owed: int, from_table: int, payer: int, paid: int
) -> Settlement:
    return Settlement(reason, receiver, owed, from_table, ((payer, paid),), owed - from_table - paid)


def _pass_event(seat: int, mappano: int, owed: int, from_table: int, paid: int) -> Passed:
    """The event of a pass (D3, D4, D6): 1 stone owed, or 2 for a passebunge."""
    reason = Reason.PASS if owed == 1 else Reason.PASSEBUNGE
    return Passed(seat, owed == 2, _settlement_one(reason, seat, owed, from_table, mappano, paid))


_PASS_EVENTS: tuple[tuple[tuple[tuple[tuple[Passed, ...], ...], ...], ...], ...] = tuple(
    tuple(
        tuple(
            tuple(tuple(_pass_event(s, m, owed, t, p) for p in range(owed + 1)) for t in range(owed + 1))
            for owed in range(3)
        )
        for m in range(5)
    )
    for s in range(5)
)
"""Every possible pass event, shared between states (events are immutable): indexed by seat, last
mappano, stones owed (1 or 2), stones from the table, stones paid by the last mappano."""


def domeng_standings(elections: Sequence[int], received: Sequence[int]) -> tuple[tuple[int, ...], ...]:
    """A Domeng match's standings, best first, each a one-seat side: most camat ``elections``,
    then fewest stones ``received`` over the whole match (every settlement's stones, D5: stones
    held are no guide, since an election puts everybody back to 0, D16), then seat order.

    >>> domeng_standings([1, 0, 0, 0, 0], [3, 9, 4, 4, 0])
    ((0,), (4,), (2,), (3,), (1,))
    """
    order = sorted(range(len(elections)), key=lambda s: (domeng_standing_key(elections, received, s), s))
    return tuple((seat,) for seat in order)


def domeng_standing_key(elections: Sequence[int], received: Sequence[int], seat: int) -> tuple[int, int]:
    """What ranks ``seat`` in `domeng_standings`, lower first: (minus its camat ``elections``, the
    stones it ``received`` over the match). Seats with equal keys share a place."""
    return (-elections[seat], received[seat])


class _DomengFacts(Rules):
    """Domeng's class-level facts, kept out of `Domeng`'s dataclass body (a mypyc-compiled dataclass
    would take a class variable with a value for a field: docs/engine.md, "Compiled build")."""

    name: ClassVar[str] = "domeng"
    rest_name: ClassVar[str] = "unused"
    unit: ClassVar[str] = "stones"
    mappakuling_counts: ClassVar[bool] = True
    opening_order: ClassVar[tuple[Tile, ...]] = OPENING_LEMPAS


@dataclass(frozen=True, slots=True)
class Domeng(_DomengFacts):
    """Domeng's rules: 5 seats, 5 tiles each, 3 unused (D10).

    ``camat_target``: the match ends at that many camat elections; 0 plays on until the host stops.
    """

    seats: int = 5
    camat_target: int = 1

    @classmethod
    def from_options(cls, options: Mapping[str, object], seats: int | None = None) -> Domeng:
        cls._check_keys(options, {"camat_target": int})
        if seats is not None and seats != 5:
            raise EngineError("invalid_seats", f"Domeng is played by 5 seats, not {seats}")
        target = options.get("camat_target", 1)
        assert isinstance(target, int)
        if not 0 <= target <= MAX_CAMAT_TARGET:
            raise EngineError(
                "invalid_options",
                f"camat_target must be 0 (no limit) to {MAX_CAMAT_TARGET}, got {quoted(target)}",
            )
        return cls(camat_target=target)

    def options(self) -> dict[str, object]:
        return {"camat_target": self.camat_target}

    @property
    def host_stops(self) -> bool:
        """A match with no camat target (0) plays on until the host stops it ("Match end")."""
        return self.camat_target == 0

    def hand_sizes(self) -> tuple[int, ...]:
        return _HAND_SIZES

    def start_after(self, outcome: Mapping[str, Any]) -> dict[str, object]:
        """The table, stones and camat after the round (D16-D18), and its next leader (D11)."""
        return {
            "table": outcome["table"],
            "stones": list(outcome["stones"]),
            "camat": outcome["camat"],
            "leader": outcome["next_leader"],
        }

    def new_match(self, start: Mapping[str, object] | None = None) -> DomengState:
        start = start or {}
        table = start.get("table", CYCLE_STONES)
        stones = start.get("stones", [0] * self.seats)
        if (
            not isinstance(table, int)
            or not isinstance(stones, list)
            or len(stones) != self.seats
            or not all(isinstance(s, int) and not isinstance(s, bool) for s in [table, *stones])
        ):
            raise EngineError("invalid_start", "start needs 'table' (int) and 'stones' (5 ints)")
        if min(table, *stones) < 0 or table + sum(stones) != CYCLE_STONES:
            raise EngineError(
                "invalid_start", f"stones must be non-negative and total {CYCLE_STONES} with the table"
            )
        camat = check_seat(start.get("camat"), self.seats, "camat")
        leader = check_seat(start.get("leader"), self.seats, "leader")
        return DomengState(self, table, stones, camat, leader, dict(start) or None)

    def world(self, view: PlayerView, hands: Sequence[int], rest: Sequence[Tile]) -> DomengState:
        """`Rules.world`: the view's table, stones, camat and camat elections (the unused tiles
        play no part in a round, D10)."""
        assert view.table is not None and view.stones is not None
        state = DomengState(self, view.table, view.stones, view.camat, None, None)
        state.elections = list(view.elections or [0] * self.seats)
        state.received = list(view.received or [0] * self.seats)
        self.resume_round(state, view, hands)
        return state

    def position(
        self,
        hands: Sequence[Iterable[str]],
        ends: tuple[int, int],
        *,
        to_act: int,
        last_mappano: int,
        table: int = CYCLE_STONES,
        stones: Sequence[int] | None = None,
        placed: Iterable[int] = (),
        camat: int | None = None,
    ) -> DomengState:
        """A mid-round position built by hand (tests, analysis): ``hands`` per seat as tile strings,
        the chain's open ``ends``, whose turn it is, the last mappano, stones and who has placed.

        The tiles not in hands are taken as played or unused; such a state cannot be recorded.
        Raises ValueError when the stones do not total 25.
        """
        stones = list(stones or [0] * self.seats)
        if table + sum(stones) != CYCLE_STONES:
            raise ValueError("table + stones must total 25")
        state = DomengState(self, table, stones, camat, None, None)
        state.hands = [mask_of(Tile.parse(t) for t in hand) for hand in hands]
        state.left, state.right = ends
        state.to_act = to_act
        state.last_placer = last_mappano
        state.placed = sum(1 << s for s in set(placed) | {last_mappano})
        state.phase = Phase.PLAYING
        state.round_index = 1
        return state


class DomengState(State):
    """A Domeng match in play: the core plus the table's stones, each seat's stones, the camat,
    camat elections per seat, the stones each seat received over the match (every settlement's
    ``received``, D5; the standings' second key), and which seats have placed a tile this round
    (for passebunge)."""

    __slots__ = ("table", "stones", "camat", "elections", "received")
    variant: ClassVar[str] = "domeng"

    table: int
    stones: list[int]
    camat: int | None
    elections: list[int]
    received: list[int]

    @property
    def _rules(self) -> Domeng:
        """``rules`` as `Domeng` (the core declares `Rules`: a compiled build keeps the declared type)."""
        return cast(Domeng, self.rules)

    def __init__(
        self,
        rules: Domeng,
        table: int,
        stones: Sequence[int],
        camat: int | None,
        leader: int | None,
        start: Mapping[str, object] | None,
    ) -> None:
        self._init_core(rules, leader if leader is not None else camat, start)
        self.table = table
        self.stones = list(stones)
        self.camat = camat
        self.elections = [0] * rules.seats
        self.received = [0] * rules.seats

    def fork(self) -> DomengState:
        new = DomengState.__new__(DomengState)
        self._fork_core(new)
        new.table = self.table
        new.stones = self.stones[:]
        new.camat = self.camat
        new.elections = self.elections[:]
        new.received = self.received[:]
        return new

    # -- reading -------------------------------------------------------------------------------

    @property
    def last_mappano(self) -> int | None:
        """The seat that placed the most recent tile of this round."""
        return self.last_placer

    @property
    def cycle(self) -> int:
        """The cycle in play, from 1: a cycle runs from 25 stones on the table to a camat
        election (D16–D18), so this is 1 + the elections so far in this match."""
        return 1 + sum(self.elections)

    def has_placed(self, seat: int) -> bool:
        """Whether ``seat`` placed a tile this round (if not, its pass is a passebunge, D3)."""
        return bool(self.placed >> seat & 1)

    def cucuq_of(self, seat: int) -> int:
        """The seat immediately before ``seat`` in seat order (D2)."""
        return (seat - 1) % self.seats

    def standing_key(self, side: tuple[int, ...]) -> tuple[int, ...]:
        """Most camat elections, then fewest stones received over the match (`domeng_standings`)."""
        return domeng_standing_key(self.elections, self.received, side[0])

    def score_key(self) -> tuple[object, ...]:
        """(table, camat, stones, elections, received): all `score` is made of (its ``cycle``
        counts the elections)."""
        return (self.table, self.camat, tuple(self.stones), tuple(self.elections), tuple(self.received))

    def score(self) -> DomengScore:
        """Domeng's public score: stones on the table and per seat, the camat, elections (D5, D16)."""
        return DomengScore(
            self.table,
            tuple(self.stones),
            self.camat,
            tuple(self.elections),
            self.cycle,
            tuple(self.received),
        )

    # -- rounds --------------------------------------------------------------------------------

    def start_round(self, deal: Deal) -> None:
        """Deal a round. The leader is the camat, else the previous winner (any tile); in a match's
        first round without either, the holder of the highest of 6-6, 5-5, 4-4, 3-3 must open
        with it (D11). Raises IllegalActionError outside the ready phase, ValueError for a bad deal.
        """
        if len(deal.rest) != 3:
            raise ValueError("a Domeng deal sets exactly 3 tiles aside (D10)")
        self._begin_round(deal, self.rules.hand_sizes(), OPENING_LEMPAS)

    # -- settlement (D5) -----------------------------------------------------------------------

    def award(self, reason: Reason, receiver: int, owed: int, payers: Sequence[int]) -> Settlement:
        """D5: up to ``owed`` stones to ``receiver``, first from the table, then from each payer in
        order up to what they hold; the rest is cancelled. Returns what moved."""
        from_table = owed if owed <= self.table else self.table
        self.table -= from_table
        rest = owed - from_table
        paid = []
        stones = self.stones
        for payer in payers:
            amount = rest if rest <= stones[payer] else stones[payer]
            stones[payer] -= amount
            rest -= amount
            paid.append((payer, amount))
        stones[receiver] += owed - rest
        self.received[receiver] += owed - rest
        return Settlement(reason, receiver, owed, from_table, tuple(paid), rest)

    def _award_one(self, reason: Reason, receiver: int, owed: int, payer: int) -> Settlement:
        """`award` with one payer, the common case: same result, less work."""
        from_table, paid = self._collect(receiver, owed, payer)
        return _settlement_one(reason, receiver, owed, from_table, payer, paid)

    def _collect(self, receiver: int, owed: int, payer: int) -> tuple[int, int]:
        """Move D5's stones for one payer: ``(from the table, paid by payer)``."""
        table = self.table
        from_table = owed if owed <= table else table
        self.table = table - from_table
        rest = owed - from_table
        stones = self.stones
        paid = rest if rest <= stones[payer] else stones[payer]
        stones[payer] -= paid
        stones[receiver] += from_table + paid
        self.received[receiver] += from_table + paid
        return from_table, paid

    # -- actions -------------------------------------------------------------------------------

    def _went_out(self, seat: int, event: Placed) -> None:
        """First cappu (D15): the type of out is decided by the last placement."""
        if not event.mappakuling:
            self._end_out(seat, _OUT, Reason.OUT, 1)
        elif event.tile.is_lempa:
            self._end_out(seat, _POLLO, Reason.POLLO, 5)
        else:
            self._end_out(seat, _CEKI, Reason.CEKI, 3)

    def _apply_pass(self, action: Pass) -> None:
        """A forced pass (D12) is settled at once: 1 stone, or 2 for a passebunge (D3, D4, D6),
        paid by the table and then the last mappano. The round blocks when the turn comes back to
        a last mappano who cannot place either (D7)."""
        seat = action.seat
        hands = self.hands
        if self.left < 0:  # nothing to match yet: the leader must open
            self._check_pass(action)
        fits = _FIT_MASKS[self.left * 7 + self.right]
        if hands[seat] & fits:
            self._check_pass(action)
        mappano = self.last_placer
        assert mappano is not None and mappano != seat  # the opening is always a placement
        owed = 1 if self.placed >> seat & 1 else 2
        from_table, paid = self._collect(seat, owed, mappano)
        self.log.append(_PASS_EVENTS[seat][mappano][owed][from_table][paid])
        self.actions.append(action)
        nxt = seat + 1 if seat < 4 else 0
        if nxt == mappano and not hands[nxt] & fits:
            self._end_block(mappano)
        else:
            self.to_act = nxt

    # -- round end -----------------------------------------------------------------------------

    def _pip_sums(self) -> tuple[int, ...]:
        return tuple(map(pip_sum, self.hands))

    def _end_out(self, winner: int, end: Termination, reason: Reason, owed: int) -> None:
        """First cappu: the cucuq is owed 1 (out), 3 (ceki) or 5 (pollo) stones, from the table,
        then from the winner (D5)."""
        cucuq = self.cucuq_of(winner)
        settlement = self._award_one(reason, cucuq, owed, winner)
        self._conclude(end, winner, winner, cucuq, None, (), settlement, self._pip_sums())

    def _end_block(self, manguno: int) -> None:
        """D7–D9: the round is blocked at the manguno; settle by the mattikkeng, ranked by pip sum
        and then by seat order starting after the manguno."""
        sums = self._pip_sums()
        order = [(manguno + k) % self.seats for k in range(1, self.seats)]
        mattikkeng = tuple(sorted((s for s in order if sums[s] <= sums[manguno]), key=lambda s: sums[s]))
        if not mattikkeng:
            cucuq = self.cucuq_of(manguno)
            settlement = self._award_one(Reason.MANGUNO, cucuq, 1, manguno)
            self._conclude(Termination.BLOCK, manguno, None, cucuq, manguno, (), settlement, sums)
            return
        best = mattikkeng[0]
        if len(mattikkeng) == 1 and sums[best] < sums[manguno]:
            settlement = self._award_one(Reason.MATTIKKENG, manguno, 5, best)
        else:
            settlement = self.award(Reason.MATTIKKENG_SHARED, manguno, 1, mattikkeng)
        self._conclude(Termination.BLOCK, best, None, None, manguno, mattikkeng, settlement, sums)

    def _conclude(
        self,
        end: Termination,
        winner: int,
        first_cappu: int | None,
        cucuq: int | None,
        manguno: int | None,
        mattikkeng: tuple[int, ...],
        settlement: Settlement,
        pip_sums: tuple[int, ...],
    ) -> None:
        """Camat election (D16–D18), the next leader (D11) and the match end."""
        elected = first_cappu is not None and self.table == 0 and self.stones[first_cappu] == 0
        if elected:
            assert first_cappu is not None
            self.camat = first_cappu
            self.elections[first_cappu] += 1
            self.table = CYCLE_STONES
            self.stones = [0] * self.seats
        target = self._rules.camat_target
        match_over = target > 0 and sum(self.elections) >= target
        next_leader = self.camat if self.camat is not None else winner
        outcome = DomengOutcome(
            end=end,
            winner=winner,
            first_cappu=first_cappu,
            cucuq=cucuq,
            manguno=manguno,
            mattikkeng=mattikkeng,
            pip_sums=pip_sums,
            settlement=settlement,
            camat_elected=elected,
            camat=self.camat,
            table=self.table,
            stones=tuple(self.stones),
            next_leader=next_leader,
            match_over=match_over,
        )
        self.log.append(RoundEnded(outcome))
        self._finish_round(outcome, next_leader, match_over)


pickle_by_fields(Domeng)
