"""Work from other threads reaches the event loop through the bridge, in order, never blocking."""
import concurrent.futures
import threading

import anyio

from pykbroker.cluster.loop_bridge import LoopBridge


def test_posts_before_the_loop_runs_wait_and_run_in_order():
    bridge, seen = LoopBridge(), []
    bridge.post(seen.append, 1)
    bridge.post(seen.append, 2)
    assert seen == []
    bridge.flush_pending()
    assert seen == [1, 2]


def test_posts_from_another_thread_run_on_the_loop_thread_in_order():
    bridge, seen = LoopBridge(), []

    async def main():
        bridge.attach()
        loop_thread = threading.current_thread()
        done = anyio.Event()

        def last() -> None:
            seen.append(threading.current_thread() is loop_thread)
            done.set()

        def poster() -> None:
            for number in range(3):
                bridge.post(seen.append, number)
            bridge.post(last)
        threading.Thread(target=poster).start()
        with anyio.fail_after(5):
            await done.wait()
    anyio.run(main)
    assert seen == [0, 1, 2, True]


def test_a_failing_post_does_not_stop_the_next():
    bridge, seen = LoopBridge(), []
    bridge.post(lambda: 1 / 0)
    bridge.post(seen.append, "after")
    bridge.flush_pending()
    assert seen == ["after"]


def test_after_detach_posts_are_dropped():
    bridge, seen = LoopBridge(), []
    bridge.detach()
    bridge.post(seen.append, 1)
    bridge.flush_pending()
    assert seen == []


def test_the_loop_awaits_a_future_completed_on_another_thread():
    bridge = LoopBridge()

    async def main():
        future = concurrent.futures.Future()
        threading.Timer(0.01, lambda: future.set_result(42)).start()
        with anyio.fail_after(5):
            return await bridge.wait(future)
    assert anyio.run(main) == 42
