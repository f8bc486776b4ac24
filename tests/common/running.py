"""Running a service's `run()` in the background of an anyio test until an event is set."""
import anyio

LONG_ENOUGH = 10  # seconds: a bound never reached when the code under test works


async def run_until(run, done: anyio.Event) -> None:
    """Start `run()` as a task, wait for `done`, then cancel it."""
    async with anyio.create_task_group() as tasks:
        tasks.start_soon(run)
        with anyio.fail_after(LONG_ENOUGH):
            await done.wait()
        tasks.cancel_scope.cancel()
