"""WorkQueueContractSuite: every contract mixin in one base class."""

from __future__ import annotations

from workqueue.adapters.testing.contract.absorb import AbsorbContract
from workqueue.adapters.testing.contract.backdoor_check import BackdoorContract
from workqueue.adapters.testing.contract.bulk import BulkContract
from workqueue.adapters.testing.contract.cancel import CancelContract
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
from workqueue.adapters.testing.contract.hang import HangGuard
from workqueue.adapters.testing.contract.heartbeat import HeartbeatContract
from workqueue.adapters.testing.contract.heartbeat_many import HeartbeatManyContract
from workqueue.adapters.testing.contract.lease_duration import LeaseDurationContract
from workqueue.adapters.testing.contract.listing import ListingContract
from workqueue.adapters.testing.contract.model_check import ModelContract
from workqueue.adapters.testing.contract.pauses import PauseContract
from workqueue.adapters.testing.contract.progress import ProgressSnapshotContract
from workqueue.adapters.testing.contract.purge import PurgeContract
from workqueue.adapters.testing.contract.recovery import RecoveryContract
from workqueue.adapters.testing.contract.release import ReleaseContract
from workqueue.adapters.testing.contract.requeue import RequeueContract
from workqueue.adapters.testing.contract.retries import RetryContract
from workqueue.adapters.testing.contract.timing import TimingContract
from workqueue.adapters.testing.contract.tokens import RefreshTokenContract

__all__ = ["WorkQueueContractSuite"]


class WorkQueueContractSuite(
    BackdoorContract,
    EnqueueContract,
    ClaimContract,
    TimingContract,
    RetryContract,
    HeartbeatContract,
    HeartbeatManyContract,
    FinishContract,
    CompleteAndClaimContract,
    CompleteAndClaimManyContract,
    FencingContract,
    ProgressSnapshotContract,
    ReleaseContract,
    RecoveryContract,
    DedupOnReturnContract,
    EnqueueIfDueContract,
    CronContract,
    PurgeContract,
    RefreshTokenContract,
    ListingContract,
    CancelContract,
    PauseContract,
    CapContract,
    RequeueContract,
    BulkContract,
    AbsorbContract,
    LeaseDurationContract,
    ModelContract,
    HangGuard,
):
    """The whole kit: subclass it together with your fixtures to run every contract test.

    ::

        class TestPostgresStore(WorkQueueContractSuite, PostgresFixtures):
            pass

    The tests are ``async def`` and carry no asyncio marker, so the event loop
    they run on is the consumer's choice: ``asyncio_mode = "auto"``, or a
    ``pytestmark = pytest.mark.asyncio(loop_scope=...)`` on the subclass.
    """
