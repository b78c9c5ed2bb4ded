"""The ``workqueue`` command line, run in-process on the in-memory world."""

from __future__ import annotations

import asyncio
import json
from datetime import timedelta

import pytest
from dependency_injector import providers
from worker_world import SECRET, WorkerWorld

from adapters.memory import InMemoryRefreshTokenStore
from domain import MAX_DEDUP_KEY_LENGTH, TokenCleanup, WorkItemRetention, WorkStatus
from entrypoints.worker.container import WorkerContainer
from entrypoints.worker.handlers import TokenCleanupHandler
from entrypoints.worker.settings import WorkerSettings

LEASE = timedelta(seconds=60)


def queued_items(world: WorkerWorld) -> list[tuple[str, dict[str, object], str | None]]:
    return [
        (item.kind, item.payload, item.dedup_key)
        for item in world.state.snapshot()
        if item.status is WorkStatus.QUEUED
    ]


class TestEnqueue:
    def test_a_valid_payload_is_enqueued_and_its_id_printed(self, world: WorkerWorld) -> None:
        run = world.cli("enqueue", "work_item_retention", "--payload", '{"retention_days": 7}')

        assert run.status == 0
        assert run.out == "created item 1 (work_item_retention)\n"
        assert queued_items(world) == [("work_item_retention", {"retention_days": 7.0}, None)]

    def test_the_payload_defaults_to_an_empty_object(self, world: WorkerWorld) -> None:
        run = world.cli("enqueue", "token_cleanup")

        assert run.status == 0
        assert queued_items(world) == [("token_cleanup", {}, None)]

    def test_a_second_enqueue_with_the_same_dedup_key_is_absorbed(self, world: WorkerWorld) -> None:
        first = world.cli("enqueue", "token_cleanup", "--dedup-key", "nightly")
        second = world.cli("enqueue", "token_cleanup", "--dedup-key", "nightly")

        assert first.out == "created item 1 (token_cleanup)\n"
        assert second.status == 0
        assert second.out == "absorbed by queued item 1 (token_cleanup, dedup key 'nightly')\n"
        assert queued_items(world) == [("token_cleanup", {}, "nightly")]

    @pytest.mark.parametrize(
        ("argv", "message"),
        [
            (
                ["work_item_retention", "--payload", '{"retention_days": "soon"}'],
                "invalid payload for kind 'work_item_retention': retention_days:",
            ),
            (
                ["work_item_retention", "--payload", '{"keep": 1}'],
                "invalid payload for kind 'work_item_retention': keep: Extra inputs",
            ),
            (
                ["token_cleanup", "--payload", "{not json"],
                "invalid payload for kind 'token_cleanup': payload: Invalid JSON",
            ),
            (
                ["invoice_run"],
                "unknown kind 'invoice_run' (known kinds: token_cleanup, work_item_retention)",
            ),
            (["token_cleanup", "--dedup-key", "  "], "dedup key must not be empty or blank"),
            (
                ["token_cleanup", "--dedup-key", "k" * (MAX_DEDUP_KEY_LENGTH + 1)],
                f"the limit is {MAX_DEDUP_KEY_LENGTH}",
            ),
        ],
    )
    def test_bad_input_is_one_line_on_stderr_exit_two_and_nothing_inserted(
        self, world: WorkerWorld, argv: list[str], message: str
    ) -> None:
        run = world.cli("enqueue", *argv)

        assert run.status == 2
        assert run.out == ""
        assert run.err.startswith("workqueue: ")
        assert message in run.err
        assert run.err.count("\n") == 1
        assert world.state.items == {}

    def test_an_unmigrated_database_is_a_runtime_failure(self, world: WorkerWorld) -> None:
        world.schema.missing = ["0001_work_items"]

        run = world.cli("enqueue", "token_cleanup")

        assert run.status == 1
        assert "database is not migrated: run `workqueue migrate`" in run.err
        assert world.state.items == {}


