"""The transaction coordinator: transactional ids, their state in `__transaction_state`, and the
markers that complete their transactions (see `coordinator.py`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ...common.lazy_names import names_from_modules
from . import txn_topic

if TYPE_CHECKING:
    from .coordinator import DescribedTransaction, TransactionCoordinator
    from .state_manager import ListedTransaction, TransactionConfig, TransactionListing
    from .verifier import TransactionVerifier

# The names above, each imported from its module on first use: a broker without transactions
# loads none of this package but `txn_topic`.
_MODULE_OF = {
    "DescribedTransaction": "coordinator",
    "TransactionCoordinator": "coordinator",
    "ListedTransaction": "state_manager",
    "TransactionConfig": "state_manager",
    "TransactionListing": "state_manager",
    "TransactionVerifier": "verifier",
}


__getattr__ = names_from_modules(__name__, _MODULE_OF)


__all__ = [
    "DescribedTransaction",
    "ListedTransaction",
    "TransactionConfig",
    "TransactionCoordinator",
    "TransactionListing",
    "TransactionVerifier",
    "txn_topic",
]
