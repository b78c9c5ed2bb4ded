"""The pure model and ports of workqueue: no I/O, no database driver, no DI framework."""

from __future__ import annotations

from workqueue.domain.activity import (
    ACTIVITY_KEPT,
    ActivityLog,
    MinuteActivity,
    MinuteCounts,
    minute_of,
)
from workqueue.domain.bulk import (
    BULK_BATCH,
    BulkAction,
    BulkBatch,
    BulkResult,
    BulkScope,
    PayloadDecoder,
    decoded,
    requeued_batch,
)
from workqueue.domain.cancel import (
    DEFAULT_CANCEL_REASON,
    MAX_CANCEL_REASON_LENGTH,
    CancelOutcome,
    HeartbeatAnswer,
    RequeueOutcome,
    RequeueResult,
    cancel_reason_text,
    checked_cancel_reason,
)
from workqueue.domain.caps import MAX_CAP, CapSource, KindCap, cap_stays, checked_cap
from workqueue.domain.claim_order import claim_order, is_claimable, next_claimable, next_run_at
from workqueue.domain.clock import Clock
from workqueue.domain.cron import CRON_ALIASES, CronCalendar, time_zone
from workqueue.domain.dedup import MAX_DEDUP_KEY_LENGTH, check_dedup_key
from workqueue.domain.errors import (
    EnqueueFailedError,
    InsideTransactionError,
    InvalidCancelReasonError,
    InvalidCapError,
    InvalidDedupKeyError,
    InvalidPauseError,
    InvalidPayloadError,
    InvalidPolicyError,
    InvalidPriorityError,
    InvalidRunAtError,
    InvalidScheduleError,
    KindRegistryError,
    PayloadDefinitionError,
    StoreUnavailableError,
    UnknownKindError,
    WorkQueueError,
)
from workqueue.domain.handler import WorkContext, WorkHandler
from workqueue.domain.items import LARGEST_ITEM_ID, Failure, Lease, WorkItem
from workqueue.domain.kinds import WorkKind, kind_name
from workqueue.domain.maintenance import TokenCleanup, WorkItemRetention
from workqueue.domain.monitor import (
    LIVE_STATUSES,
    UNSUCCESSFUL_STATUSES,
    ScheduleTurn,
    WorkMonitor,
)
from workqueue.domain.notifications import WorkNotifications
from workqueue.domain.pauses import MAX_PAUSE_REASON_LENGTH, KindPause, checked_pause
from workqueue.domain.payload import DEFAULT_MAX_PAYLOAD_BYTES, WorkPayload
from workqueue.domain.payload_check import checked_payload_json
from workqueue.domain.policy import DEFAULT_POLICY, Backoff, KindPolicy
from workqueue.domain.progress import SNAPSHOT_JSON, ProgressSnapshot, progress_value
from workqueue.domain.queue import EnqueueRequest, EnqueueResult, WorkQueue
from workqueue.domain.run_outcome import (
    RETURNING_ENDINGS,
    RunEnding,
    RunOutcome,
    snoozed_out_error,
    stalled_error,
    superseded_error,
)
from workqueue.domain.schedule import PERIODIC_DEDUP_KEY, Overlap, WorkSchedule
from workqueue.domain.snooze import Snooze
from workqueue.domain.status import FINISHED_STATUSES, WorkStatus
from workqueue.domain.storable import spelled_out, unstorable_character
from workqueue.domain.store import LeaseProgress, RecoveryResult, WorkStore
from workqueue.domain.timing import (
    DEFAULT_PRIORITY,
    MAX_PRIORITY,
    MIN_PRIORITY,
    When,
    check_aware,
    check_delay,
    check_priority,
    check_when,
    run_at_of,
)
from workqueue.domain.tokens import RefreshTokenStore
from workqueue.domain.tracing import (
    NO_SPAN,
    NO_TRACING,
    EnqueueSpan,
    NoTracing,
    RunSpan,
    TraceContext,
    Tracing,
)

__all__ = [
    "ACTIVITY_KEPT",
    "BULK_BATCH",
    "CRON_ALIASES",
    "DEFAULT_CANCEL_REASON",
    "DEFAULT_MAX_PAYLOAD_BYTES",
    "DEFAULT_POLICY",
    "DEFAULT_PRIORITY",
    "FINISHED_STATUSES",
    "LARGEST_ITEM_ID",
    "LIVE_STATUSES",
    "MAX_CANCEL_REASON_LENGTH",
    "MAX_CAP",
    "MAX_DEDUP_KEY_LENGTH",
    "MAX_PAUSE_REASON_LENGTH",
    "MAX_PRIORITY",
    "MIN_PRIORITY",
    "NO_SPAN",
    "NO_TRACING",
    "PERIODIC_DEDUP_KEY",
    "RETURNING_ENDINGS",
    "SNAPSHOT_JSON",
    "UNSUCCESSFUL_STATUSES",
    "ActivityLog",
    "Backoff",
    "BulkAction",
    "BulkBatch",
    "BulkResult",
    "BulkScope",
    "CancelOutcome",
    "CapSource",
    "Clock",
    "CronCalendar",
    "EnqueueFailedError",
    "EnqueueRequest",
    "EnqueueResult",
    "EnqueueSpan",
    "Failure",
    "HeartbeatAnswer",
    "InsideTransactionError",
    "InvalidCancelReasonError",
    "InvalidCapError",
    "InvalidDedupKeyError",
    "InvalidPauseError",
    "InvalidPayloadError",
    "InvalidPolicyError",
    "InvalidPriorityError",
    "InvalidRunAtError",
    "InvalidScheduleError",
    "KindCap",
    "KindPause",
    "KindPolicy",
    "KindRegistryError",
    "Lease",
    "LeaseProgress",
    "MinuteActivity",
    "MinuteCounts",
    "NoTracing",
    "Overlap",
    "PayloadDecoder",
    "PayloadDefinitionError",
    "ProgressSnapshot",
    "RecoveryResult",
    "RefreshTokenStore",
    "RequeueOutcome",
    "RequeueResult",
    "RunEnding",
    "RunOutcome",
    "RunSpan",
    "ScheduleTurn",
    "Snooze",
    "StoreUnavailableError",
    "TokenCleanup",
    "TraceContext",
    "Tracing",
    "UnknownKindError",
    "When",
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
    "cap_stays",
    "check_aware",
    "check_dedup_key",
    "check_delay",
    "check_priority",
    "check_when",
    "checked_cancel_reason",
    "checked_cap",
    "checked_pause",
    "checked_payload_json",
    "claim_order",
    "decoded",
    "is_claimable",
    "kind_name",
    "minute_of",
    "next_claimable",
    "next_run_at",
    "progress_value",
    "requeued_batch",
    "run_at_of",
    "snoozed_out_error",
    "spelled_out",
    "stalled_error",
    "superseded_error",
    "time_zone",
    "unstorable_character",
]
