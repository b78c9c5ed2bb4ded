"""A worker's counters: each claim, outcome, lost lease, heartbeat and recovery it made."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from workqueue.adapters.memory import InMemoryState, InMemoryWorkQueue, InMemoryWorkStore
from workqueue.adapters.prometheus import CountingWorkStore, WorkerMetrics
from workqueue.adapters.prometheus.worker_metrics import (
    HEARTBEAT_BUCKETS,
    HEARTBEAT_HELP,
    PER_KIND_COUNTERS,
    RECOVERED_HELP,
)
from workqueue.adapters.testing import FakeClock
from workqueue.adapters.testing.contract import AlphaJob, BetaJob
from workqueue.domain import (
    BulkBatch,
    CancelOutcome,
    CapSource,
    EnqueueRequest,
    HeartbeatAnswer,
    KindCap,
    KindPause,
    Lease,
    RecoveryResult,
    RunOutcome,
    StoreUnavailableError,
    WorkItem,
    WorkPayload,
    WorkStatus,
    WorkStore,
)

LEASE = timedelta(seconds=60)
KINDS = ["contract_alpha", "contract_beta"]
ALPHA = {"kind": "contract_alpha"}
BETA = {"kind": "contract_beta"}


class Timer:
    """Seconds that move by a quarter at each reading."""

    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        self.now += 0.25
        return self.now


@pytest.fixture
def state() -> InMemoryState:
    return InMemoryState()


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def queue(state: InMemoryState, clock: FakeClock) -> InMemoryWorkQueue:
    return InMemoryWorkQueue(state, clock)


@pytest.fixture
def metrics() -> WorkerMetrics:
    return WorkerMetrics()


@pytest.fixture
def store(state: InMemoryState, clock: FakeClock, metrics: WorkerMetrics) -> CountingWorkStore:
    return CountingWorkStore(InMemoryWorkStore(state, clock), metrics, timer=Timer())


def count(metrics: WorkerMetrics, name: str, labels: dict[str, str] | None = None) -> float:
    value = metrics.registry.get_sample_value(f"workqueue_worker_{name}", labels or {})
    return 0.0 if value is None else value


async def claimed(store: CountingWorkStore) -> WorkItem:
    item = await store.claim(KINDS, worker_id="w", lease_duration=LEASE)
    assert item is not None
    return item


def lost(item: WorkItem) -> Lease:
    """A lease the store never handed out: the attempt after the item's."""
    return Lease(item.id, item.attempt + 1)


HeartbeatCall = Callable[[CountingWorkStore, Lease], Awaitable[object]]


async def one_heartbeat(store: CountingWorkStore, lease: Lease) -> object:
    return await store.heartbeat(lease, progress=None, lease_duration=LEASE)


async def heartbeat_of_many(store: CountingWorkStore, lease: Lease) -> object:
    return await store.heartbeat_many([(lease, None)], lease_duration=LEASE)


class TestClaims:
    async def test_each_claim_counts_once_for_its_item_s_kind(
        self, queue: InMemoryWorkQueue, store: CountingWorkStore, metrics: WorkerMetrics
    ) -> None:
        await queue.enqueue_many([EnqueueRequest(AlphaJob()), EnqueueRequest(BetaJob())])
        await queue.enqueue(AlphaJob())
        for _ in range(3):
            await claimed(store)

        assert count(metrics, "claimed_total", ALPHA) == 2
        assert count(metrics, "claimed_total", BETA) == 1

    async def test_a_claim_that_finds_nothing_counts_nothing(
        self, store: CountingWorkStore, metrics: WorkerMetrics
    ) -> None:
        assert await store.claim(KINDS, worker_id="w", lease_duration=LEASE) is None
        assert count(metrics, "claimed_total", ALPHA) == 0

    async def test_a_claim_that_cannot_reach_the_store_counts_nothing(
        self,
        state: InMemoryState,
        queue: InMemoryWorkQueue,
        store: CountingWorkStore,
        metrics: WorkerMetrics,
    ) -> None:
        await queue.enqueue(AlphaJob())
        state.unavailable = True
        with pytest.raises(StoreUnavailableError):
            await store.claim(KINDS, worker_id="w", lease_duration=LEASE)
        assert count(metrics, "claimed_total", ALPHA) == 0


