"""A measured figure: a number, or the reason there is none ("n/a (broker does not serve Produce)")."""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Figure:
    value: float | None
    reason: str = ""
    note: str = ""

    @property
    def measured(self) -> bool:
        return self.value is not None

    def text(self, digits: int = 1) -> str:
        if self.value is None:
            return f"n/a ({self.reason})" if self.reason else "n/a"
        number = f"{self.value:,.{digits}f}"
        return f"{number} ({self.note})" if self.note else number


def measured(value: float, note: str = "") -> Figure:
    return Figure(value, note=note)


def not_available(reason: str) -> Figure:
    return Figure(None, reason=reason)


def ratio_text(ours: Figure, theirs: Figure) -> str:
    if not (ours.measured and theirs.measured) or theirs.value == 0:
        return "—"
    return f"{ours.value / theirs.value:.2f}×"
