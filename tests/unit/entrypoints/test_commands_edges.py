"""The short commands called directly: their defaults, their order of checks, their words."""

from __future__ import annotations

import io
import json
from typing import Any

import pytest
from worker_world import WorkerWorld

from adapters.postgres import SchemaNotCurrentError
from domain import InvalidDedupKeyError
from entrypoints.commands import enqueue_work, show_status
from entrypoints.worker import schema as schema_module
from entrypoints.worker.schema import PostgresSchema, SchemaNotMigratedError


async def test_an_enqueue_without_a_payload_sends_an_empty_one(world: WorkerWorld) -> None:
    result = await enqueue_work(world.container(), io.StringIO(), kind="token_cleanup")

    item = await world.store.get(result.id)
    assert item is not None
    assert item.payload == {}


async def test_a_bad_dedup_key_is_refused_before_the_database_is_asked_anything(
    world: WorkerWorld,
) -> None:
    world.schema.missing = ["0001_work_items"]

    with pytest.raises(InvalidDedupKeyError):
        await enqueue_work(world.container(), io.StringIO(), kind="token_cleanup", dedup_key=" ")


async def test_status_is_text_unless_json_is_asked_for(world: WorkerWorld) -> None:
    text, document = io.StringIO(), io.StringIO()

    await show_status(world.container(), text)
    await show_status(world.container(), document, as_json=True)

    assert text.getvalue().startswith("database: postgresql://wq:***@db.example:5432/queue\n")
    assert json.loads(document.getvalue())["active_total"] == 0


class TestPostgresSchema:
    """The schema port over the adapter's migration functions, which are scripted here."""

    async def test_applying_returns_the_names_the_migrations_applied(
        self, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        pool = object()
        given: list[Any] = []

        async def migrate(target: Any) -> list[str]:
            given.append(target)
            return ["0003_more"]

        monkeypatch.setattr(schema_module, "migrate", migrate)

        assert await PostgresSchema(pool).apply_pending() == ["0003_more"]  # type: ignore[arg-type]
        assert given == [pool]

    async def test_a_current_schema_passes_the_check(self, monkeypatch: pytest.MonkeyPatch) -> None:
        pool = object()
        checked: list[Any] = []

        async def current(target: Any) -> None:
            checked.append(target)

        monkeypatch.setattr(schema_module, "check_schema_current", current)

        await PostgresSchema(pool).check_current()  # type: ignore[arg-type]

        assert checked == [pool]

    @pytest.mark.parametrize(
        ("missing", "unknown", "message"),
        [
            (
                ["0001_work_items", "0002_refresh_tokens"],
                [],
                "database is not migrated: run `workqueue migrate` "
                "(missing: 0001_work_items, 0002_refresh_tokens)",
            ),
            (
                [],
                ["0009_future"],
                "the database schema is not current: it has migrations this code does not "
                "know: 0009_future (the database was migrated by a newer version; deploy "
                "that version)",
            ),
            (
                ["0002_refresh_tokens"],
                ["0009_future"],
                "the database schema is not current: it lacks the migrations "
                "0002_refresh_tokens (apply them first; from a shell: python -m "
                "adapters.postgres.schema --database-url URL); it has migrations this code "
                "does not know: 0009_future (the database was migrated by a newer version; "
                "deploy that version)",
            ),
        ],
        ids=["missing", "unknown", "both"],
    )
    async def test_a_schema_that_is_not_current_says_what_to_do(
        self,
        monkeypatch: pytest.MonkeyPatch,
        missing: list[str],
        unknown: list[str],
        message: str,
    ) -> None:
        async def not_current(target: Any) -> None:
            raise SchemaNotCurrentError(missing, unknown)

        monkeypatch.setattr(schema_module, "check_schema_current", not_current)

        with pytest.raises(SchemaNotMigratedError) as refused:
            await PostgresSchema(object()).check_current()  # type: ignore[arg-type]

        assert str(refused.value) == message
        assert isinstance(refused.value.__cause__, SchemaNotCurrentError)
