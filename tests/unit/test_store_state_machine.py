"""The contract kit's state machine, run against the in-memory store."""

from __future__ import annotations

from workqueue.adapters.testing.contract import open_memory_subject, store_state_machine

TestInMemoryStoreAgainstTheModel = store_state_machine(open_memory_subject).TestCase
