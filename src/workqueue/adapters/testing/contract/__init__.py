"""The contract kit: one suite every WorkQueue/WorkStore adapter must pass, ours or not.

Shipped inside the package so any adapter can import it (``pip install
"workqueue-pg[testing]"`` brings pytest, pytest-asyncio and Hypothesis). For a
store over an :class:`~workqueue.adapters.memory.InMemoryState` or over the documented
PostgreSQL tables, the fixtures are ready::

    class TestMyStore(WorkQueueContractSuite, MemoryContractFixtures):
        def make_store(self, state, clock):
            return MyStore(state, clock)

(``workqueue.adapters.testing.postgres.PostgresContractFixtures`` likewise, with the
fixtures of ``workqueue.adapters.testing.postgres.plugin``). Any other store subclasses
:class:`ContractFixtures`, overrides its fixtures and writes a back door
(:class:`Backdoor`) that sets up and reads rows without the API under test.
The tests are ``async def`` with no marker: run them with pytest-asyncio's
``asyncio_mode = "auto"``.

What the suite holds:

- every semantic of DESIGN.md as example tests, one mixin (``*Contract``) per
  part of the port; the names carry no ``Test`` prefix, so importing them into
  a test module collects nothing;
- a model check (:class:`ModelContract`): random sequences of every operation,
  compared with :class:`QueueModel` after each step; :func:`store_state_machine`
  runs the same machine on a fresh store per example, which also shrinks;
- races that fail a broken store on every run, quiet machine or busy:
  every racer waits at one barrier and then calls at once (:func:`race.at_once`),
  on a store or queue with connections of its own; each race is repeated over
  many rounds from a fresh start, and one bad round fails it (30 rounds of
  8 claimers, 100 rounds of 8 schedulers beside 6 claimers: a store without
  ``FOR UPDATE SKIP LOCKED`` or without the periodic kind's lock fails with
  odds of a pass below one in a million, measured in docs/adr/0013); and where
  the back door can hold a row lock (:class:`RowLockingBackdoor`) a claim must
  pass over a locked row at once, which is deterministic;
- a hang guard (:class:`HangGuard`): a test that hangs fails, naming itself;
- capabilities (:class:`StoreCapabilities`): an adapter without refresh tokens
  declares so, and that contract is skipped, each test with the reason.

A producer that enqueues inside the caller's transaction also runs
:class:`CallerTransactionContract` and :class:`DedupAcrossTransactionsContract`
with :class:`CallerTransactionFixtures`; a sync producer runs the enqueue contract
through :class:`SyncProducerAsWorkQueue`.

This package imports pytest and Hypothesis.
"""

from __future__ import annotations