class TestOutcomes:
    async def test_each_outcome_counts_as_what_it_wrote_for_its_kind(
        self, queue: InMemoryWorkQueue, store: CountingWorkStore, metrics: WorkerMetrics
    ) -> None:
        await queue.enqueue_many([EnqueueRequest(AlphaJob()) for _ in range(2)])
        await queue.enqueue(BetaJob())
        first, second, third = [await claimed(store) for _ in range(3)]

        assert await store.finish(first.lease, RunOutcome.succeeded(None))
        assert await store.finish(second.lease, RunOutcome.failed("boom", None))
        assert await store.finish(third.lease, RunOutcome.released(None))

        assert count(metrics, "succeeded_total", ALPHA) == 1
        assert count(metrics, "failed_total", ALPHA) == 1
        assert count(metrics, "released_total", BETA) == 1
        assert count(metrics, "leases_lost_total", ALPHA) == 0

    async def test_a_retry_and_a_snooze_count_apart_from_failures(
        self, queue: InMemoryWorkQueue, store: CountingWorkStore, metrics: WorkerMetrics
    ) -> None:
        await queue.enqueue(AlphaJob())
        await queue.enqueue(BetaJob())
        first, second = [await claimed(store) for _ in range(2)]
        now = first.started_at
        assert now is not None

        assert await store.finish(first.lease, RunOutcome.retried("boom", now))
        assert await store.finish(second.lease, RunOutcome.snoozed(now))

        assert count(metrics, "retried_total", ALPHA) == 1
        assert count(metrics, "snoozed_total", BETA) == 1
        assert count(metrics, "failed_total", ALPHA) == 0

    async def test_a_cancel_requested_while_running_counts_once_its_holder_marks_it_cancelled(
        self, queue: InMemoryWorkQueue, store: CountingWorkStore, metrics: WorkerMetrics
    ) -> None:
        await queue.enqueue(AlphaJob())
        item = await claimed(store)

        assert await store.cancel(item.id, reason="not needed") is CancelOutcome.REQUESTED
        answer = await store.heartbeat(item.lease, progress=None, lease_duration=LEASE)
        assert answer is HeartbeatAnswer.CANCEL_REQUESTED
        assert count(metrics, "cancelled_total", ALPHA) == 0
        assert await store.finish(item.lease, RunOutcome.cancelled(None))

        assert count(metrics, "cancelled_total", ALPHA) == 1
        assert count(metrics, "leases_lost_total", ALPHA) == 0
        assert not await store.finish(item.lease, RunOutcome.cancelled(None))
        assert count(metrics, "leases_lost_total", {"kind": "unknown"}) == 1

    async def test_a_write_whose_lease_is_not_held_counts_as_a_lost_lease_only(
        self, queue: InMemoryWorkQueue, store: CountingWorkStore, metrics: WorkerMetrics
    ) -> None:
        await queue.enqueue(AlphaJob())
        item = await claimed(store)
        assert await store.finish(item.lease, RunOutcome.succeeded(None))

        # The same lease again: nothing matches, and its kind is no longer known.
        assert not await store.finish(item.lease, RunOutcome.succeeded(None))
        assert not await store.finish(lost(item), RunOutcome.failed("late", None))
        assert not await store.finish(lost(item), RunOutcome.released(None))

        assert count(metrics, "succeeded_total", ALPHA) == 1
        assert count(metrics, "failed_total", {"kind": "unknown"}) == 0
        assert count(metrics, "leases_lost_total", {"kind": "unknown"}) == 3

    async def test_complete_and_claim_counts_the_completion_and_the_next_claim(
        self, queue: InMemoryWorkQueue, store: CountingWorkStore, metrics: WorkerMetrics
    ) -> None:
        await queue.enqueue(AlphaJob())
        await queue.enqueue(BetaJob())
        first = await claimed(store)

        completed, following = await store.complete_and_claim(
            first.lease, progress=None, kinds=KINDS, worker_id="w", lease_duration=LEASE
        )

        assert completed
        assert following is not None
        assert following.kind == "contract_beta"
        assert count(metrics, "succeeded_total", ALPHA) == 1
        assert count(metrics, "claimed_total", BETA) == 1
        assert await store.finish(following.lease, RunOutcome.failed("x", None))
        assert count(metrics, "failed_total", BETA) == 1

    async def test_complete_and_claim_on_a_lost_lease_counts_it_lost_and_still_claims(
        self, queue: InMemoryWorkQueue, store: CountingWorkStore, metrics: WorkerMetrics
    ) -> None:
        await queue.enqueue(AlphaJob())
        await queue.enqueue(AlphaJob())
        first = await claimed(store)

        completed, following = await store.complete_and_claim(
            lost(first), progress=None, kinds=KINDS, worker_id="w", lease_duration=LEASE
        )

        assert not completed
        assert following is not None
        assert count(metrics, "succeeded_total", {"kind": "unknown"}) == 0
        assert count(metrics, "leases_lost_total", {"kind": "unknown"}) == 1
        assert count(metrics, "claimed_total", ALPHA) == 2


