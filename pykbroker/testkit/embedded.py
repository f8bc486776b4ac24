"""A broker inside the calling process, on a thread and an event loop of its own, for tests and
applications that embed one.

    with EmbeddedBroker() as broker:                 # or: async with EmbeddedBroker() as broker:
        producer = KafkaProducer(bootstrap_servers=broker.bootstrap)

It runs the harness's single-broker settings (`settings.py`: the development profile of
`pykbroker --dev`) under the caller's `overrides`, listens on a free 127.0.0.1 port and keeps its
data in a temporary directory, removed when it stops, unless `directory` names one to keep.
`start()` and `stop()` may be called from any thread; `async with` runs them on a worker thread,
so that the caller's event loop never blocks. A broker that would halt its process (no log
directory left) stops instead, with `halted_with` set to the exit code. Faults are injected on the broker's loop
(`inject_fault`, `remove_fault`, `clear_faults`); `call` and `call_async` run functions there.
"""

from __future__ import annotations

import importlib
import os
import shutil
import tempfile
import threading
import time
from collections.abc import Callable, Coroutine, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import anyio
import anyio.from_thread
import anyio.lowlevel
import anyio.to_thread

from .settings import single_broker_settings

if TYPE_CHECKING:
    from ..broker import Broker
    from ..server.socket_server import BoundListener

_Result = TypeVar("_Result")


