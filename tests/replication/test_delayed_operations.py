"""acks=all and fetch long polling wait in the purgatories, on the broker's one timer: driven here
on a fake clock, so every timeout is exact and no test waits for real time."""
import anyio

from pykbroker.protocol.errors import ErrorCode
from tests.log.helpers import kv_batch

from .helpers import BROKER, FOLLOWER, TP, fetch_from, let_waiters_run, replica_manager


def run_while(background, test_body) -> None:
    """Run `background()` as a task while `test_body()` drives the broker or its fake clock."""
    async def main():
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(background)
            await let_waiters_run()
            await test_body()
    anyio.run(main)


def producer(manager, answers: dict, *, count: int = 1, acks: int = -1):
    """A produce of `count` records to TP whose answers land in `answers`."""
    async def produce():
        answers.update(await manager.append_records({TP: kv_batch(count)}, required_acks=acks,
                                                    timeout_ms=30_000))
    return produce


def consumer(manager, answers: dict):
    """A consumer's fetch from offset 0 with max_wait 500 ms; its answers land in `answers`."""
    async def fetch():
        answers.update(await manager.fetch_records(fetch_from(0), replica_id=-1, max_wait_ms=500,
                                                   min_bytes=1, max_bytes=1 << 20))
    return fetch


def clock_passing(manager, purgatory, answers: dict, timeout_ms: int):
    """Checks one operation waits in `purgatory` with no answer until `timeout_ms` have passed."""
    async def advance():
        assert purgatory.watched(TP) == 1
        manager.timer.advance(timeout_ms - 1)
        await let_waiters_run()
        assert answers == {}
        manager.timer.advance(1)
    return advance


class TestAcksAll:
    def test_times_out_with_request_timed_out_when_the_isr_does_not_catch_up(self, tmp_path):
        manager = replica_manager(tmp_path)
        answers = {}
        run_while(producer(manager, answers),
                  clock_passing(manager, manager.produce_purgatory, answers, 30_000))
        assert answers[TP].error == ErrorCode.REQUEST_TIMED_OUT
        assert manager.produce_purgatory.watched(TP) == 0

    def test_is_answered_once_the_follower_has_fetched_the_records(self, tmp_path):
        manager = replica_manager(tmp_path)
        answers = {}

        async def follower_catches_up():
            await manager.fetch_records(fetch_from(2), replica_id=FOLLOWER, max_wait_ms=0,
                                        min_bytes=1, max_bytes=1 << 20)
        run_while(producer(manager, answers, count=2), follower_catches_up)
        assert answers[TP].error == ErrorCode.NONE
        assert answers[TP].base_offset == 0


class TestFetchLongPolling:
    def test_an_empty_fetch_is_answered_empty_when_max_wait_passes(self, tmp_path):
        manager = replica_manager(tmp_path)
        answers = {}
        run_while(consumer(manager, answers),
                  clock_passing(manager, manager.fetch_purgatory, answers, 500))
        assert answers[TP].error_code == ErrorCode.NONE
        assert answers[TP].records_size == 0
        assert manager.fetch_purgatory.watched(TP) == 0

    def test_a_waiting_fetch_is_answered_before_max_wait_once_min_bytes_are_readable(self, tmp_path):
        manager = replica_manager(tmp_path, replicas=[BROKER])  # appends are readable at once
        answers = {}
        run_while(consumer(manager, answers), producer(manager, {}, acks=1))
        assert answers[TP].records_size > 0
