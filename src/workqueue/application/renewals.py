"""Leases renewed on a worker's behalf while its event loop could not renew them.

While a handler blocks the worker's event loop, no heartbeat of the process can
run; the :class:`~workqueue.application.watchdog.LoopWatchdog` renews the other
items' leases from a thread of its own (docs/adr/0036). It moves the
:attr:`~workqueue.application.claim.Claim.secured_until` of each claim it can see
on; a claim whose statement was in flight when the loop stopped is built only
once the loop runs again, from when the claim was sent. :class:`Renewals` keeps
what the watchdog secured for such a claim until its
:class:`~workqueue.application.claim.Claimer` builds it.

One :class:`Renewals` is shared by a process's executors and its watchdog, each
on its own thread. Only the watchdog writes (notes and forgets); the claimers
read, each read a single dictionary step, which the interpreter does whole.
"""

from __future__ import annotations

from datetime import datetime

from workqueue.domain import Lease

__all__ = ["Renewals"]


class Renewals:
    """Until when the watchdog secured each lease it renewed (see the module)."""

    __slots__ = ("_until",)

    def __init__(self) -> None:
        self._until: dict[Lease, datetime] = {}

    def note(self, lease: Lease, until: datetime) -> None:
        """Record that ``lease`` was renewed and is secured until ``until``."""
        self._until[lease] = until

    def secured_until(self, lease: Lease, own: datetime) -> datetime:
        """The later of ``own`` (what the claim itself secured) and what was noted for ``lease``."""
        noted = self._until.get(lease)
        return own if noted is None else max(own, noted)

    def forget_before(self, now: datetime) -> None:
        """Forget every renewal that has run out by ``now``: it can no longer help a claim."""
        for lease, until in list(self._until.items()):
            if until <= now:
                del self._until[lease]

    def __len__(self) -> int:
        return len(self._until)
