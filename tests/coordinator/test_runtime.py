"""The event-loop runtime the coordinator's timers and background writes run on."""
import anyio

from pykbroker.coordinator.group.runtime import LoopRuntime


def test_timers_fire_in_deadline_order_and_cancelled_ones_never():
    fired = []

    async def main():
        runtime = LoopRuntime()
        done = anyio.Event()
        runtime.call_later(30, lambda: fired.append("late"))
        runtime.call_later(10, lambda: fired.append("early"))
        runtime.call_later(20, lambda: fired.append("cancelled")).cancel()
        runtime.call_later(40, done.set)
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(runtime.run)
            with anyio.fail_after(10):
                await done.wait()
            tasks.cancel_scope.cancel()
    anyio.run(main)
    assert fired == ["early", "late"]


def test_a_timer_scheduled_while_running_wakes_the_runtime_early():
    fired = []

    async def main():
        runtime = LoopRuntime()
        done = anyio.Event()
        runtime.call_later(60_000, lambda: fired.append("much later"))
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(runtime.run)
            await anyio.sleep(0)
            runtime.call_later(1, lambda: (fired.append("soon"), done.set()))
            with anyio.fail_after(10):
                await done.wait()
            tasks.cancel_scope.cancel()
    anyio.run(main)
    assert fired == ["soon"]


def test_tasks_spawned_before_running_start_when_it_runs_and_failures_stay_contained():
    results = []

    async def main():
        runtime = LoopRuntime()
        done = anyio.Event()

        async def fails():
            raise RuntimeError("boom")

        async def works(value):
            results.append(value)
            done.set()

        runtime.spawn(fails)
        runtime.spawn(works, 7)
        runtime.call_later(0, lambda: 1 / 0)
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(runtime.run)
            with anyio.fail_after(10):
                await done.wait()
            tasks.cancel_scope.cancel()
    anyio.run(main)
    assert results == [7]