# First: names every other module of the kit for pytest's assertion rewriting.
from workqueue.adapters.testing.contract import _assertions  # noqa: F401  # isort: skip
from workqueue.adapters.testing.contract.absorb import AbsorbContract
from workqueue.adapters.testing.contract.backdoor import Backdoor, RowLockingBackdoor
from workqueue.adapters.testing.contract.backdoor_check import BackdoorContract
from workqueue.adapters.testing.contract.caller_transaction import (
    CallerTransaction,
    CallerTransactionFactory,
    CallerTransactionFixtures,
    Isolation,
    LockWaits,
)
from workqueue.adapters.testing.contract.cancel import CancelContract
from workqueue.adapters.testing.contract.capabilities import (
    StoreCapabilities,
    skip_unless_refresh_tokens,
)
from workqueue.adapters.testing.contract.caps import CapContract
from workqueue.adapters.testing.contract.claim import ClaimContract
from workqueue.adapters.testing.contract.complete_and_claim import CompleteAndClaimContract
from workqueue.adapters.testing.contract.complete_and_claim_many import CompleteAndClaimManyContract
from workqueue.adapters.testing.contract.cron import CronContract
from workqueue.adapters.testing.contract.dedup_on_return import DedupOnReturnContract
from workqueue.adapters.testing.contract.enqueue import EnqueueContract
from workqueue.adapters.testing.contract.enqueue_if_due import EnqueueIfDueContract
from workqueue.adapters.testing.contract.fencing import FencingContract
from workqueue.adapters.testing.contract.finish import FinishContract
from workqueue.adapters.testing.contract.fixtures import (
    ContractFixtures,
    QueueFactory,
    StoreFactory,
)
from workqueue.adapters.testing.contract.hang import HANG_AFTER_SECONDS, HangGuard, fail_if_hung
from workqueue.adapters.testing.contract.heartbeat import HeartbeatContract
from workqueue.adapters.testing.contract.heartbeat_many import HeartbeatManyContract
from workqueue.adapters.testing.contract.kinds import AlphaJob, BetaJob, ContractKind, GammaJob
from workqueue.adapters.testing.contract.lease_duration import LeaseDurationContract
from workqueue.adapters.testing.contract.listing import ListingContract
from workqueue.adapters.testing.contract.memory import (
    MemoryBackdoor,
    MemoryContractFixtures,
    open_memory_subject,
)
from workqueue.adapters.testing.contract.model import QueueModel
from workqueue.adapters.testing.contract.model_check import MODEL_CHECK_SETTINGS, ModelContract
from workqueue.adapters.testing.contract.pauses import PauseContract
from workqueue.adapters.testing.contract.progress import ProgressSnapshotContract
from workqueue.adapters.testing.contract.purge import PurgeContract
from workqueue.adapters.testing.contract.recovery import RecoveryContract
from workqueue.adapters.testing.contract.release import ReleaseContract
from workqueue.adapters.testing.contract.requeue import RequeueContract
from workqueue.adapters.testing.contract.retries import RetryContract
from workqueue.adapters.testing.contract.state_machine import (
    DEFAULT_SETTINGS,
    StoreRules,
    StoreSubject,
    empty_through_the_api,
    seeded_state_machine,
    store_state_machine,
)
from workqueue.adapters.testing.contract.steps import LEASE, MAX_STALLS
from workqueue.adapters.testing.contract.suite import WorkQueueContractSuite
from workqueue.adapters.testing.contract.sync_producer import SyncProducer, SyncProducerAsWorkQueue
from workqueue.adapters.testing.contract.timing import TimingContract
from workqueue.adapters.testing.contract.tokens import RefreshTokenContract
from workqueue.adapters.testing.contract.transactions import (
    CallerTransactionContract,
    DedupAcrossTransactionsContract,
)
from workqueue.domain import stalled_error, superseded_error

__all__ = [
    "DEFAULT_SETTINGS",
    "HANG_AFTER_SECONDS",
    "LEASE",
    "MAX_STALLS",
    "MODEL_CHECK_SETTINGS",
    "AbsorbContract",
    "AlphaJob",
    "Backdoor",
    "BackdoorContract",
    "BetaJob",
    "CallerTransaction",
    "CallerTransactionContract",
    "CallerTransactionFactory",
    "CallerTransactionFixtures",
    "CancelContract",
    "CapContract",
    "ClaimContract",
    "CompleteAndClaimContract",
    "CompleteAndClaimManyContract",
    "ContractFixtures",
    "ContractKind",
    "CronContract",
    "DedupAcrossTransactionsContract",
    "DedupOnReturnContract",
    "EnqueueContract",
    "EnqueueIfDueContract",
    "FencingContract",
    "FinishContract",
    "GammaJob",
    "HangGuard",
    "HeartbeatContract",
    "HeartbeatManyContract",
    "Isolation",
    "LeaseDurationContract",
    "ListingContract",
    "LockWaits",
    "MemoryBackdoor",
    "MemoryContractFixtures",
    "ModelContract",
    "PauseContract",
    "ProgressSnapshotContract",
    "PurgeContract",
    "QueueFactory",
    "QueueModel",
    "RecoveryContract",
    "RefreshTokenContract",
    "ReleaseContract",
    "RequeueContract",
    "RetryContract",
    "RowLockingBackdoor",
    "StoreCapabilities",
    "StoreFactory",
    "StoreRules",
    "StoreSubject",
    "SyncProducer",
    "SyncProducerAsWorkQueue",
    "TimingContract",
    "WorkQueueContractSuite",
    "empty_through_the_api",
    "fail_if_hung",
    "open_memory_subject",
    "seeded_state_machine",
    "skip_unless_refresh_tokens",
    "stalled_error",
    "store_state_machine",
    "superseded_error",
]
