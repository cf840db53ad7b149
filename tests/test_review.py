"""The fair round review (engine/review.py, issue 16) and ``domeng review`` through the real console
script: every option of each decision with a choice is costed from the seat's view alone, so
changing the tiles that seat could not see (other hands, Domeng's unused tiles, Kozel's bazaar)
never changes the review; only ended rounds are reviewed; the command prints the same figures."""

from __future__ import annotations

import asyncio
import json
import random
import re
import statistics
from typing import Any

import pytest

from app.bots.reviews import ReviewsBusyError, ReviewWorkers
from app.cli.review import review_text
from engine.actions import parse_action
from engine.bots import make_bot
from engine.core import Deal, Phase, State
from engine.deal_json import parse_deal
from engine.errors import RecordError
from engine.record import read_header, read_record, write_record
from engine.review import (
    MAX_WORLDS_FACTOR,
    THRESHOLDS,
    RoundReview,
    quantile,
    review_decision,
    review_record,
    summary,
)
from engine.simulate import play_round
from engine.variants import make_rules
from engine.views import player_view
from tests.conftest import domeng_cli

pytestmark = pytest.mark.engine  # the engine's review, read through the command line's words

SAMPLES = 24  # worlds per decision: enough to tell options apart in a test, and quick


def _match(
    variant: str, seats: int, options: dict[str, object], seed: int, rounds: int = 1
) -> dict[str, Any]:
    """A record of ``rounds`` finished rounds of easy and medium bots (easy makes mistakes to mark)."""
    rules = make_rules(variant, options, seats)
    state = rules.new_match(None)
    rng = random.Random(seed)
    bots = [make_bot("easy" if s % 2 else "medium", random.Random(seed * 10 + s)) for s in range(seats)]
    for _ in range(rounds):
        state.start_round(Deal.shuffled(rng, rules.hand_sizes()))
        play_round(state, bots)
    return write_record(state, [f"Seat {s}" for s in range(seats)])


def _played_by(doc: dict[str, Any], round_index: int) -> set[str]:
    """Every tile placed in a round of the record (a tile is written "a-b")."""
    played = set()
    for action in doc["rounds"][round_index]["actions"]:
        for key in ("play", "lempas"):
            value = action.get(key)
            if isinstance(value, str):
                played.add(value)
            elif isinstance(value, list):
                played.update(value)
    return played


def _rehide(doc: dict[str, Any], round_index: int, seat: int, rng: random.Random) -> dict[str, Any] | None:
    """The record with the tiles ``seat`` never sees in the round changed: tiles another seat
    holds but never places, and the rest's tiles nobody draws (Domeng's unused tiles, the bottom
    of Kozel's bazaar), shuffled among those places. None when the shuffle changes nothing or makes
    a recorded action illegal (a recorded pass or draw that the new hand could have avoided)."""
    other = json.loads(json.dumps(doc))
    raw = other["rounds"][round_index]
    played = _played_by(doc, round_index)
    rest_key = "unused" if "unused" in raw else "bazaar"
    drawn = sum(1 for a in raw["actions"] if a.get("draw"))
    slots: list[tuple[list[str], int]] = []
    for s, hand in enumerate(raw["hands"]):
        if s != seat:
            slots += [(hand, i) for i, tile in enumerate(hand) if tile not in played]
    rest = raw[rest_key]
    slots += [(rest, i) for i in range(drawn, len(rest)) if rest[i] not in played]
    tiles = [where[i] for where, i in slots]
    shuffled = tiles[:]
    rng.shuffle(shuffled)
    if shuffled == tiles:
        return None
    for (where, i), tile in zip(slots, shuffled, strict=True):
        where[i] = tile
    try:  # the changed record must still replay
        read_record(other)
    except RecordError:
        return None
    return other


