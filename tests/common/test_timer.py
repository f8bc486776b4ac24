"""The broker's one timer: callbacks that run once their delay has passed on its clock."""
import anyio

from pykbroker.common.time import SYSTEM_CLOCK, FakeClock
from pykbroker.common.timer import MockTimer, SystemTimer

from .running import run_until


def test_a_mock_timer_fires_due_tasks_in_deadline_order_at_their_deadline():
    timer = MockTimer(FakeClock(0))
    fired = []
    timer.schedule(30, lambda: fired.append(("late", timer.clock.now)))
    timer.schedule(10, lambda: fired.append(("early", timer.clock.now)))
    timer.schedule(20, lambda: fired.append("cancelled")).cancel()
    timer.advance(29)
    assert fired == [("early", 10)]
    timer.advance(1)
    assert fired == [("early", 10), ("late", 30)]
    assert timer.clock.now == 30


def test_a_task_scheduled_by_a_task_fires_within_the_same_advance_when_due():
    timer = MockTimer(FakeClock(0))
    fired = []
    timer.schedule(10, lambda: timer.schedule(5, lambda: fired.append(timer.clock.now)))
    timer.advance(20)
    assert fired == [15]


def test_a_failing_task_does_not_stop_the_others():
    timer = MockTimer()
    fired = []
    timer.schedule(1, lambda: 1 / 0)
    timer.schedule(2, lambda: fired.append("after"))
    timer.advance(2)
    assert fired == ["after"]


def test_the_system_timer_fires_in_deadline_order_and_cancelled_tasks_never():
    fired = []

    async def main():
        timer = SystemTimer(SYSTEM_CLOCK)
        done = anyio.Event()
        timer.schedule(30, lambda: fired.append("late"))
        timer.schedule(10, lambda: fired.append("early"))
        timer.schedule(20, lambda: fired.append("cancelled")).cancel()
        timer.schedule(40, done.set)
        await run_until(timer.run, done)
    anyio.run(main)
    assert fired == ["early", "late"]


def fired_with_a_task_scheduled_while_running(waiting_ms: int, scheduled_ms: int) -> list[str]:
    """Run a SystemTimer holding one task due in `waiting_ms`; while it runs, schedule another
    due in `scheduled_ms` that ends the run. What fired, in order."""
    fired = []

    async def main():
        timer = SystemTimer(SYSTEM_CLOCK)
        done = anyio.Event()
        timer.schedule(waiting_ms, lambda: fired.append("waiting"))

        async def schedule_while_running():
            await anyio.sleep(0)
            timer.schedule(scheduled_ms, lambda: (fired.append("scheduled"), done.set()))

        async with anyio.create_task_group() as tasks:
            tasks.start_soon(schedule_while_running)
            await run_until(timer.run, done)

    anyio.run(main)
    return fired


def test_a_task_scheduled_while_running_wakes_the_system_timer_early():
    assert fired_with_a_task_scheduled_while_running(60_000, 1) == ["scheduled"]


def test_a_later_task_scheduled_while_running_fires_after_the_one_the_timer_waits_for():
    assert fired_with_a_task_scheduled_while_running(20, 40) == ["waiting", "scheduled"]
