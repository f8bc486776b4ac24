"""The transaction coordinator: transactional ids, their state in `__transaction_state`, and the
markers that complete their transactions (see `coordinator.py`)."""

from . import txn_topic
from .coordinator import DescribedTransaction, TransactionCoordinator
from .state_manager import ListedTransaction, TransactionConfig, TransactionListing
from .verifier import TransactionVerifier

__all__ = [
    "DescribedTransaction",
    "ListedTransaction",
    "TransactionConfig",
    "TransactionCoordinator",
    "TransactionListing",
    "TransactionVerifier",
    "txn_topic",
]