class TestStatus:
    async def fill(self, world: WorkerWorld) -> dict[str, int]:
        queue, store = world.queue, world.store
        failed = (await queue.enqueue(TokenCleanup())).id
        claimed = await store.claim(["token_cleanup"], worker_id="w-old", lease_duration=LEASE)
        assert claimed is not None
        await store.fail(
            claimed.lease, error="RuntimeError: disk full\nTraceback...", progress=None
        )
        running = (await queue.enqueue(WorkItemRetention())).id
        claimed = await store.claim(["work_item_retention"], worker_id="w-1", lease_duration=LEASE)
        assert claimed is not None
        await world.clock.advance(3)
        await store.heartbeat(claimed.lease, progress={"deleted": 12}, lease_duration=LEASE)
        await world.clock.advance(4.5)
        queued = (await queue.enqueue(TokenCleanup(), dedup_key="periodic")).id
        return {"failed": failed, "running": running, "queued": queued}

    def test_the_text_shows_counts_live_items_and_recent_failures(self, world: WorkerWorld) -> None:
        ids = asyncio.run(self.fill(world))

        run = world.cli("status")

        assert run.status == 0
        lines = run.out.splitlines()
        assert lines[0] == "database: postgresql://wq:***@db.example:5432/queue"
        assert lines[2].split() == ["kind", "queued", "running", "succeeded", "failed"]
        assert lines[3].split() == ["token_cleanup", "1", "0", "0", "1"]
        assert lines[4].split() == ["work_item_retention", "0", "1", "0", "0"]
        assert "queued and running: 2" in lines
        assert (
            f"  #{ids['running']} work_item_retention running attempt=1 stalls=0 "
            'worker=w-1 heartbeat=4.5s ago progress={"deleted":12}'
        ) in lines
        assert f"  #{ids['queued']} token_cleanup queued attempt=0 stalls=0" in lines
        assert "failed: 1" in lines
        assert any(
            line.startswith(f"  #{ids['failed']} token_cleanup attempt=1")
            and line.endswith("error: RuntimeError: disk full")
            for line in lines
        )
        assert SECRET not in run.out

    def test_json_carries_the_same_facts_for_scripts(self, world: WorkerWorld) -> None:
        ids = asyncio.run(self.fill(world))

        run = world.cli("status", "--json")

        assert run.status == 0
        document = json.loads(run.out)
        assert document["database"] == "postgresql://wq:***@db.example:5432/queue"
        assert document["counts"]["token_cleanup"] == {
            "queued": 1,
            "running": 0,
            "succeeded": 0,
            "failed": 1,
        }
        running = next(item for item in document["active"] if item["id"] == ids["running"])
        assert running["heartbeat_age_seconds"] == 4.5
        assert running["worker_id"] == "w-1"
        assert running["progress"] == {"deleted": 12}
        (failure,) = document["recent_failures"]
        assert failure["id"] == ids["failed"]
        assert failure["error"].startswith("RuntimeError: disk full")

    def test_an_empty_queue_still_lists_every_kind(self, world: WorkerWorld) -> None:
        run = world.cli("status")

        assert run.status == 0
        assert "queued and running: 0" in run.out
        assert any(
            line.split() == ["token_cleanup", "0", "0", "0", "0"] for line in run.out.splitlines()
        )

    def test_the_failure_list_is_bounded_newest_first(self, world: WorkerWorld) -> None:
        async def fail_many() -> list[int]:
            ids = []
            for _ in range(12):
                ids.append((await world.queue.enqueue(TokenCleanup())).id)
                claimed = await world.store.claim(
                    ["token_cleanup"], worker_id="w", lease_duration=LEASE
                )
                assert claimed is not None
                await world.store.fail(claimed.lease, error="no", progress=None)
            return ids

        ids = asyncio.run(fail_many())

        document = json.loads(world.cli("status", "--json").out)
        assert document["failed_total"] == 12
        assert [item["id"] for item in document["recent_failures"]] == ids[::-1][:10]

    def test_status_writes_nothing(self, world: WorkerWorld) -> None:
        asyncio.run(self.fill(world))
        before = world.state.snapshot()

        world.cli("status")

        assert world.state.snapshot() == before


class TestMigrate:
    def test_it_says_which_migrations_it_applied_then_that_none_is_pending(
        self, world: WorkerWorld
    ) -> None:
        world.schema.missing = ["0001_work_items", "0002_refresh_tokens"]

        first = world.cli("migrate")
        second = world.cli("migrate")

        assert first.status == 0
        assert first.out.splitlines() == [
            "applied 2 migration(s) to postgresql://wq:***@db.example:5432/queue:",
            "  0001_work_items",
            "  0002_refresh_tokens",
        ]
        assert second.out == "postgresql://wq:***@db.example:5432/queue is already up to date\n"


class TestUsageAndStartup:
    def test_bad_settings_are_one_line_and_exit_two(
        self, world: WorkerWorld, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        monkeypatch.setenv("WORKQUEUE_HEARTBEAT_INTERVAL", "60")

        run = world.cli("status")

        assert run.status == 2
        assert run.err == (
            "workqueue: invalid setting WORKQUEUE_HEARTBEAT_INTERVAL: "
            "must be less than WORKQUEUE_LEASE_DURATION (60.0)\n"
        )

    def test_a_password_in_a_bad_database_url_is_not_echoed(
        self, world: WorkerWorld, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        monkeypatch.setenv("WORKQUEUE_DATABASE_URL", f"postgresql://u:{SECRET}@host:99999999/db")

        run = world.cli("status")

        assert run.status == 2
        assert "WORKQUEUE_DATABASE_URL" in run.err
        assert SECRET not in run.err

    @pytest.mark.parametrize(
        "argv", [[], ["launch"], ["worker", "--log-format", "xml"], ["enqueue"]]
    )
    def test_bad_usage_exits_two(self, world: WorkerWorld, argv: list[str]) -> None:
        run = world.cli(*argv)

        assert run.status == 2

    def test_a_worker_with_a_missing_handler_stops_with_the_registry_message(
        self, world: WorkerWorld
    ) -> None:
        def without_retention(settings: WorkerSettings) -> WorkerContainer:
            container = world.container(settings)
            container.handlers.override(
                providers.List(
                    providers.Object(
                        TokenCleanupHandler(InMemoryRefreshTokenStore(world.state), world.clock)
                    )
                )
            )
            return container

        run = world.cli("worker", container_factory=without_retention)

        assert run.status == 1
        assert run.err.startswith("workqueue: cannot build the kind registry for WorkKind")
        assert "kind 'work_item_retention' has no handler" in run.err
        assert run.err.count("\n") == 1

    def test_a_worker_on_an_unmigrated_database_with_no_migrate_says_what_to_do(
        self, world: WorkerWorld
    ) -> None:
        world.schema.missing = ["0001_work_items"]

        run = world.cli("worker", "--no-migrate")

        assert run.status == 1
        assert run.err.startswith("workqueue: database is not migrated: run `workqueue migrate`")
