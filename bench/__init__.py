"""The workqueue benchmark: throughput, latency and growth figures against a pgbench ceiling.

Run it with ``scripts/bench`` (or ``python -m bench.run``); see ``bench/README.md``.
Nothing here is collected by pytest: the benchmark measures, it does not test.
"""

from __future__ import annotations

__all__: list[str] = []
