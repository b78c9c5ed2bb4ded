"""The caps a worker's kinds' policies declare, written to the store as it starts (docs/adr/0035).

A kind's handler may declare a fleet-wide cap, ``KindPolicy(max_running=N)``. The
store holds it, so that every worker obeys it, those that do not know the policy
too; a worker writes its kinds' caps as it starts, before its first claim. An
operator's cap (``workqueue cap KIND N``) wins: the store leaves it as it is, and
the start-up line of the kind says which cap is in force.
"""

from __future__ import annotations

import logging
from collections.abc import Collection
from typing import Any

from workqueue.application.registry import KindRegistry
from workqueue.domain import CapSource, WorkStore

__all__ = ["write_policy_caps"]

logger = logging.getLogger("workqueue.caps")


async def write_policy_caps(
    store: WorkStore, registry: KindRegistry[Any], kinds: Collection[str]
) -> None:
    """Write the cap each of ``kinds`` (those the worker claims) has in its handler's policy,
    by kind, and log the cap in force of each; a kind whose policy declares none is
    left as it is (a cap an operator set stays).

    :raises StoreUnavailableError: if the store cannot be reached.
    """
    for kind in sorted(kinds):
        declared = registry.handler(kind).policy.max_running
        if declared is None:
            continue
        cap = await store.cap_kind(kind, declared, source=CapSource.POLICY)
        # A policy's cap is never cleared: the store answers its own or an operator's.
        assert cap is not None
        extra = {"kind": kind, "max_running": cap.max_running, "cap_source": cap.source.value}
        if cap.source is CapSource.OPERATOR:
            logger.info(
                "%s is capped at %d running at once by an operator (its policy says %d; "
                "`workqueue cap %s none` hands it back to its policy)",
                kind,
                cap.max_running,
                declared,
                kind,
                extra=extra,
            )
        else:
            logger.info(
                "%s is capped at %d running at once by its policy", kind, declared, extra=extra
            )
