"""What a benchmark run reports: named figures, one value per run, and their targets."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from bench.measure import Spread

__all__ = ["Figure", "Target", "WorkloadReport"]


@dataclass(frozen=True, slots=True)
class Target:
    """A bound the median must reach: at least ``bound`` (``at_least``) or at most it."""

    bound: float
    at_least: bool

    def met_by(self, value: float) -> bool:
        return value >= self.bound if self.at_least else value <= self.bound

    def describe(self, unit: str) -> str:
        sign = "≥" if self.at_least else "≤"
        return f"{sign} {_number(self.bound)} {unit}".rstrip()


@dataclass(slots=True)
class Figure:
    """One reported number: its values across runs, and its target if it has one."""

    key: str
    label: str
    unit: str
    values: list[float] = field(default_factory=list)
    target: Target | None = None

    @property
    def spread(self) -> Spread:
        return Spread.of(self.values)

    @property
    def met(self) -> bool | None:
        """Whether the median meets the target; None without a target."""
        if self.target is None or not self.values:
            return None
        return self.target.met_by(self.spread.median)

    def as_json(self) -> dict[str, Any]:
        # A figure of a part that was skipped (no PgQueuer, no pgbouncer) has no values.
        spread = self.spread if self.values else None
        return {
            "label": self.label,
            "unit": self.unit,
            "values": self.values,
            "median": None if spread is None else spread.median,
            "min": None if spread is None else spread.low,
            "max": None if spread is None else spread.high,
            "target": None if self.target is None else self.target.describe(self.unit),
            "met": self.met,
        }


@dataclass(slots=True)
class WorkloadReport:
    """A workload's figures, and the details of each run for the JSON file."""

    name: str
    figures: list[Figure]
    runs: list[dict[str, Any]] = field(default_factory=list)

    def figure(self, key: str) -> Figure:
        """The figure called ``key``.

        :raises KeyError: if this workload reports no such figure.
        """
        for figure in self.figures:
            if figure.key == key:
                return figure
        raise KeyError(f"{self.name} reports no figure {key!r}")


def _number(value: float) -> str:
    if value >= 100:
        return f"{value:,.0f}"
    if value >= 10:
        return f"{value:.1f}"
    return f"{value:.2f}"
