"""The contract kit's state machine, run against the in-memory store."""

from __future__ import annotations

from adapters.memory import InMemoryState, InMemoryWorkQueue, InMemoryWorkStore
from adapters.testing import FakeClock
from adapters.testing.contract import StoreSubject, store_state_machine
from domain import WorkItem


async def open_memory_store() -> StoreSubject:
    state, clock = InMemoryState(), FakeClock()

    async def read_items() -> list[WorkItem]:
        return state.snapshot()

    return StoreSubject(
        clock=clock,
        queue=InMemoryWorkQueue(state, clock),
        store=InMemoryWorkStore(state, clock),
        read_items=read_items,
    )


TestInMemoryStoreAgainstTheModel = store_state_machine(open_memory_store).TestCase
