"""Injected faults for client tests: the broker answers chosen requests with an error, late, or
not at all, and pauses chosen partitions' fetches. They sit at the dispatcher's seam, around the
handlers, which know nothing of them.

    fault_id = broker.faults.add(FaultRule(api="Produce", topic="t", error="NOT_LEADER_OR_FOLLOWER", count=3))
    broker.faults.remove(fault_id)

A rule matches requests by API (Kafka's name, "Produce", or key), client id, topic and partition;
it fires on a matching request `count` times (None: until removed), each time with `probability`.
What a firing rule does:

* `error`: the response carries that error code, shaped for the request's API and version. For
  the APIs whose requests name partitions (Produce, Fetch, ListOffsets, OffsetCommit,
  TxnOffsetCommit, DeleteRecords, OffsetForLeaderEpoch) only the matching partitions get it: they
  are not handed to the handler (a Produce writes nothing to them) and the other partitions of the
  request are served as usual. Metadata gets it on the matching topics; FindCoordinator on every
  key; the other APIs as their top-level error code (APIs without one cannot be given an error).
* `latency_ms`: the response is sent that much later (the connection waits; the others do not).
* `drop_connection`: the request is served, then the connection closes without a response.
* `pause_fetch`: consumers' fetches return no records for the matching partitions, as when
  nothing new arrived (the partitions' offsets are still reported); followers keep replicating.

The modules:

* `rules`: `FaultRule` and its checks;
* `injector`: `FaultInjector`, the broker's faults, and `RequestFaults`, what they do to one
  request;
* `responses`: injected errors shaped as each API's response carries them;
* `fetch`: a consumer's Fetch, whose partitions are faulted where the handler reads them;
* `configs`: the admin requests for faults (the config keys `pykbroker.fault.injection` and
  `pykbroker.partition.leader.move`);
* `interceptor`: `FaultInterceptor`, what the dispatcher calls around each handler.

Here: `FaultSeam`, the broker's faults, opened on first use. Until a fault is given (in-process
through `FaultSeam.injector`, `broker.faults`, or through the config requests' fault keys) every
request goes straight to its handler, as it would through an interceptor without faults, and none
of the modules above is imported.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ...common.lazy_names import names_from_modules
from ...protocol.api_keys import ApiKey

if TYPE_CHECKING:
    from .injector import FaultInjector, RequestFaults
    from .interceptor import FaultInterceptor
    from .responses import PARTITIONED_APIS, error_response
    from .rules import FaultRule, PartitionFault, api_key_of, can_carry_error, error_code_of

# The names above, each imported from its module on first use.
_MODULE_OF = {
    "PARTITIONED_APIS": "responses",
    "FaultInjector": "injector",
    "FaultInterceptor": "interceptor",
    "FaultRule": "rules",
    "PartitionFault": "rules",
    "RequestFaults": "injector",
    "api_key_of": "rules",
    "can_carry_error": "rules",
    "error_code_of": "rules",
    "error_response": "responses",
}

# The config requests, which may carry the fault keys (`configs.py`).
CONFIG_APIS = frozenset((ApiKey.ALTER_CONFIGS, ApiKey.INCREMENTAL_ALTER_CONFIGS, ApiKey.DESCRIBE_CONFIGS))


class FaultSeam:
    """One broker's injected faults, opened on first use."""

    def __init__(self) -> None:
        self._interceptor: FaultInterceptor | None = None

    @property
    def injector(self) -> FaultInjector:
        return self.interceptor.injector

    @property
    def interceptor(self) -> FaultInterceptor:
        if self._interceptor is None:
            from .injector import FaultInjector
            from .interceptor import FaultInterceptor

            self._interceptor = FaultInterceptor(FaultInjector())
        return self._interceptor

    def interceptor_for(self, api_key: int) -> FaultInterceptor | None:
        """What stands around a request's handler: None while there can be no fault for it."""
        if self._interceptor is None and api_key not in CONFIG_APIS:
            return None
        return self.interceptor


__getattr__ = names_from_modules(__name__, _MODULE_OF)


__all__ = [
    "PARTITIONED_APIS",
    "FaultInjector",
    "FaultInterceptor",
    "FaultRule",
    "FaultSeam",
    "PartitionFault",
    "RequestFaults",
    "api_key_of",
    "can_carry_error",
    "error_code_of",
    "error_response",
]
