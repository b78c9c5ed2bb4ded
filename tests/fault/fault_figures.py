"""The figures each fault test prints, and the sizes it runs at.

Sizes come from the environment so that CI runs small and a full run uses the
issue's counts::

    WORKQUEUE_FAULT_ITEMS=2000 WORKQUEUE_FAULT_WORKERS=4 \\
        .venv/bin/python -m pytest -m fault -s

With ``WORKQUEUE_FAULT_FIGURES=path`` each test also appends its figures to that
file as one JSON line (docs/reliability.md is written from such a file).
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass

__all__ = ["FaultSize", "fault_size", "report_figures"]


@dataclass(frozen=True, slots=True)
class FaultSize:
    """How much work a fault test does: items to drain, and workers draining them."""

    items: int
    workers: int


def fault_size() -> FaultSize:
    """``WORKQUEUE_FAULT_ITEMS`` (default 300) and ``WORKQUEUE_FAULT_WORKERS`` (default 4).

    :raises ValueError: if either is not a positive integer.
    """
    items = int(os.environ.get("WORKQUEUE_FAULT_ITEMS", "300"))
    workers = int(os.environ.get("WORKQUEUE_FAULT_WORKERS", "4"))
    if items < 1 or workers < 1:
        raise ValueError("WORKQUEUE_FAULT_ITEMS and WORKQUEUE_FAULT_WORKERS must be positive")
    return FaultSize(items=items, workers=workers)


def report_figures(test: str, **figures: object) -> None:
    """Print one line of figures (shown with ``pytest -s``) and append it to the figures file."""
    print(f"\nfault figures {test}: " + " ".join(f"{k}={v}" for k, v in figures.items()))
    path = os.environ.get("WORKQUEUE_FAULT_FIGURES")
    if path:
        with open(path, "a", encoding="utf-8") as out:
            out.write(json.dumps({"test": test, **figures}, default=str) + "\n")
