"""The pure model and ports of workqueue: no I/O, no database driver, no DI framework."""

from __future__ import annotations

from domain.cancel import (
    DEFAULT_CANCEL_REASON,
    CancelOutcome,
    HeartbeatAnswer,
    RequeueOutcome,
    RequeueResult,
    cancel_reason_text,
)
from domain.clock import Clock
from domain.dedup import MAX_DEDUP_KEY_LENGTH, check_dedup_key
from domain.errors import (
    EnqueueFailedError,
    InsideTransactionError,
    InvalidDedupKeyError,
    InvalidPayloadError,
    KindRegistryError,
    PayloadDefinitionError,
    StoreUnavailableError,
    UnknownKindError,
    WorkQueueError,
)
from domain.handler import WorkContext, WorkHandler
from domain.items import Lease, WorkItem
from domain.kinds import WorkKind, kind_name
from domain.maintenance import TokenCleanup, WorkItemRetention
from domain.monitor import LIVE_STATUSES, UNSUCCESSFUL_STATUSES, WorkMonitor
from domain.notifications import WorkNotifications
from domain.payload import WorkPayload
from domain.payload_check import checked_payload_json
from domain.progress import SNAPSHOT_JSON, ProgressSnapshot, progress_value
from domain.queue import EnqueueRequest, EnqueueResult, WorkQueue
from domain.schedule import PERIODIC_DEDUP_KEY, WorkSchedule
from domain.status import FINISHED_STATUSES, WorkStatus
from domain.storable import spelled_out, unstorable_character
from domain.store import LeaseProgress, RecoveryResult, WorkStore
from domain.tokens import RefreshTokenStore

__all__ = [
    "DEFAULT_CANCEL_REASON",
    "FINISHED_STATUSES",
    "LIVE_STATUSES",
    "MAX_DEDUP_KEY_LENGTH",
    "PERIODIC_DEDUP_KEY",
    "SNAPSHOT_JSON",
    "UNSUCCESSFUL_STATUSES",
    "CancelOutcome",
    "Clock",
    "EnqueueFailedError",
    "EnqueueRequest",
    "EnqueueResult",
    "HeartbeatAnswer",
    "InsideTransactionError",
    "InvalidDedupKeyError",
    "InvalidPayloadError",
    "KindRegistryError",
    "Lease",
    "LeaseProgress",
    "PayloadDefinitionError",
    "ProgressSnapshot",
    "RecoveryResult",
    "RefreshTokenStore",
    "RequeueOutcome",
    "RequeueResult",
    "StoreUnavailableError",
    "TokenCleanup",
    "UnknownKindError",
    "WorkContext",
    "WorkHandler",
    "WorkItem",
    "WorkItemRetention",
    "WorkKind",
    "WorkMonitor",
    "WorkNotifications",
    "WorkPayload",
    "WorkQueue",
    "WorkQueueError",
    "WorkSchedule",
    "WorkStatus",
    "WorkStore",
    "cancel_reason_text",
    "check_dedup_key",
    "checked_payload_json",
    "kind_name",
    "progress_value",
    "spelled_out",
    "unstorable_character",
]
