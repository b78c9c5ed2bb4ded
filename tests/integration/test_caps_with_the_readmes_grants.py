"""The README's least-privilege grants for caps (docs/adr/0035), on a real PostgreSQL: a worker's
role claims and ends items of a capped kind, taking and freeing slots (the trigger that frees them
runs as that role), and an operator's role caps, clears, pauses and resumes; a worker's role may
read a kind's controls but not change them."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from datetime import timedelta
from urllib.parse import urlsplit, urlunsplit

import asyncpg
import pytest
import pytest_asyncio

from workqueue.adapters.postgres import (
    PostgresWorkMonitor,
    PostgresWorkQueue,
    PostgresWorkStore,
    close_pool,
    create_pool,
    migrate,
)
from workqueue.adapters.postgres import migrations as migrations_module
from workqueue.adapters.testing import FakeClock
from workqueue.adapters.testing.contract.kinds import AlphaJob, BetaJob, ContractKind
from workqueue.domain import CapSource, RunOutcome

ALPHA = ContractKind.ALPHA.value
LEASE = timedelta(seconds=60)

# As README, "A least-privilege role for workers", grants them.
WORKER_GRANTS = (
    "GRANT SELECT, INSERT, UPDATE, DELETE ON work_items, refresh_tokens TO {role}",
    "GRANT USAGE ON SEQUENCE work_items_id_seq TO {role}",
    "GRANT SELECT ON workqueue_migrations TO {role}",
    "GRANT SELECT, INSERT, UPDATE ON work_schedules TO {role}",
    "GRANT SELECT ON work_kind_controls, work_kind_pauses TO {role}",
    "GRANT SELECT, UPDATE ON work_kind_slots TO {role}",
    "GRANT SELECT, INSERT, UPDATE, DELETE ON work_activity, work_depth TO {role}",
)
OPERATOR_GRANTS = (
    "GRANT SELECT ON work_items, workqueue_migrations TO {role}",
    "GRANT UPDATE (slot) ON work_items TO {role}",
    "GRANT SELECT, INSERT, UPDATE, DELETE ON work_kind_controls, work_kind_slots TO {role}",
)
# The migration that brought the caps and made work_kind_pauses a view.
CAPS_MIGRATION = 11


def as_role(url: str, role: str) -> str:
    parts = urlsplit(url)
    host = parts.netloc.rpartition("@")[2]
    return urlunsplit((parts.scheme, f"{role}@{host}", parts.path, parts.query, ""))


@pytest_asyncio.fixture
async def roles(database_url: str, postgres_admin_url: str) -> AsyncIterator[list[str]]:
    """Two login roles, a worker's and an operator's, with the README's grants; dropped after."""
    suffix = uuid.uuid4().hex[:12]
    names = [f"workqueue_worker_{suffix}", f"workqueue_operator_{suffix}"]
    admin = await asyncpg.connect(postgres_admin_url)
    owner = await asyncpg.connect(database_url)
    try:
        for name, grants in zip(names, (WORKER_GRANTS, OPERATOR_GRANTS), strict=True):
            await admin.execute(f"CREATE ROLE {name} LOGIN")
            for grant in grants:
                await owner.execute(grant.format(role=name))
        yield names
    finally:
        for name in names:
            await owner.execute(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = $1", name
            )
            await owner.execute(f"DROP OWNED BY {name}")
        await owner.close()
        for name in names:
            await admin.execute(f"DROP ROLE {name}")
        await admin.close()


async def test_a_worker_role_takes_and_frees_the_slots_of_a_capped_kind(
    database_url: str, migrated_pool: asyncpg.Pool, roles: list[str]
) -> None:
    worker_role, operator_role = roles
    clock = FakeClock()
    worker_pool = await create_pool(as_role(database_url, worker_role), min_size=1, max_size=2)
    operator_pool = await create_pool(as_role(database_url, operator_role), min_size=1, max_size=2)
    queue = PostgresWorkQueue(worker_pool, clock)
    store = PostgresWorkStore(worker_pool, clock)
    operator = PostgresWorkStore(operator_pool, clock)
    try:
        for number in range(3):
            await queue.enqueue(AlphaJob(number=number))
        await operator.cap_kind(ALPHA, 1)

        first = await store.claim([ALPHA], worker_id="w", lease_duration=LEASE)
        over_the_cap = await store.claim([ALPHA], worker_id="w", lease_duration=LEASE)
        assert first is not None
        held = (await store.caps())[0].running
        await store.finish(first.lease, RunOutcome.failed("boom", None))
        second = await store.claim([ALPHA], worker_id="w", lease_duration=LEASE)
        assert second is not None
        await clock.advance(120)
        recovered = await store.recover_expired(max_stalls=3)
        third = await store.claim([ALPHA], worker_id="w", lease_duration=LEASE)
        assert third is not None
        completed, fourth = await store.complete_and_claim(
            third.lease, progress=None, kinds=[ALPHA], worker_id="w", lease_duration=LEASE
        )
        with pytest.raises(asyncpg.InsufficientPrivilegeError):
            await store.cap_kind(ALPHA, 2)
        with pytest.raises(asyncpg.InsufficientPrivilegeError):
            await store.pause_kind(ALPHA)
    finally:
        await store.close()
        await queue.close()
        await operator.close()
        await close_pool(worker_pool)
        await close_pool(operator_pool)

    assert (over_the_cap, held) == (None, 1)
    assert second.id == first.id + 1
    # Recovery freed the dead run's slot; the completion handed its slot to the next claim.
    assert (recovered.requeued, third.id) == ([second.id], second.id)
    assert completed
    assert fourth is not None
    assert fourth.id == second.id + 1
    slots = await migrated_pool.fetch(
        "SELECT slot, item_id FROM work_kind_slots WHERE kind = $1", ALPHA
    )
    assert [(row["slot"], row["item_id"]) for row in slots] == [(1, fourth.id)]


