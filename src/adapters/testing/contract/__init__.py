"""The contract kit: one suite every WorkQueue/WorkStore adapter must pass, ours or not.

Shipped inside the package so any adapter can import it. To run it, write a
fixtures class (subclass :class:`ContractFixtures`, override every fixture) and
a back door (:class:`Backdoor`), then::

    class TestMyStore(WorkQueueContractSuite, MyFixtures):
        pass

    TestMyStoreStateMachine = store_state_machine(open_my_store, close_my_store).TestCase

A producer that enqueues inside the caller's transaction also runs
:class:`CallerTransactionContract` and :class:`DedupAcrossTransactionsContract`
with :class:`CallerTransactionFixtures`; a sync producer runs the enqueue contract
through :class:`SyncProducerAsWorkQueue`.

Each contract mixin (``*Contract``) can also be used on its own. The names carry
no ``Test`` prefix, so importing them into a test module collects nothing.
This package imports pytest and Hypothesis.
"""

from __future__ import annotations

from adapters.testing.contract.backdoor import Backdoor
from adapters.testing.contract.backdoor_check import BackdoorContract
from adapters.testing.contract.caller_transaction import (
    CallerTransaction,
    CallerTransactionFactory,
    CallerTransactionFixtures,
    Isolation,
    LockWaits,
)
from adapters.testing.contract.claim import ClaimContract
from adapters.testing.contract.complete_and_claim import CompleteAndClaimContract
from adapters.testing.contract.dedup_on_return import DedupOnReturnContract
from adapters.testing.contract.due import DueContract
from adapters.testing.contract.enqueue import EnqueueContract
from adapters.testing.contract.enqueue_if_due import EnqueueIfDueContract
from adapters.testing.contract.fencing import FencingContract
from adapters.testing.contract.finish import FinishContract
from adapters.testing.contract.fixtures import ContractFixtures, QueueFactory, StoreFactory
from adapters.testing.contract.heartbeat import HeartbeatContract
from adapters.testing.contract.kinds import AlphaJob, BetaJob, ContractKind, GammaJob
from adapters.testing.contract.listing import ListingContract
from adapters.testing.contract.model import QueueModel, stalled_error, superseded_error
from adapters.testing.contract.progress import ProgressSnapshotContract
from adapters.testing.contract.purge import PurgeContract
from adapters.testing.contract.recovery import RecoveryContract
from adapters.testing.contract.release import ReleaseContract
from adapters.testing.contract.state_machine import (
    DEFAULT_SETTINGS,
    StoreSubject,
    store_state_machine,
)
from adapters.testing.contract.steps import LEASE, MAX_STALLS
from adapters.testing.contract.suite import WorkQueueContractSuite
from adapters.testing.contract.sync_producer import SyncProducer, SyncProducerAsWorkQueue
from adapters.testing.contract.tokens import RefreshTokenContract
from adapters.testing.contract.transactions import (
    CallerTransactionContract,
    DedupAcrossTransactionsContract,
)

__all__ = [
    "DEFAULT_SETTINGS",
    "LEASE",
    "MAX_STALLS",
    "AlphaJob",
    "Backdoor",
    "BackdoorContract",
    "BetaJob",
    "CallerTransaction",
    "CallerTransactionContract",
    "CallerTransactionFactory",
    "CallerTransactionFixtures",
    "ClaimContract",
    "CompleteAndClaimContract",
    "ContractFixtures",
    "ContractKind",
    "DedupAcrossTransactionsContract",
    "DedupOnReturnContract",
    "DueContract",
    "EnqueueContract",
    "EnqueueIfDueContract",
    "FencingContract",
    "FinishContract",
    "GammaJob",
    "HeartbeatContract",
    "Isolation",
    "ListingContract",
    "LockWaits",
    "ProgressSnapshotContract",
    "PurgeContract",
    "QueueFactory",
    "QueueModel",
    "RecoveryContract",
    "RefreshTokenContract",
    "ReleaseContract",
    "StoreFactory",
    "StoreSubject",
    "SyncProducer",
    "SyncProducerAsWorkQueue",
    "WorkQueueContractSuite",
    "stalled_error",
    "store_state_machine",
    "superseded_error",
]
