"""The runtime the coordinator's timers and background writes run on."""
import anyio

from pykbroker.common.time import FakeClock
from pykbroker.common.timer import MockTimer
from pykbroker.coordinator.runtime import LoopRuntime
from tests.common.running import run_until


def test_timers_and_the_time_are_the_brokers_timer_and_clock():
    timer = MockTimer(FakeClock(5_000))
    runtime = LoopRuntime(timer)
    fired = []
    runtime.call_later(100, lambda: fired.append(runtime.now_ms()))
    timer.advance(100)
    assert fired == [5_100]


def test_tasks_spawned_before_running_start_when_it_runs_and_failures_stay_contained():
    results = []

    async def main():
        runtime = LoopRuntime(MockTimer())
        done = anyio.Event()

        async def fails():
            raise RuntimeError("boom")

        async def works(value):
            results.append(value)
            done.set()

        runtime.spawn(fails)
        runtime.spawn(works, 7)
        await run_until(runtime.run, done)
    anyio.run(main)
    assert results == [7]
