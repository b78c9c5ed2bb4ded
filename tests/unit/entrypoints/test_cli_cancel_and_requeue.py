"""``workqueue cancel ID`` and ``workqueue requeue ID``: one line each, saying what happened
or why nothing did; 0 when the request took effect, 1 when there was nothing to do, 2 for
bad input."""

from __future__ import annotations

import asyncio
from datetime import timedelta
from enum import StrEnum

import pytest
from dependency_injector import providers
from worker_world import PRODUCTION_KINDS, WorkerWorld

from workqueue.domain import (
    DEFAULT_CANCEL_REASON,
    CancelOutcome,
    RunOutcome,
    TokenCleanup,
    WorkItem,
    WorkItemRetention,
    WorkPayload,
    WorkStatus,
)
from workqueue.entrypoints.worker.container import WorkerContainer
from workqueue.entrypoints.worker.settings import WorkerSettings

LEASE = timedelta(seconds=60)


class DigestKind(StrEnum):
    """An application's kind: served only with ``--app`` naming that application."""

    SEND_DIGEST = "send_digest"


class SendDigest(WorkPayload):
    kind = DigestKind.SEND_DIGEST


def enqueued(world: WorkerWorld, *, dedup_key: str | None = None) -> int:
    return asyncio.run(world.queue.enqueue(WorkItemRetention(), dedup_key=dedup_key)).id


def claimed(world: WorkerWorld) -> WorkItem:
    item = asyncio.run(
        world.store.claim(["work_item_retention"], worker_id="w-1", lease_duration=LEASE)
    )
    assert item is not None
    return item


def failed(world: WorkerWorld, *, dedup_key: str | None = None) -> int:
    enqueued(world, dedup_key=dedup_key)
    item = claimed(world)
    asyncio.run(world.store.finish(item.lease, RunOutcome.failed("boom", None)))
    return item.id


def row(world: WorkerWorld, item_id: int) -> WorkItem:
    item = world.state.read(item_id)
    assert item is not None
    return item


class TestCancel:
    def test_a_queued_item_is_cancelled_at_once_with_the_reason(self, world: WorkerWorld) -> None:
        item_id = enqueued(world)

        run = world.cli("cancel", str(item_id), "--reason", "wrong customer")

        assert (run.status, run.out, run.err) == (
            0,
            f"cancelled item {item_id} (it was queued)\n",
            "",
        )
        assert (row(world, item_id).status, row(world, item_id).error) == (
            WorkStatus.CANCELLED,
            "wrong customer",
        )

    def test_without_a_reason_the_default_one_is_stored(self, world: WorkerWorld) -> None:
        item_id = enqueued(world)

        assert world.cli("cancel", str(item_id), "--reason", "  ").status == 0

        assert row(world, item_id).error == DEFAULT_CANCEL_REASON

    def test_a_running_item_gets_the_request_and_the_line_says_who_acts(
        self, world: WorkerWorld
    ) -> None:
        enqueued(world)
        running = claimed(world)

        run = world.cli("cancel", str(running.id))

        assert run.status == 0
        assert run.out == (
            f"cancel of item {running.id} requested: it is running, and its worker cancels it "
            "at its next heartbeat (or lease recovery does, if the worker is gone)\n"
        )
        assert row(world, running.id).cancel_reason == DEFAULT_CANCEL_REASON
        assert row(world, running.id).status is WorkStatus.RUNNING

    def test_a_second_cancel_of_a_running_item_has_nothing_to_do(self, world: WorkerWorld) -> None:
        enqueued(world)
        running = claimed(world)
        world.cli("cancel", str(running.id))

        run = world.cli("cancel", str(running.id))

        assert (run.status, run.out) == (
            1,
            f"nothing to do: a cancel of item {running.id} was already requested\n",
        )

    def test_a_finished_item_is_left_alone_and_its_status_said(self, world: WorkerWorld) -> None:
        item_id = failed(world)

        run = world.cli("cancel", str(item_id))

        assert (run.status, run.out) == (
            1,
            f"nothing to do: item {item_id} already finished (failed)\n",
        )
        assert row(world, item_id).error == "boom"

    def test_a_finished_item_deleted_before_its_status_is_read_is_said_so(
        self, world: WorkerWorld
    ) -> None:
        class PurgedMeanwhile:
            async def cancel(self, item_id: int, *, reason: str) -> CancelOutcome:
                return CancelOutcome.FINISHED

            async def get(self, item_id: int) -> None:
                return None

        def container(settings: WorkerSettings) -> WorkerContainer:
            built = world.container(settings)
            built.work_store.override(providers.Object(PurgedMeanwhile()))
            return built

        run = world.cli("cancel", "5", container_factory=container)

        assert (run.status, run.out) == (
            1,
            "nothing to do: item 5 already finished (deleted since)\n",
        )

    def test_an_unknown_id_has_nothing_to_do(self, world: WorkerWorld) -> None:
        run = world.cli("cancel", "99")

        assert (run.status, run.out) == (1, "nothing to do: no item 99\n")

    @pytest.mark.parametrize("typed", ["abc", "0", "-3", "1.5"])
    def test_an_id_that_is_no_item_id_is_bad_input(
        self, world: WorkerWorld, typed: str, capsys: pytest.CaptureFixture[str]
    ) -> None:
        run = world.cli("cancel", "--", typed)

        assert run.status == 2
        assert "not an item id" in capsys.readouterr().err