class TestHeartbeats:
    async def test_every_heartbeat_is_timed_and_a_held_one_loses_nothing(
        self, queue: InMemoryWorkQueue, store: CountingWorkStore, metrics: WorkerMetrics
    ) -> None:
        await queue.enqueue(AlphaJob())
        item = await claimed(store)

        assert await store.heartbeat(item.lease, progress={"done": 1}, lease_duration=LEASE)
        assert await store.heartbeat(item.lease, progress={"done": 2}, lease_duration=LEASE)

        assert count(metrics, "heartbeat_seconds_count") == 2
        assert count(metrics, "heartbeat_seconds_sum") == 0.5
        assert count(metrics, "heartbeat_seconds_bucket", {"le": "0.25"}) == 2
        assert count(metrics, "heartbeat_seconds_bucket", {"le": "0.1"}) == 0
        assert count(metrics, "leases_lost_total", ALPHA) == 0

    async def test_a_heartbeat_that_finds_its_lease_lost_counts_it_for_the_item_s_kind(
        self,
        queue: InMemoryWorkQueue,
        store: CountingWorkStore,
        metrics: WorkerMetrics,
        clock: FakeClock,
    ) -> None:
        await queue.enqueue(AlphaJob())
        item = await claimed(store)
        await clock.advance(61)
        await store.recover_expired(max_stalls=3)

        assert not await store.heartbeat(item.lease, progress=None, lease_duration=LEASE)

        assert count(metrics, "leases_lost_total", ALPHA) == 1
        # Nothing more is written for that lease, so its kind is forgotten.
        assert not await store.finish(item.lease, RunOutcome.succeeded(None))
        assert count(metrics, "leases_lost_total", {"kind": "unknown"}) == 1

    @pytest.mark.parametrize("call", [one_heartbeat, heartbeat_of_many], ids=["one", "many"])
    async def test_a_heartbeat_that_cannot_reach_the_store_is_timed_but_loses_nothing(
        self,
        state: InMemoryState,
        queue: InMemoryWorkQueue,
        store: CountingWorkStore,
        metrics: WorkerMetrics,
        call: HeartbeatCall,
    ) -> None:
        await queue.enqueue(AlphaJob())
        item = await claimed(store)
        state.unavailable = True

        with pytest.raises(StoreUnavailableError):
            await call(store, item.lease)

        assert count(metrics, "heartbeat_seconds_count") == 1
        assert count(metrics, "leases_lost_total", ALPHA) == 0


