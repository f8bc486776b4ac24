"""The group coordinator's runtime is the coordinators' shared one (`coordinator/runtime.py`)."""

from ..runtime import LoopRuntime, Reply

__all__ = ["LoopRuntime", "Reply"]