@pytest.mark.parametrize(
    ("variant", "seats", "options"),
    [("domeng", 5, {}), ("kozel", 3, {}), ("kozel", 4, {"pairs": True})],
    ids=["domeng", "kozel-3", "kozel-pairs"],
)
def test_a_review_never_depends_on_tiles_the_seat_could_not_see(
    variant: str, seats: int, options: dict[str, object]
) -> None:
    changed = 0
    for seed in range(3):
        doc = _match(variant, seats, options, seed)
        for seat in range(seats):
            review = review_record(doc, 0, seat, samples=SAMPLES, seed=seed)
            rng = random.Random(seed * 100 + seat)
            for _ in range(30):
                other = _rehide(doc, 0, seat, rng)
                if other is not None:
                    break
            if other is None:
                continue
            changed += 1
            assert other["rounds"][0] != doc["rounds"][0]
            assert review_record(other, 0, seat, samples=SAMPLES, seed=seed) == review
    assert changed >= seats  # the test did change hidden tiles, for most seats


def test_every_decision_with_a_choice_is_reviewed_with_every_option() -> None:
    doc = _match("domeng", 5, {}, seed=4)
    rules = make_rules("domeng", {}, 5)
    for seat in range(5):
        review = review_record(doc, 0, seat, samples=SAMPLES, seed=1)
        assert review.unit == "stones" and review.threshold == THRESHOLDS["domeng"]
        # the decisions are exactly this seat's turns with two or more legal actions
        state: State = rules.new_match(None)
        state.start_round(parse_deal(doc["rounds"][0], rules.hand_sizes(), "unused"))
        expected = []
        for at, raw in enumerate(doc["rounds"][0]["actions"]):
            if state.to_act == seat and len(state.legal_actions()) > 1:
                expected.append((at, tuple(state.legal_actions())))
            state.apply(parse_action(raw))
        assert [(d.at, {o.action for o in d.options}) for d in review.decisions] == [
            (at, set(legal)) for at, legal in expected
        ]
        for decision in review.decisions:
            assert decision.chosen.to_json() == doc["rounds"][0]["actions"][decision.at]
            assert decision.options[0].lost == 0
            assert [o.cost for o in decision.options] == sorted(o.cost for o in decision.options)
            assert decision.lost == pytest.approx(
                next(o.lost for o in decision.options if o.action == decision.chosen)
            )
            assert decision.marked == (decision.lost > review.threshold and decision.lost > decision.margin)
            assert decision.margin == pytest.approx(quantile(len(decision.options)) * decision.noise)
            # more worlds only for a choice that was too close to tell, up to the cap
            assert (
                decision.worlds % SAMPLES == 0 and SAMPLES <= decision.worlds <= MAX_WORLDS_FACTOR * SAMPLES
            )
            if decision.within_noise(review.threshold):
                assert decision.worlds == MAX_WORLDS_FACTOR * SAMPLES
    # a fixed seed fixes the review
    assert review_record(doc, 0, 1, samples=SAMPLES, seed=1) == review_record(
        doc, 0, 1, samples=SAMPLES, seed=1
    )


def test_mistakes_are_marked_and_summed_in_one_line() -> None:
    reviews = (
        review_record(_match("domeng", 5, {}, seed), 0, seat, samples=60, seed=0)
        for seed in range(12)
        for seat in (1, 3)  # the easy seats
    )
    review = next((r for r in reviews if r.marked), None)
    assert review is not None, "easy bots make mistakes a review marks"
    n = len(review.marked)
    assert review.lost == pytest.approx(sum(d.lost for d in review.marked))
    assert summary(review) == (
        f"about {review.lost:.1f} stones lost to {n} decision{'s' if n != 1 else ''} this round"
    )
    quiet = review_record(_match("domeng", 5, {}, 0), 0, 0, samples=SAMPLES, threshold=1e9)
    assert summary(quiet) == (
        "no clear mistake: no choice lost more than 1e+09 stones "
        "by more than the estimate's margin this round"
    )