class TestHeartbeatsOfSeveralLeases:
    async def test_one_call_is_timed_once_and_each_lost_lease_counts_for_its_kind(
        self,
        queue: InMemoryWorkQueue,
        store: CountingWorkStore,
        metrics: WorkerMetrics,
        clock: FakeClock,
    ) -> None:
        await queue.enqueue_many([EnqueueRequest(AlphaJob()), EnqueueRequest(BetaJob())])
        alpha, beta = [await claimed(store) for _ in range(2)]
        await store.finish(beta.lease, RunOutcome.succeeded(None))
        await queue.enqueue(AlphaJob(number=2))
        held = await claimed(store)

        answers = await store.heartbeat_many(
            [(alpha.lease, None), (lost(beta), None), (held.lease, None)], lease_duration=LEASE
        )

        assert answers == [HeartbeatAnswer.HELD, HeartbeatAnswer.LOST, HeartbeatAnswer.HELD]
        assert count(metrics, "heartbeat_seconds_count") == 1
        assert count(metrics, "heartbeat_seconds_sum") == 0.25
        assert count(metrics, "leases_lost_total", {"kind": "unknown"}) == 1
        await store.recover_expired(max_stalls=3)
        await clock.advance(61)
        await store.recover_expired(max_stalls=3)
        assert await store.heartbeat_many([(alpha.lease, None)], lease_duration=LEASE) == [
            HeartbeatAnswer.LOST
        ]
        assert count(metrics, "leases_lost_total", ALPHA) == 1

    async def test_stores_that_share_what_they_claimed_count_each_other_s_lost_leases_by_kind(
        self,
        state: InMemoryState,
        clock: FakeClock,
        queue: InMemoryWorkQueue,
        metrics: WorkerMetrics,
    ) -> None:
        claimed_kinds: dict[Lease, str] = {}
        lanes = [
            CountingWorkStore(InMemoryWorkStore(state, clock), metrics, claimed_kinds=claimed_kinds)
            for _ in range(2)
        ]
        await queue.enqueue(BetaJob())
        item = await claimed(lanes[1])
        await clock.advance(61)
        await lanes[0].recover_expired(max_stalls=3)

        assert await lanes[0].heartbeat_many([(item.lease, None)], lease_duration=LEASE) == [
            HeartbeatAnswer.LOST
        ]

        assert count(metrics, "leases_lost_total", BETA) == 1
        assert claimed_kinds == {}


class TestCompletionsOfSeveralLeases:
    async def test_each_completion_counts_as_what_it_wrote_and_each_next_item_as_claimed(
        self, queue: InMemoryWorkQueue, store: CountingWorkStore, metrics: WorkerMetrics
    ) -> None:
        await queue.enqueue_many([EnqueueRequest(AlphaJob()), EnqueueRequest(BetaJob())])
        alpha, beta = [await claimed(store) for _ in range(2)]
        await queue.enqueue(BetaJob(), dedup_key="second")

        answers = await store.complete_and_claim_many(
            [(alpha.lease, None), (lost(beta), None)],
            kinds=KINDS,
            worker_id="w",
            lease_duration=LEASE,
        )

        assert [completed for completed, _ in answers] == [True, False]
        following = answers[0][1]
        assert following is not None
        assert answers[1][1] is None
        assert count(metrics, "succeeded_total", ALPHA) == 1
        assert count(metrics, "leases_lost_total", {"kind": "unknown"}) == 1
        assert count(metrics, "claimed_total", BETA) == 2
        assert await store.finish(following.lease, RunOutcome.succeeded(None))
        assert count(metrics, "succeeded_total", BETA) == 1


