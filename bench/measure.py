"""How repeated measurements are summarised: a median with its min-max, and percentiles."""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass

__all__ = ["Spread", "percentile"]


@dataclass(frozen=True, slots=True)
class Spread:
    """The median of some runs' figures, and the lowest and highest of them."""

    median: float
    low: float
    high: float
    values: tuple[float, ...]

    @classmethod
    def of(cls, values: Sequence[float]) -> Spread:
        """The spread of ``values``.

        :raises ValueError: if there are none.
        """
        if not values:
            raise ValueError("a spread needs at least one value")
        return cls(
            median=statistics.median(values),
            low=min(values),
            high=max(values),
            values=tuple(values),
        )


def percentile(values: Sequence[float], fraction: float) -> float:
    """The nearest-rank percentile: the smallest value with ``fraction`` of all at or below it.

    :raises ValueError: if there are no values or ``fraction`` is outside (0, 1].
    """
    if not values:
        raise ValueError("a percentile needs at least one value")
    if not 0 < fraction <= 1:
        raise ValueError(f"fraction must be in (0, 1], not {fraction}")
    ordered = sorted(values)
    return ordered[max(math.ceil(fraction * len(ordered)) - 1, 0)]