def test_a_gap_above_the_threshold_inside_the_margin_is_too_close_to_tell_never_within() -> None:
    """A choice that lost more than the threshold but not more than two standard errors is not
    marked: the review must not then say every choice was within the threshold (a player read
    "within 2 points of the best" above a choice at 14.48 against 10.92). The summary says no
    choice lost more than the threshold *by more than the margin*, counts the close ones, and the
    decision says it is too close to tell, with its margin."""
    reviews = (
        (review_record(doc, 0, seat, samples=SAMPLES, seed=0), doc)
        for variant, seats in (("kozel", 3), ("domeng", 5))
        for seed in range(6)
        for doc in [_match(variant, seats, {}, seed)]
        for seat in range(seats)
    )
    review, doc = next(((r, d) for r, d in reviews if r.within_noise and not r.marked), (None, None))
    assert review is not None and doc is not None, "a sampled review has a gap too close to tell"
    close = review.within_noise
    assert all(d.lost > review.threshold >= 0 and d.lost <= d.margin and not d.marked for d in close)
    line = summary(review)
    assert f"within {review.threshold:g}" not in line and "no decision lost more than" not in line
    n = len(close)
    assert line == (
        f"no clear mistake: no choice lost more than {review.threshold:g} {review.unit} by more than "
        f"the estimate's margin this round; {n} choice{'s' if n != 1 else ''} lost more but too close to tell"
    )
    shown = review.to_json()
    for decision, raw in zip(review.decisions, shown["decisions"], strict=True):
        assert raw["within_noise"] == (decision in close)
        k = len(raw["options"])
        assert raw["margin"] == pytest.approx(quantile(k) * raw["noise"], abs=0.003)
    text = review_text(review, read_header(doc)[1])
    for decision in close:
        head = next(line for line in text.splitlines() if line.startswith(f"Action {decision.at + 1}: "))
        assert head.endswith(f"too close to tell (margin ± {decision.margin:.2f})"), head


def _stated_margins(text: str, ats: list[int]) -> list[float]:
    """The ``± M`` that ``domeng review``'s text states on the head line of each decision ``at``."""
    lines = text.splitlines()
    found = []
    for at in ats:
        head = next(line for line in lines if line.startswith(f"Action {at + 1}: "))
        assert "± " in head, head  # every decision states its margin, the best option's too
        found.append(float(head.split("± ")[1].split()[0].rstrip(")")))
    return found


def test_the_stated_margin_covers_the_gap_across_seeds() -> None:
    """A new player reviewed one round with four seeds: the gap between the two options moved from
    0.03 to 0.50 stones while the command said "± 0.10" (one standard error, not a margin) and the
    table said 0.51. The stated margin is now a 95% interval of the loss: reviewed with 16 seeds
    (fixed, so the test is deterministic), the losses of a decision whose choice really lost
    something spread across seeds as the stated margins say, and any two seeds' losses lie within
    the two margins combined (``sqrt(m1² + m2²)``, a 95% bound on the difference of two
    independent estimates) for at least 85% of the pairs (one standard error gives about 65%)."""
    doc = _match("domeng", 5, {}, 1)  # seat 3 (easy): move 8 lost ≈ 0.4 stones, move 18 ≈ 0.3
    names = read_header(doc)[1]
    reviews = [review_record(doc, 0, 3, samples=40, seed=seed) for seed in range(16)]
    ats = [d.at for d in reviews[0].decisions]
    lost = {at: [r.decisions[i].lost for r in reviews] for i, at in enumerate(ats)}
    stated = [_stated_margins(review_text(r, names), ats) for r in reviews]
    for r, margins in zip(reviews, stated, strict=True):
        assert margins == pytest.approx([round(d.margin, 2) for d in r.decisions], abs=0.006)
    checked = [i for i, at in enumerate(ats) if statistics.median(lost[at]) > 0.1]
    assert len(checked) >= 2, "the easy seat's round has choices that lost"
    inside = pairs = 0
    for i in checked:
        at = ats[i]
        margins = [m[i] for m in stated]
        z = quantile(len(reviews[0].decisions[i].options))
        # the spread across seeds against the standard error the margins state (generous: 1.5×)
        assert statistics.stdev(lost[at]) <= 1.5 * statistics.median(margins) / z, (at, lost[at], margins)
        for a in range(len(reviews)):
            for b in range(a + 1, len(reviews)):
                pairs += 1
                inside += abs(lost[at][a] - lost[at][b]) <= (margins[a] ** 2 + margins[b] ** 2) ** 0.5
    assert inside >= 0.85 * pairs, (inside, pairs)