class TestRecovery:
    async def test_each_recovered_item_counts_for_what_became_of_it(
        self,
        queue: InMemoryWorkQueue,
        store: CountingWorkStore,
        metrics: WorkerMetrics,
        clock: FakeClock,
    ) -> None:
        # An item whose queued twin takes its place (superseded), two requeued...
        await queue.enqueue(AlphaJob(), dedup_key="twin")
        await claimed(store)
        await queue.enqueue(AlphaJob(), dedup_key="twin")
        await queue.enqueue_many([EnqueueRequest(BetaJob()) for _ in range(2)])
        await store.claim(["contract_beta"], worker_id="w", lease_duration=LEASE)
        await store.claim(["contract_beta"], worker_id="w", lease_duration=LEASE)
        await clock.advance(61)
        first = await store.recover_expired(max_stalls=3)
        # ... and those two at their last stall the next time (stalled).
        await store.claim(["contract_beta"], worker_id="w", lease_duration=LEASE)
        await store.claim(["contract_beta"], worker_id="w", lease_duration=LEASE)
        await clock.advance(61)
        second = await store.recover_expired(max_stalls=2)

        assert (len(first.superseded), len(first.requeued), len(second.stalled)) == (1, 2, 2)
        assert count(metrics, "recovered_total", {"outcome": "superseded"}) == 1
        assert count(metrics, "recovered_total", {"outcome": "requeued"}) == 2
        assert count(metrics, "recovered_total", {"outcome": "stalled"}) == 2

    async def test_a_recovered_item_whose_cancel_was_requested_counts_as_cancelled(
        self,
        queue: InMemoryWorkQueue,
        store: CountingWorkStore,
        metrics: WorkerMetrics,
        clock: FakeClock,
    ) -> None:
        await queue.enqueue(AlphaJob())
        item = await claimed(store)
        await store.cancel(item.id, reason="stop")
        await clock.advance(61)

        result = await store.recover_expired(max_stalls=3)

        assert result.cancelled == [item.id]
        assert count(metrics, "recovered_total", {"outcome": "cancelled"}) == 1

    async def test_a_pass_that_recovers_nothing_counts_nothing(
        self, store: CountingWorkStore, metrics: WorkerMetrics
    ) -> None:
        await store.recover_expired(max_stalls=3)
        for outcome in ("requeued", "stalled", "superseded", "cancelled"):
            assert (
                metrics.registry.get_sample_value(
                    "workqueue_worker_recovered_total", {"outcome": outcome}
                )
                is None
            )


def test_the_counters_read_as_prometheus_text(metrics: WorkerMetrics) -> None:
    metrics.claimed.labels("contract_alpha").inc()
    text = metrics.text().decode()
    assert 'workqueue_worker_claimed_total{kind="contract_alpha"} 1.0' in text
    assert "# TYPE workqueue_worker_heartbeat_seconds histogram" in text


def test_each_counter_says_what_it_counts_and_heartbeats_fall_in_the_documented_buckets(
    metrics: WorkerMetrics,
) -> None:
    text = metrics.text().decode()
    for name, documentation in PER_KIND_COUNTERS.items():
        assert f"# HELP workqueue_worker_{name}_total {documentation}" in text
    assert f"# HELP workqueue_worker_recovered_total {RECOVERED_HELP}" in text
    assert f"# HELP workqueue_worker_heartbeat_seconds {HEARTBEAT_HELP}" in text
    metrics.heartbeat_seconds.observe(0.002)
    buckets = [
        float(bound)
        for bound in HEARTBEAT_BUCKETS
        if metrics.registry.get_sample_value(
            "workqueue_worker_heartbeat_seconds_bucket", {"le": str(bound)}
        )
        is not None
    ]
    assert buckets == list(HEARTBEAT_BUCKETS)
    assert (
        metrics.registry.get_sample_value(
            "workqueue_worker_heartbeat_seconds_bucket", {"le": "0.001"}
        )
        == 0
    )
    assert (
        metrics.registry.get_sample_value(
            "workqueue_worker_heartbeat_seconds_bucket", {"le": "0.0025"}
        )
        == 1
    )


def _decode(kind: str, payload: Mapping[str, Any]) -> WorkPayload:
    raise AssertionError("a counting store passes decode on, and calls it never")


