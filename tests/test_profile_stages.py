"""benchmarks/profile_stages.py: py-spy's collapsed stacks sorted into stages (issue 15's profile)."""

from __future__ import annotations

from benchmarks.profile_stages import format_stages, stages

LOOP = "Runner.run (asyncio/runners.py:118);BaseEventLoop._run_once (asyncio/base_events.py:1922)"
MOVE = f"{LOOP};Room._run (app/rooms/room.py:300);Moves.on_action (app/rooms/moves.py:80)"
STACKS = "\n".join(
    [
        f"{LOOP};EpollSelector.select (selectors.py:468) 50",  # waiting: left out
        f"{MOVE};State.apply (core.py:10) 6",  # the move itself
        f"{MOVE};send_updates (app/rooms/frames.py:40);WebSocket.send (starlette/websockets.py:9) 3",
        f"{MOVE};shared_view_json (views.py:200) 2",
        "Thread.run (threading.py:982);_WorkItem.run (concurrent/futures/thread.py:58);"
        "SqliteThread._transaction (app/store/sqlite_thread.py:51);run_ops (app/store/batches.py:93) 5",
        f"{LOOP};write_loop (app/store/group_commit.py:120);SqliteThread.run (app/store/sqlite_thread.py:80);"
        "SqliteThread._run_inline (app/store/sqlite_thread.py:110);run_ops (app/store/batches.py:93) 2",
        "Thread.run (threading.py:982);_worker (concurrent/futures/thread.py:83) 40",  # idle thread
        f"{LOOP};TimerHandle.__lt__ (asyncio/events.py:5) 4",
        "_run_module_as_main (<frozen runpy>:198);Runner.run (asyncio/runners.py:118) 30",  # uvloop waits
        "Thread.run (threading.py:982);_ExecutorManagerThread.run (concurrent/futures/process.py:344);"
        "wait (multiprocessing/connection.py:947);_PollLikeSelector.select (selectors.py:415) 25",
        "not a stack line",
    ]
)


def test_busy_samples_go_to_the_innermost_stage_and_waits_are_left_out() -> None:
    """uvloop's wait (in C, under `Runner.run`) and the bot pool's manager thread count as waits:
    py-spy reported them busy on this machine, which made "other" half of every profile."""
    shares, busy = stages(STACKS)
    assert busy == 22
    assert shares["rules: apply the move"] == 6 / 22
    assert shares["send: WebSocket frames"] == 3 / 22  # sent inside the move: counted as sending
    assert shares["views: each seat's view as JSON"] == 2 / 22
    # in the thread (not the thread pool's hand-off) or on the loop (not the hand-off either)
    assert shares["store: transaction"] == (5 + 2) / 22
    assert shares["other"] == 4 / 22
    assert abs(sum(shares.values()) - 1) < 1e-9


def test_the_table_puts_targets_side_by_side() -> None:
    lines = format_stages({"ours": stages(STACKS), "fan-out": stages("")})
    assert lines[0].split()[-2:] == ["ours", "fan-out"]
    row = next(line for line in lines if line.startswith("rules: apply the move"))
    assert row.split()[-2:] == ["27.3%", "0.0%"]  # 6 of 22
    assert lines[-1].split()[-2:] == ["22", "0"]