def test_moves_a_bot_made_for_the_player_are_listed_never_judged() -> None:
    """The moves a bot made for a person (their turn timer ran out, or it covered their seat while
    they were away: the record's ``by_bot``) are not theirs: the review leaves them out of its
    decisions and its verdict, and lists them."""
    found = (
        (doc, seat, review)
        for seed in range(12)
        for doc in [_match("domeng", 5, {}, seed)]
        for seat in (1, 3)  # the easy seats
        for review in [review_record(doc, 0, seat, samples=60, seed=0)]
        if review.marked
    )
    doc, seat, plain = next(found)
    first = plain.marked[0].at
    actions = doc["rounds"][0]["actions"]
    covered = [at for at, action in enumerate(actions) if action["seat"] == seat and at >= first]
    for at in covered:  # a bot covered the seat from its first marked choice on
        actions[at]["by_bot"] = "covering"
    review = review_record(doc, 0, seat, samples=60, seed=0)
    assert review.by_bot == tuple(covered) and review.to_json()["by_bot"] == covered
    assert review.decisions == tuple(d for d in plain.decisions if d.at < first)
    assert all(d.at not in covered for d in review.marked)
    assert review.lost == pytest.approx(sum(d.lost for d in plain.marked if d.at < first))
    n = len(covered)
    assert summary(review).endswith(
        f"; {n} move{'s' if n != 1 else ''} played by a bot for this seat, not judged"
    )
    if not review.marked:
        assert summary(review).startswith("no clear mistake")
    text = review_text(review, read_header(doc)[1]).splitlines()
    for at in covered:
        assert f"Action {at + 1}: played by a bot for this seat's player, not judged" in text


def test_a_move_the_turn_timer_left_to_a_bot_is_told_from_one_a_covering_bot_made() -> None:
    """A bot plays for a person two ways: one turn when their turn timer ran out (the record's
    ``by_bot`` ``"timeout"``), or every turn while it covers their seat (``"covering"``). Neither is
    judged; the review lists both in ``by_bot`` and the timer's also in ``by_timer``, and its words
    say which were the timer's."""
    doc = _match("domeng", 5, {}, 3)
    seat = 1
    actions = doc["rounds"][0]["actions"]
    mine = [at for at, action in enumerate(actions) if action["seat"] == seat]
    assert len(mine) >= 3
    timed, covered = mine[0], mine[1:]
    actions[timed]["by_bot"] = "timeout"
    for at in covered:
        actions[at]["by_bot"] = "covering"
    review = review_record(doc, 0, seat, samples=SAMPLES, seed=0)
    assert review.by_bot == tuple(mine) and review.by_timer == (timed,)
    assert review.by_cover == tuple(covered) and not review.decisions
    made = review.to_json()
    assert (made["by_bot"], made["by_timer"]) == (mine, [timed])
    n = len(mine)
    assert summary(review).endswith(
        f"; {n} moves played by a bot for this seat (1 when its turn timer ran out), not judged"
    )
    text = review_text(review, read_header(doc)[1]).splitlines()
    timer_line = f"Action {timed + 1}: played by a bot for this seat's player when their turn timer ran out"
    assert f"{timer_line}, not judged" in text
    for at in covered:
        assert f"Action {at + 1}: played by a bot for this seat's player, not judged" in text
    # a bot made every move of the seat: nothing of the person's own to review, and said so
    assert review.all_by_bot and made["all_by_bot"] is True


def test_a_round_with_a_move_of_the_persons_own_is_not_all_the_bots() -> None:
    """Only a round whose every action of the seat a bot made is ``all_by_bot``: one move of the
    person's own (even a forced one), or no bot's move at all, leaves it false."""
    doc = _match("domeng", 5, {}, 3)
    seat = 1
    actions = doc["rounds"][0]["actions"]
    mine = [at for at, action in enumerate(actions) if action["seat"] == seat]
    assert not review_record(doc, 0, seat, samples=SAMPLES, seed=0).to_json()["all_by_bot"]
    for at in mine[1:]:
        actions[at]["by_bot"] = "covering"
    review = review_record(doc, 0, seat, samples=SAMPLES, seed=0)
    assert review.by_bot == tuple(mine[1:]) and not review.all_by_bot
    assert review.to_json()["all_by_bot"] is False


