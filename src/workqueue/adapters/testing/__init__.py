"""Test support any adapter may use: the FakeClock here, the contract kit in ``.contract``.

``workqueue.adapters.testing.contract`` imports pytest and Hypothesis; this package face
does not, so importing FakeClock needs neither.
"""

from __future__ import annotations

from workqueue.adapters.testing.clock import DEFAULT_START, MAX_SETTLE_YIELDS, FakeClock

__all__ = ["DEFAULT_START", "MAX_SETTLE_YIELDS", "FakeClock"]
