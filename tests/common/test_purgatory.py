"""One delayed-operation purgatory for every kind of wait: operations complete when their
condition holds (re-checked through the keys they watch) or when their timeout passes on the
purgatory's timer. Both ways of waiting are shown: callbacks and `await`."""
import anyio
import pytest

from pykbroker.common.purgatory import DelayedOperation, DelayedOperationPurgatory
from pykbroker.common.timer import MockTimer


class WaitForFlag(DelayedOperation):
    """Completes once `state["ready"]` is true; records what happened to it."""

    def __init__(self, timeout_ms, state):
        super().__init__(timeout_ms)
        self.state = state
        self.events = []

    def try_complete(self):
        return self.state["ready"] and self.force_complete()

    def on_complete(self):
        self.events.append("complete")

    def on_expiration(self):
        self.events.append("expired")


@pytest.fixture
def timer():
    return MockTimer()


@pytest.fixture
def purgatory(timer):
    return DelayedOperationPurgatory("test", timer)


@pytest.fixture
def state():
    return {"ready": False}


@pytest.fixture
def operation(state):
    """Waits up to 1000 ms for `state["ready"]`."""
    return WaitForFlag(1000, state)


def await_while(purgatory, operation, drive):
    """`await purgatory.wait_for(operation, ["k"])` in a task while `drive()` runs."""
    async def main():
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(purgatory.wait_for, operation, ["k"])
            await anyio.sleep(0)
            drive()
    anyio.run(main)


def test_an_operation_whose_condition_holds_completes_at_once_and_watches_nothing(
        purgatory, state, operation):
    state["ready"] = True
    assert purgatory.try_complete_else_watch(operation, ["k"])
    assert operation.events == ["complete"]
    assert purgatory.watched("k") == 0


def test_a_check_on_a_watched_key_completes_it_and_its_timeout_never_fires(
        timer, purgatory, state, operation):
    assert not purgatory.try_complete_else_watch(operation, ["a", "b"])
    assert purgatory.check_and_complete("a") == 0
    state["ready"] = True
    assert purgatory.check_and_complete("b") == 1
    timer.advance(1000)
    assert operation.events == ["complete"]
    assert not operation.expired
    assert purgatory.watched("a") == purgatory.watched("b") == 0


def test_the_timeout_completes_it_as_expired_on_the_timers_clock(timer, purgatory, operation):
    purgatory.try_complete_else_watch(operation, ["k"])
    timer.advance(999)
    assert not operation.completed
    timer.advance(1)
    assert operation.expired
    assert operation.events == ["complete", "expired"]
    assert purgatory.watched("k") == 0


def test_an_awaiting_waiter_returns_when_a_check_completes_it(purgatory, state, operation):
    def condition_holds():
        state["ready"] = True
        purgatory.check_and_complete("k")
    await_while(purgatory, operation, condition_holds)
    assert operation.completed and not operation.expired


def test_an_awaiting_waiter_returns_when_the_fake_clock_passes_its_timeout(
        timer, purgatory, operation):
    await_while(purgatory, operation, lambda: timer.advance(1000))
    assert operation.expired


def test_a_cancelled_waiter_leaves_the_purgatory_and_its_timeout_is_dropped(
        timer, purgatory, operation):
    async def main():
        with anyio.move_on_after(0):
            await purgatory.wait_for(operation, ["k"])
    anyio.run(main)
    assert purgatory.watched("k") == 0
    timer.advance(1000)
    assert operation.events == []


def test_completing_one_operation_may_start_another_on_the_same_key(purgatory, state):
    second = WaitForFlag(5000, {"ready": False})

    class StartsAnother(WaitForFlag):
        def on_complete(self):
            purgatory.try_complete_else_watch(second, ["k"])

    purgatory.try_complete_else_watch(StartsAnother(1000, state), ["k"])
    state["ready"] = True
    assert purgatory.check_and_complete("k") == 1
    assert purgatory.watched("k") == 1
