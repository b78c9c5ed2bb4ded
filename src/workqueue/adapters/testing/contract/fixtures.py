"""The fixtures an adapter provides to run the kit: abstract until overridden."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import ClassVar

import pytest

from workqueue.adapters.testing.clock import FakeClock
from workqueue.adapters.testing.contract.backdoor import Backdoor
from workqueue.adapters.testing.contract.capabilities import StoreCapabilities
from workqueue.domain import RefreshTokenStore, WorkQueue, WorkStore

__all__ = ["ContractFixtures", "QueueFactory", "StoreFactory"]

StoreFactory = Callable[[], Awaitable[WorkStore]]
"""Makes one more WorkStore on the same data, with connections of its own."""

QueueFactory = Callable[[], Awaitable[WorkQueue]]
"""Makes one more WorkQueue on the same data, with connections of its own."""


def _missing(name: str) -> NotImplementedError:
    return NotImplementedError(
        f"the contract kit needs the {name!r} fixture: override it in your fixtures class"
    )


class ContractFixtures:
    """Base class for an adapter's fixtures; override every fixture below.

    All of them work on one set of data and one :class:`FakeClock`: the kit
    advances the clock to expire leases and to make kinds due, and expects the
    stores to stamp every timestamp from it. Each test needs fresh, empty data::

        class MemoryFixtures(ContractFixtures):
            @pytest.fixture
            def clock(self) -> FakeClock:
                return FakeClock()
            ...

        class TestMemoryStore(WorkQueueContractSuite, MemoryFixtures):
            pass

    Async fixtures are fine in overrides. Because the fixtures class inherits
    this one, the overrides win whatever order the bases are listed in.

    ``token_store`` (and the back door's refresh-token methods) may be left out
    by an adapter that declares ``store_capabilities =
    StoreCapabilities(refresh_tokens=False)``. For stores like ours the kit has
    these fixtures ready: :class:`~workqueue.adapters.testing.contract.MemoryContractFixtures`
    and :class:`~workqueue.adapters.testing.postgres.PostgresContractFixtures`.
    """

    @pytest.fixture
    def clock(self) -> FakeClock:
        """The clock every store and the back door use."""
        raise _missing("clock")

    @pytest.fixture
    def queue(self) -> WorkQueue:
        """The WorkQueue under test."""
        raise _missing("queue")

    @pytest.fixture
    def store(self) -> WorkStore:
        """The WorkStore under test, on the same data as ``queue``."""
        raise _missing("store")

    @pytest.fixture
    def token_store(self) -> RefreshTokenStore:
        """The RefreshTokenStore under test, on the same data."""
        raise _missing("token_store")

    @pytest.fixture
    def store_factory(self) -> StoreFactory:
        """Makes extra WorkStores on the same data, each with its own connection(s).

        The fixture cleans up what its stores opened when the test ends.
        """
        raise _missing("store_factory")

    @pytest.fixture
    def queue_factory(self) -> QueueFactory:
        """Makes extra WorkQueues on the same data, each with its own connection(s).

        Like ``store_factory``: the fixture cleans up what its queues opened when
        the test ends.
        """
        raise _missing("queue_factory")

    @pytest.fixture
    def backdoor(self) -> Backdoor:
        """Sets up and reads the same data without the API under test."""
        raise _missing("backdoor")

    store_capabilities: ClassVar[StoreCapabilities] = StoreCapabilities()
    """What the adapter takes part in; by default everything (see StoreCapabilities).

    Set it on the fixtures class to declare, say,
    ``StoreCapabilities(refresh_tokens=False)``: the tests that need what is
    missing are then skipped, with the reason.
    """

    @pytest.fixture
    def capabilities(self) -> StoreCapabilities:
        """:attr:`store_capabilities`, for the tests; override it to decide per test."""
        return self.store_capabilities