async def test_an_operator_role_caps_clears_pauses_and_resumes(
    database_url: str, migrated_pool: asyncpg.Pool, roles: list[str]
) -> None:
    _, operator_role = roles
    clock = FakeClock()
    pool = await create_pool(as_role(database_url, operator_role), min_size=1, max_size=2)
    worker = PostgresWorkStore(migrated_pool, clock)
    queue = PostgresWorkQueue(migrated_pool, clock)
    operator = PostgresWorkStore(pool, clock)
    try:
        await queue.enqueue(AlphaJob(number=1))
        running = await worker.claim([ALPHA], worker_id="w", lease_duration=LEASE)
        assert running is not None
        capped = await operator.cap_kind(ALPHA, 2)
        policy = await operator.cap_kind(ALPHA, 1, source=CapSource.POLICY)
        paused = await operator.pause_kind(ALPHA, reason="partner down")
        resumed = await operator.resume_kind(ALPHA)
        cleared = await operator.cap_kind(ALPHA, None)
        caps = await operator.caps()
    finally:
        await operator.close()
        await worker.close()
        await queue.close()
        await close_pool(pool)

    assert capped is not None
    assert (capped.max_running, capped.source, capped.running) == (2, CapSource.OPERATOR, 1)
    assert policy == capped
    assert (paused.kind, paused.reason, resumed) == (ALPHA, "partner down", True)
    assert (cleared, caps) == (None, [])


async def test_a_reader_of_the_pauses_view_sees_the_paused_kinds(
    database_url: str, migrated_pool: asyncpg.Pool, postgres_admin_url: str
) -> None:
    role = f"workqueue_web_{uuid.uuid4().hex[:12]}"
    admin = await asyncpg.connect(postgres_admin_url)
    await admin.execute(f"CREATE ROLE {role} LOGIN")
    await migrated_pool.execute(
        f"GRANT SELECT ON work_items, work_kind_pauses, work_kind_controls TO {role}"
    )
    clock = FakeClock()
    store = PostgresWorkStore(migrated_pool, clock)
    pool = await create_pool(as_role(database_url, role), min_size=1, max_size=1)
    try:
        await store.pause_kind(ALPHA, reason="down")
        await store.cap_kind(ContractKind.BETA.value, 3)
        await PostgresWorkQueue(migrated_pool, clock).enqueue(BetaJob())
        assert await store.claim([ContractKind.BETA.value], worker_id="w", lease_duration=LEASE)
        pauses = await PostgresWorkMonitor(pool).paused_kinds()
        caps = await PostgresWorkMonitor(pool).capped_kinds()
    finally:
        await store.close()
        await close_pool(pool)
        await migrated_pool.execute(f"DROP OWNED BY {role}")
        await admin.execute(f"DROP ROLE {role}")
        await admin.close()

    assert [(pause.kind, pause.reason) for pause in pauses] == [(ALPHA, "down")]
    assert [(cap.kind, cap.max_running, cap.running, cap.source) for cap in caps] == [
        (ContractKind.BETA.value, 3, 1, CapSource.OPERATOR)
    ]


async def test_an_upgrade_keeps_the_pauses_and_what_their_readers_could_read(
    empty_database_url: str, postgres_admin_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A database at the migration before the caps, a kind paused, and a role that
    # reads the pauses (the web view's): then the upgrade.
    every = migrations_module.available_migrations()
    monkeypatch.setattr(
        migrations_module,
        "available_migrations",
        lambda: tuple(migration for migration in every if migration.version < CAPS_MIGRATION),
    )
    await migrate(empty_database_url)
    role = f"workqueue_web_{uuid.uuid4().hex[:12]}"
    admin = await asyncpg.connect(postgres_admin_url)
    owner = await asyncpg.connect(empty_database_url)
    try:
        await admin.execute(f"CREATE ROLE {role} LOGIN")
        await owner.execute(f"GRANT SELECT ON work_items, work_kind_pauses TO {role}")
        await owner.execute(
            "INSERT INTO work_kind_pauses (kind, paused_at, reason) VALUES ($1, now(), 'down')",
            ALPHA,
        )
        monkeypatch.undo()

        assert await migrate(empty_database_url) == [
            migration.name for migration in every[CAPS_MIGRATION - 1 :]
        ]
        reader = await asyncpg.connect(as_role(empty_database_url, role))
        try:
            paused = await reader.fetch("SELECT kind, reason FROM work_kind_pauses")
        finally:
            await reader.close()
    finally:
        await owner.execute(f"DROP OWNED BY {role}")
        await owner.close()
        await admin.execute(f"DROP ROLE {role}")
        await admin.close()

    assert [(row["kind"], row["reason"]) for row in paused] == [(ALPHA, "down")]