class EmbeddedBroker:
    """One broker in this process; `start()` returns once it serves."""

    def __init__(
        self,
        overrides: Mapping[str, object] | None = None,
        *,
        directory: str | os.PathLike[str] | None = None,
        broker_id: int = 0,
        start_timeout: float = 30.0,
    ) -> None:
        """`overrides` are server.properties keys over the single-broker settings (a `listeners`
        or `log.dirs` given here wins). `directory` keeps the data after `stop()`."""
        self.directory = None if directory is None else Path(directory)
        self.overrides = single_broker_settings(overrides, broker_id=broker_id)
        self.start_timeout = start_timeout
        self._broker: Broker | None = None
        self._thread: threading.Thread | None = None
        self._failure: BaseException | None = None
        self._loop_token: anyio.lowlevel.EventLoopToken | None = None
        self._data_directory: Path | None = None
        self._temporary = False
        self.halted_with: int | None = None  # the exit code the broker halted with (no log dir left)

    # -- where it is ---------------------------------------------------------------------
    @property
    def host(self) -> str:
        return self._first_listener().host

    @property
    def port(self) -> int:
        return self._first_listener().port

    @property
    def bootstrap(self) -> str:
        """`host:port` of the first listener, for a client's bootstrap servers."""
        listener = self._first_listener()
        return f"{listener.host}:{listener.port}"

    @property
    def data_directory(self) -> Path:
        """The directory given, or the temporary one, while the broker runs: `log.dirs` is its
        `kafka-logs` unless overridden."""
        if self._data_directory is None:
            raise RuntimeError("the embedded broker is not running")
        return self._data_directory

    @property
    def broker(self) -> Broker:
        """The running Broker, to be used on its own event loop only (see `call`)."""
        if self._broker is None or not self.is_running():
            raise RuntimeError("the embedded broker is not running")
        return self._broker

    def _first_listener(self) -> BoundListener:
        return self.broker.listeners[0]

    def is_running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    # -- lifecycle ----------------------------------------------------------------------
    def start(self) -> EmbeddedBroker:
        """Open the broker here (a port in use or a bad setting raises at once), then serve it
        on a new thread; returns once it serves."""
        if self.is_running():
            raise RuntimeError("the embedded broker is already running")
        from ..broker import Broker  # the broker's modules load only when one starts
        from ..config import BrokerConfig

        settings = dict(self.overrides)
        data_directory = self._make_data_directory()
        if "log.dirs" not in settings and "log.dir" not in settings:
            settings["log.dirs"] = str(data_directory / "kafka-logs")
        try:
            broker = Broker(BrokerConfig(settings))
            broker.halt = self._halt  # a broker that must halt stops, and leaves this process alone
            broker.open()
        except BaseException:
            self._remove_temporary_data()
            raise
        self._broker, self._failure, self._loop_token = broker, None, None
        self._thread = threading.Thread(target=self._serve, name=f"pykbroker-{broker.broker_id}", daemon=True)
        self._thread.start()
        self._wait_until_serving(broker)
        return self

    def _halt(self, exit_code: int) -> None:
        """What halts a broker process (every log directory failed) stops this one instead."""
        self.halted_with = exit_code
        if self._broker is not None:
            self._broker.shutdown()

    def _make_data_directory(self) -> Path:
        if self.directory is not None:
            self.directory.mkdir(parents=True, exist_ok=True)
            self._data_directory, self._temporary = self.directory, False
        else:
            self._data_directory, self._temporary = Path(tempfile.mkdtemp(prefix="pykbroker-")), True
        return self._data_directory

    def _serve(self) -> None:
        """The broker's thread: its event loop until the broker stops, then the temporary data
        goes (the log directories are unlocked by then)."""
        broker = self._broker
        if broker is None:
            return
        try:
            anyio.run(self._run_on_this_thread, broker)
        except BaseException as failure:  # noqa: BLE001 - reported by start() or stop()
            self._failure = failure
        finally:
            self._remove_temporary_data()

    async def _run_on_this_thread(self, broker: Broker) -> None:
        self._loop_token = anyio.lowlevel.current_token()
        await broker.run(handle_signals=False)

    def _wait_until_serving(self, broker: Broker) -> None:
        thread = self._thread
        deadline = time.monotonic() + self.start_timeout
        while not broker.serving.wait(0.01):
            if thread is None or not thread.is_alive():
                failure, self._failure, self._broker, self._thread = self._failure, None, None, None
                raise RuntimeError("the embedded broker stopped while starting") from failure
            if time.monotonic() > deadline:
                self.stop()
                raise TimeoutError(f"the embedded broker did not start within {self.start_timeout}s")

    def stop(self, timeout: float = 30.0) -> None:
        """Stop the broker and wait for its thread (from any thread but the broker's own, where
        the stop is only asked for); its temporary data is removed. Stopping twice is harmless."""
        broker, thread = self._broker, self._thread
        if broker is None or thread is None:
            return
        broker.shutdown()
        if threading.current_thread() is thread:
            return
        thread.join(timeout)
        if thread.is_alive():
            raise TimeoutError(f"the embedded broker did not stop within {timeout}s")
        self._broker = self._thread = None
        failure, self._failure = self._failure, None
        if failure is not None:
            raise RuntimeError("the embedded broker failed") from failure

    def _remove_temporary_data(self) -> None:
        if self._temporary and self._data_directory is not None:
            shutil.rmtree(self._data_directory, ignore_errors=True)
            self._data_directory, self._temporary = None, False

    def __enter__(self) -> EmbeddedBroker:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    async def __aenter__(self) -> EmbeddedBroker:
        return await anyio.to_thread.run_sync(self.start)

    async def __aexit__(self, *exc_info: object) -> None:
        await anyio.to_thread.run_sync(self.stop)

    # -- on the broker's loop -----------------------------------------------------------
    def call(self, function: Callable[..., _Result], *args: object) -> _Result:
        """Run `function(*args)` on the broker's event loop and return its result: the one safe
        way to touch the Broker's services from another thread."""
        token = self._loop_token
        if token is None or not self.is_running():
            raise RuntimeError("the embedded broker is not running")
        if self._thread is threading.current_thread():
            return function(*args)
        return anyio.from_thread.run_sync(function, *args, token=token)

    def call_async(self, function: Callable[..., Coroutine[Any, Any, _Result]], *args: object) -> _Result:
        """Run the coroutine function `function(*args)` on the broker's event loop, from another
        thread, and return its result (e.g. a service's async method)."""
        token = self._loop_token
        if token is None or not self.is_running():
            raise RuntimeError("the embedded broker is not running")
        return anyio.from_thread.run(function, *args, token=token)

    def inject_fault(self, **rule_fields: Any) -> int:
        """Add a fault (the fields of `pykbroker.server.faults.FaultRule`); returns its id."""
        faults = importlib.import_module("pykbroker.server.faults")
        rule = faults.FaultRule(**rule_fields)
        return self.call(lambda: self._faults().add(rule))

    def remove_fault(self, fault_id: int) -> bool:
        """Remove one injected fault; False when no fault has that id."""
        return self.call(lambda: self._faults().remove(fault_id))

    def clear_faults(self) -> None:
        """Remove every injected fault."""
        self.call(lambda: self._faults().clear())

    def _faults(self) -> Any:
        """The broker's FaultInjector (`pykbroker.server.faults`), on the broker's loop."""
        broker: Any = self.broker
        return broker.faults

    # -- administration -----------------------------------------------------------------
    def create_topic(
        self, name: str, partitions: int = 1, replication_factor: int = 1, configs: dict[str, str] | None = None
    ) -> str:
        """Create a topic (CreateTopics, as a client would) and wait for its leaders."""
        from .wire import create_topic

        return create_topic(self.bootstrap, name, partitions, replication_factor, configs)
