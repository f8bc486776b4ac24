"""acks=all and fetch long polling wait in the purgatories, on the broker's one timer: driven here
on a fake clock, so every timeout is exact and no test waits for real time."""
import anyio

from pykbroker.protocol.errors import ErrorCode
from tests.log.helpers import kv_batch

from .helpers import BROKER, FOLLOWER, TP, fetch_from, let_waiters_run, replica_manager


def run_while(background, test_body):
    """Run `background()` as a task while `test_body()` drives the fake clock."""
    async def main():
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(background)
            await let_waiters_run()
            await test_body()
    anyio.run(main)


class TestAcksAll:
    def test_times_out_with_request_timed_out_when_the_isr_does_not_catch_up(self, tmp_path):
        manager = replica_manager(tmp_path)
        answers = {}

        async def produce():
            answers.update(await manager.append_records({TP: kv_batch(1)}, required_acks=-1,
                                                        timeout_ms=30_000))

        async def clock():
            assert manager.produce_purgatory.watched(TP) == 1
            manager.timer.advance(29_999)
            await let_waiters_run()
            assert answers == {}
            manager.timer.advance(1)
        run_while(produce, clock)
        assert answers[TP].error == ErrorCode.REQUEST_TIMED_OUT
        assert manager.produce_purgatory.watched(TP) == 0

    def test_is_answered_once_the_follower_has_fetched_the_records(self, tmp_path):
        manager = replica_manager(tmp_path)
        answers = {}

        async def produce():
            answers.update(await manager.append_records({TP: kv_batch(2)}, required_acks=-1,
                                                        timeout_ms=30_000))

        async def follower_catches_up():
            await manager.fetch_records(fetch_from(2), replica_id=FOLLOWER, max_wait_ms=0,
                                        min_bytes=1, max_bytes=1 << 20)
        run_while(produce, follower_catches_up)
        assert answers[TP].error == ErrorCode.NONE
        assert answers[TP].base_offset == 0


class TestFetchLongPolling:
    def test_an_empty_fetch_is_answered_empty_when_max_wait_passes(self, tmp_path):
        manager = replica_manager(tmp_path)
        answers = {}

        async def fetch():
            answers.update(await manager.fetch_records(fetch_from(0), replica_id=-1,
                                                       max_wait_ms=500, min_bytes=1,
                                                       max_bytes=1 << 20))

        async def clock():
            assert manager.fetch_purgatory.watched(TP) == 1
            manager.timer.advance(499)
            await let_waiters_run()
            assert answers == {}
            manager.timer.advance(1)
        run_while(fetch, clock)
        assert answers[TP].error == ErrorCode.NONE
        assert answers[TP].size == 0
        assert manager.fetch_purgatory.watched(TP) == 0

    def test_a_waiting_fetch_is_answered_before_max_wait_once_min_bytes_are_readable(self, tmp_path):
        manager = replica_manager(tmp_path, replicas=[BROKER])  # appends are readable at once
        answers = {}

        async def fetch():
            answers.update(await manager.fetch_records(fetch_from(0), replica_id=-1,
                                                       max_wait_ms=500, min_bytes=1,
                                                       max_bytes=1 << 20))

        async def produce():
            await manager.append_records({TP: kv_batch(1)}, required_acks=1, timeout_ms=0)
        run_while(fetch, produce)
        assert answers[TP].size > 0