def test_only_an_ended_round_in_the_record_of_a_seat_at_the_table_is_reviewed() -> None:
    rules = make_rules("domeng", {}, 5)
    state = rules.new_match(None)
    state.start_round(Deal.shuffled(random.Random(9), rules.hand_sizes()))
    for _ in range(4):  # an unfinished round
        seat = state.to_act
        state.apply(make_bot("medium", random.Random(seat)).choose(player_view(state, seat)))
    assert state.phase is Phase.PLAYING
    doc = write_record(state, [f"Seat {s}" for s in range(5)])
    with pytest.raises(RecordError) as unfinished:
        review_record(doc, 0, 0, samples=SAMPLES)
    assert unfinished.value.code == "unfinished_round"
    finished = _match("domeng", 5, {}, 1)
    for round_index, seat, code in ((1, 0, "invalid_round"), (0, 5, "invalid_seat"), (0, -1, "invalid_seat")):
        with pytest.raises(RecordError) as error:
            review_record(finished, round_index, seat, samples=SAMPLES)
        assert error.value.code == code


def test_the_command_prints_the_reviews_figures(tmp_path: Any) -> None:
    doc = _match("kozel", 3, {}, seed=2, rounds=2)
    path = tmp_path / "match.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    expected = review_record(doc, 1, 2, samples=SAMPLES, seed=5)
    done = domeng_cli(
        "review", path, "--round", "2", "--seat", "2", "--samples", SAMPLES, "--seed", "5", "--json"
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == json.loads(json.dumps(expected.to_json()))
    text = domeng_cli("review", path, "--round", "2", "--seat", "2", "--samples", SAMPLES, "--seed", "5")
    assert text.returncode == 0, text.stderr
    lines = text.stdout.splitlines()
    assert lines[0].startswith("kozel · round 2 · P2 (Seat 2)") and "costs in points" in lines[0]
    for decision in expected.decisions:
        assert any(line.startswith(f"Action {decision.at + 1}: {decision.chosen}") for line in lines)
        for option in decision.options:
            # to 2 decimals, as the table's "Review my round" shows it (static/js/review.js `shown`)
            assert any(line.strip().startswith(f"{option.cost:.2f}  {option.action}") for line in lines)
    figures = [line.split()[0] for line in lines if line.startswith("    ")]
    assert figures and all(re.fullmatch(r"-?\d+\.\d\d", figure) for figure in figures), figures
    assert lines[-1] == summary(expected).capitalize() + "."

    bad = domeng_cli("review", path, "--round", "3", "--seat", "0", "--json")
    assert bad.returncode == 2
    assert json.loads(bad.stdout)["error"]["code"] == "invalid_round"
    unreadable = domeng_cli("review", tmp_path / "missing.json", "--round", "1", "--seat", "0")
    assert unreadable.returncode == 2 and "unreadable_file" in unreadable.stderr


def test_a_mark_always_prints_a_loss_beyond_its_margin(monkeypatch: pytest.MonkeyPatch) -> None:
    """The trial's review printed "lost 0.31 ± 0.31 stones  MARKED": a loss of 0.3149 beat a
    margin of 0.3051, and both print as 0.31. Marking compares the figures as printed, so such a
    choice is costed on more worlds first, and a mark shows a loss visibly beyond its margin."""
    rules = make_rules("domeng", {}, 5)
    state = rules.new_match(None)
    state.start_round(Deal.shuffled(random.Random(4), rules.hand_sizes()))
    bot = make_bot("medium", random.Random(1))
    while len(player_view(state, state.to_act).legal) < 2:
        state.apply(bot.choose(player_view(state, state.to_act)))
    view = player_view(state, state.to_act)
    z, n = quantile(len(view.legal)), SAMPLES
    spread = 0.3051 * (n - 1) ** 0.5 / z  # paired differences 0.3149 ± spread: margin 0.3051
    rows = [[0.0, 0.3149 + (spread if i % 2 else -spread)] + [0.0] * (len(view.legal) - 2) for i in range(n)]

    def worlds(view: Any, rng: random.Random, samples: int) -> tuple[list[list[float]], list[float]]:
        return [list(row) for row in rows], [1.0] * len(rows)

    monkeypatch.setattr("engine.review.world_losses", worlds)
    decision = review_decision(view, view.legal[1], 3, random.Random(0), samples=n)
    assert decision.marked and f"{decision.lost:.2f}" == "0.31"
    review = RoundReview("domeng", 0, view.seat, "stones", 0.25, n, 0, (decision,))
    head = review_text(review, tuple(f"Seat {s}" for s in range(5))).splitlines()[1]
    found = re.search(r"lost (\d+\.\d+) ± (\d+\.\d+) stones\)  MARKED", head)
    assert found is not None, head
    assert float(found[1]) > float(found[2]), head


def test_the_commands_messages_count_rounds_and_actions_from_1(tmp_path: Any) -> None:
    """``--round 9`` on a six-round record said "round 8 is not in this record": the flag counts
    rounds from 1, so every message of review and replay does (the JSON error object keeps its
    indexes from 0, RECORD.md)."""
    doc = _match("kozel", 2, {}, seed=2, rounds=2)
    path = tmp_path / "match.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    missing = domeng_cli("review", path, "--round", "3", "--seat", "0")
    assert missing.returncode == 2
    assert "round 3 is not in this record (rounds 1 to 2)" in missing.stderr, missing.stderr
    as_json = domeng_cli("review", path, "--round", "3", "--seat", "0", "--json")
    assert "round 3 is not" in json.loads(as_json.stdout)["error"]["message"]
    del doc["rounds"][1]["actions"][-1]  # round 2 now ends unfinished
    path.write_text(json.dumps(doc), encoding="utf-8")
    unfinished = domeng_cli("review", path, "--round", "2", "--seat", "0")
    assert unfinished.returncode == 2
    assert "unfinished_round in round 2:" in unfinished.stderr, unfinished.stderr
    doc["rounds"][0]["actions"][1] = {"seat": 9, "pass": True}  # round 1's action 2 is refused
    path.write_text(json.dumps(doc), encoding="utf-8")
    for command in ("review", "replay"):
        refused = domeng_cli(command, path, *(("--round", "2", "--seat", "0") if command == "review" else ()))
        assert refused.returncode == 2
        assert " in round 1, action 2: " in refused.stderr, (command, refused.stderr)


def test_the_command_shows_a_records_names_and_never_runs_them(tmp_path: Any) -> None:
    doc = _match("kozel", 2, {}, seed=2)
    doc["seats"][1] = "Bo\x1b]0;owned\x07\x1b[2J\u202e"
    path = tmp_path / "match.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    done = domeng_cli("review", path, "--round", "1", "--seat", "1", "--samples", SAMPLES)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[0].startswith(
        "kozel · round 1 · P1 (Bo\\u001b]0;owned\\u0007\\u001b[2J\\u202e)"
    )
    assert all(ch == "\n" or ch.isprintable() for ch in done.stdout), repr(done.stdout)