class Recording(WorkStore):
    """A store that answers every call with a token and remembers its arguments."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, tuple[object, ...], dict[str, object]]] = []

    def _answer(self, name: str, *args: object, **kwargs: object) -> Any:
        self.calls.append((name, args, kwargs))
        return ANSWERS[name]

    async def claim(self, *args: Any, **kwargs: Any) -> Any:
        return self._answer("claim", *args, **kwargs)

    async def next_run_at(self, *args: Any, **kwargs: Any) -> Any:
        return self._answer("next_run_at", *args, **kwargs)

    async def heartbeat(self, *args: Any, **kwargs: Any) -> Any:
        return self._answer("heartbeat", *args, **kwargs)

    async def heartbeat_many(self, *args: Any, **kwargs: Any) -> Any:
        return self._answer("heartbeat_many", *args, **kwargs)

    async def complete_and_claim_many(self, *args: Any, **kwargs: Any) -> Any:
        return self._answer("complete_and_claim_many", *args, **kwargs)

    async def finish(self, *args: Any, **kwargs: Any) -> Any:
        return self._answer("finish", *args, **kwargs)

    async def complete_and_claim(self, *args: Any, **kwargs: Any) -> Any:
        return self._answer("complete_and_claim", *args, **kwargs)

    async def cancel(self, *args: Any, **kwargs: Any) -> Any:
        return self._answer("cancel", *args, **kwargs)

    async def requeue_failed(self, *args: Any, **kwargs: Any) -> Any:
        return self._answer("requeue_failed", *args, **kwargs)

    async def cancel_queued(self, *args: Any, **kwargs: Any) -> Any:
        return self._answer("cancel_queued", *args, **kwargs)

    async def pause_kind(self, *args: Any, **kwargs: Any) -> Any:
        return self._answer("pause_kind", *args, **kwargs)

    async def resume_kind(self, *args: Any, **kwargs: Any) -> Any:
        return self._answer("resume_kind", *args, **kwargs)

    async def cap_kind(self, *args: Any, **kwargs: Any) -> Any:
        return self._answer("cap_kind", *args, **kwargs)

    async def caps(self, *args: Any, **kwargs: Any) -> Any:
        return self._answer("caps", *args, **kwargs)

    async def recover_expired(self, *args: Any, **kwargs: Any) -> Any:
        return self._answer("recover_expired", *args, **kwargs)

    async def purge_finished(self, *args: Any, **kwargs: Any) -> Any:
        return self._answer("purge_finished", *args, **kwargs)

    async def get(self, *args: Any, **kwargs: Any) -> Any:
        return self._answer("get", *args, **kwargs)

    async def list_items(self, *args: Any, **kwargs: Any) -> Any:
        return self._answer("list_items", *args, **kwargs)

    async def count_by_kind_and_status(self, *args: Any, **kwargs: Any) -> Any:
        return self._answer("count_by_kind_and_status", *args, **kwargs)


ANSWERS: dict[str, object] = {
    "claim": None,
    "next_run_at": datetime(2026, 1, 2, tzinfo=UTC),
    "heartbeat": True,
    "heartbeat_many": [HeartbeatAnswer.HELD],
    "finish": True,
    "complete_and_claim": (True, None),
    "complete_and_claim_many": [(True, None)],
    "cancel": CancelOutcome.REQUESTED,
    "requeue_failed": BulkBatch(taken=3, done=1, last_id=9, absorbed=1, invalid=(8,)),
    "cancel_queued": BulkBatch(taken=2, done=2, last_id=12),
    "pause_kind": KindPause("k", datetime(2026, 1, 3, tzinfo=UTC), "partner down"),
    "resume_kind": True,
    "cap_kind": KindCap("k", 3, CapSource.OPERATOR, datetime(2026, 1, 4, tzinfo=UTC), 1),
    "caps": [KindCap("k", 3, CapSource.POLICY, datetime(2026, 1, 5, tzinfo=UTC), 2)],
    "recover_expired": RecoveryResult(),
    "purge_finished": 7,
    "get": None,
    "list_items": [],
    "count_by_kind_and_status": {},
}


async def test_every_call_is_passed_on_as_made_and_answered_as_the_store_answered() -> None:
    inner = Recording()
    store = CountingWorkStore(inner, WorkerMetrics())
    lease = Lease(1, 1)
    cutoff = datetime(2026, 1, 1, tzinfo=UTC)
    made = [
        ("claim", store.claim(["k"], worker_id="w", lease_duration=LEASE)),
        ("next_run_at", store.next_run_at(["k"])),
        ("heartbeat", store.heartbeat(lease, progress={"p": 1}, lease_duration=LEASE)),
        ("heartbeat_many", store.heartbeat_many([(lease, {"p": 0})], lease_duration=LEASE)),
        ("finish", store.finish(lease, RunOutcome.succeeded({"p": 2}))),
        (
            "complete_and_claim",
            store.complete_and_claim(
                lease, progress={"p": 3}, kinds=["k"], worker_id="w", lease_duration=LEASE
            ),
        ),
        (
            "complete_and_claim_many",
            store.complete_and_claim_many(
                [(lease, {"p": 7})], kinds=["k"], worker_id="w", lease_duration=LEASE
            ),
        ),
        ("finish", store.finish(lease, RunOutcome.failed("boom", {"p": 4}))),
        ("finish", store.finish(lease, RunOutcome.released({"p": 5}))),
        ("finish", store.finish(lease, RunOutcome.cancelled({"p": 6}))),
        ("cancel", store.cancel(7, reason="operator")),
        (
            "requeue_failed",
            store.requeue_failed("k", after_id=4, up_to_id=9, limit=3, decode=_decode),
        ),
        (
            "cancel_queued",
            store.cancel_queued("k", after_id=5, up_to_id=12, limit=2, reason="gone"),
        ),
        ("pause_kind", store.pause_kind("k", reason="partner down")),
        ("resume_kind", store.resume_kind("k")),
        ("cap_kind", store.cap_kind("k", 3, source=CapSource.POLICY)),
        ("caps", store.caps()),
        ("recover_expired", store.recover_expired(max_stalls=3)),
        ("purge_finished", store.purge_finished(finished_before=cutoff, limit=9)),
        ("get", store.get(42)),
        (
            "list_items",
            store.list_items(
                statuses=[WorkStatus.QUEUED],
                kinds=["k"],
                worker_ids=["w"],
                limit=5,
                newest_first=True,
            ),
        ),
        ("count_by_kind_and_status", store.count_by_kind_and_status()),
    ]
    for name, call in made:
        assert await call == ANSWERS[name], name

    assert inner.calls == [
        ("claim", (["k"],), {"worker_id": "w", "lease_duration": LEASE}),
        ("next_run_at", (["k"],), {}),
        ("heartbeat", (lease,), {"progress": {"p": 1}, "lease_duration": LEASE}),
        ("heartbeat_many", ([(lease, {"p": 0})],), {"lease_duration": LEASE}),
        ("finish", (lease, RunOutcome.succeeded({"p": 2})), {}),
        (
            "complete_and_claim",
            (lease,),
            {"progress": {"p": 3}, "kinds": ["k"], "worker_id": "w", "lease_duration": LEASE},
        ),
        (
            "complete_and_claim_many",
            ([(lease, {"p": 7})],),
            {"kinds": ["k"], "worker_id": "w", "lease_duration": LEASE},
        ),
        ("finish", (lease, RunOutcome.failed("boom", {"p": 4})), {}),
        ("finish", (lease, RunOutcome.released({"p": 5})), {}),
        ("finish", (lease, RunOutcome.cancelled({"p": 6})), {}),
        ("cancel", (7,), {"reason": "operator"}),
        (
            "requeue_failed",
            ("k",),
            {"after_id": 4, "up_to_id": 9, "limit": 3, "decode": _decode},
        ),
        (
            "cancel_queued",
            ("k",),
            {"after_id": 5, "up_to_id": 12, "limit": 2, "reason": "gone"},
        ),
        ("pause_kind", ("k",), {"reason": "partner down"}),
        ("resume_kind", ("k",), {}),
        ("cap_kind", ("k", 3), {"source": CapSource.POLICY}),
        ("caps", (), {}),
        ("recover_expired", (), {"max_stalls": 3}),
        ("purge_finished", (), {"finished_before": cutoff, "limit": 9}),
        ("get", (42,), {}),
        (
            "list_items",
            (),
            {
                "statuses": [WorkStatus.QUEUED],
                "kinds": ["k"],
                "worker_ids": ["w"],
                "limit": 5,
                "newest_first": True,
            },
        ),
        ("count_by_kind_and_status", (), {}),
    ]


async def test_listing_by_default_asks_the_store_for_its_own_defaults() -> None:
    inner = Recording()
    await CountingWorkStore(inner, WorkerMetrics()).list_items()
    assert inner.calls == [
        (
            "list_items",
            (),
            {
                "statuses": None,
                "kinds": None,
                "worker_ids": None,
                "limit": 100,
                "newest_first": False,
            },
        )
    ]