class TestRequeue:
    def test_a_failed_item_is_enqueued_again_as_a_new_item(self, world: WorkerWorld) -> None:
        item_id = failed(world, dedup_key="nightly")

        run = world.cli("requeue", str(item_id))

        new_id = item_id + 1
        assert (run.status, run.out) == (0, f"requeued failed item {item_id} as item {new_id}\n")
        again = row(world, new_id)
        assert (again.status, again.kind, again.payload, again.dedup_key) == (
            WorkStatus.QUEUED,
            "work_item_retention",
            row(world, item_id).payload,
            "nightly",
        )
        assert row(world, item_id).status is WorkStatus.FAILED

    def test_a_cancelled_item_is_enqueued_again(self, world: WorkerWorld) -> None:
        item_id = asyncio.run(world.queue.enqueue(TokenCleanup())).id
        world.cli("cancel", str(item_id))

        run = world.cli("requeue", str(item_id))

        assert (run.status, run.out) == (
            0,
            f"requeued cancelled item {item_id} as item {item_id + 1}\n",
        )

    def test_a_queued_twin_absorbs_it(self, world: WorkerWorld) -> None:
        item_id = failed(world, dedup_key="nightly")
        twin = enqueued(world, dedup_key="nightly")

        run = world.cli("requeue", str(item_id))

        assert (run.status, run.out) == (
            0,
            f"requeue of failed item {item_id} absorbed by queued item {twin} "
            "with the same dedup key\n",
        )
        assert len(world.state.items) == 2

    @pytest.mark.parametrize("status", ["queued", "running", "succeeded"])
    def test_an_item_neither_failed_nor_cancelled_is_refused(
        self, world: WorkerWorld, status: str
    ) -> None:
        item_id = enqueued(world)
        if status != "queued":
            running = claimed(world)
            if status == "succeeded":
                asyncio.run(world.store.finish(running.lease, RunOutcome.succeeded(None)))

        run = world.cli("requeue", str(item_id))

        assert (run.status, run.out) == (
            1,
            f"nothing to do: item {item_id} is {status}; only failed or cancelled items requeue\n",
        )
        assert len(world.state.items) == 1

    def test_an_unknown_id_has_nothing_to_do(self, world: WorkerWorld) -> None:
        run = world.cli("requeue", "7")

        assert (run.status, run.out) == (1, "nothing to do: no item 7\n")

    def test_an_id_that_is_no_item_id_is_bad_input(self, world: WorkerWorld) -> None:
        assert world.cli("requeue", "x").status == 2

    def test_an_applications_item_without_the_application_says_to_name_it(
        self, world: WorkerWorld
    ) -> None:
        item_id = asyncio.run(world.queue.enqueue(SendDigest())).id
        asyncio.run(world.store.cancel(item_id, reason="not today"))

        run = world.cli("requeue", str(item_id))

        assert (run.status, run.out) == (2, "")
        assert run.err == (
            f"workqueue: unknown kind 'send_digest' (known kinds: {', '.join(PRODUCTION_KINDS)}): "
            "not a built-in kind; if it is your application's, pass --app MODULE or set "
            "WORKQUEUE_APP\n"
        )
        assert len(world.state.items) == 1

    def test_a_schema_not_current_is_a_failure_and_nothing_is_written(
        self, world: WorkerWorld
    ) -> None:
        item_id = failed(world)
        world.schema.missing = ["0005_cancelled_items"]

        run = world.cli("requeue", str(item_id))

        assert run.status == 1
        assert "workqueue migrate" in run.err
        assert len(world.state.items) == 1