def test_one_asker_holds_at_most_two_review_places_and_others_are_served() -> None:
    """One client with rooms of its own (every seat of a four-seat Kozel table: four fresh reviews
    a round) asked for reviews faster than the worker made them and kept every place taken, so
    everyone else got ``reviews_busy``: an asker waits for at most ``max_per_asker`` at once."""

    async def body() -> None:
        release = asyncio.Event()

        async def load_record(match_id: int) -> dict[str, Any]:
            await release.wait()  # the worker is busy: every review waits
            raise RecordError("invalid_round", "not reviewed in this test")

        workers = ReviewWorkers(load_record, max_waiting=8, max_per_asker=2)
        flood = [asyncio.create_task(workers.review(m, 0, 0, "192.0.2.7")) for m in (1, 2)]
        await asyncio.sleep(0)
        with pytest.raises(ReviewsBusyError):
            await workers.review(3, 0, 0, "192.0.2.7")
        again = asyncio.create_task(workers.review(1, 0, 0, "192.0.2.7"))  # one it waits for anyway
        others = [asyncio.create_task(workers.review(m, 0, 0, "198.51.100.9")) for m in (4, 5)]
        admin = asyncio.create_task(workers.review(6, 0, 0))  # the admin's: not counted per asker
        await asyncio.sleep(0)
        assert not any(t.done() for t in [*flood, again, *others, admin])
        release.set()
        for task in [*flood, again, *others, admin]:
            with pytest.raises(RecordError):
                await task
        # done: the asker's places are free again
        with pytest.raises(RecordError):
            await workers.review(3, 0, 0, "192.0.2.7")
        await workers.close()

    asyncio.run(body())
