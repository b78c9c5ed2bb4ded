"""The admin view on a real PostgreSQL: every route, a role with only SELECT on work_items,
and the values PostgreSQL cannot take (a NUL character, an id beyond bigint) answered 4xx."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from datetime import timedelta
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import asyncpg
import httpx
import pytest
import pytest_asyncio

from workqueue.adapters.postgres import (
    PostgresWorkMonitor,
    PostgresWorkQueue,
    PostgresWorkStore,
    close_pool,
    create_pool,
)
from workqueue.adapters.testing import FakeClock
from workqueue.adapters.testing.contract.kinds import AlphaJob, BetaJob, ContractKind
from workqueue.application.registry import KindCatalog
from workqueue.domain import RunOutcome, WorkSchedule
from workqueue.entrypoints.web.actions import WebActions
from workqueue.entrypoints.web.app import create_app
from workqueue.entrypoints.web.overview import OverviewReader
from workqueue.entrypoints.web.reads import WebServices
from workqueue.entrypoints.worker.schema import PostgresSchema

LEASE_SECONDS = 60
KINDS = [kind.value for kind in ContractKind]
PASSWORD = "s3cret-web-pw"


def as_role(url: str, role: str) -> str:
    parts = urlsplit(url)
    host = parts.netloc.rpartition("@")[2]
    return urlunsplit((parts.scheme, f"{role}:{PASSWORD}@{host}", parts.path, parts.query, ""))


async def fill(pool: asyncpg.Pool, clock: FakeClock) -> dict[str, int]:
    """A failed alpha, a running beta with progress, two queued alphas."""
    queue, store = PostgresWorkQueue(pool, clock), PostgresWorkStore(pool, clock)
    lease = timedelta(seconds=LEASE_SECONDS)
    failed = (await queue.enqueue(AlphaJob(number=1))).id
    item = await store.claim([ContractKind.ALPHA], worker_id="w-old", lease_duration=lease)
    assert item is not None
    await store.finish(
        item.lease, RunOutcome.failed("RuntimeError: <script>alert(1)</script>", None)
    )
    running = (await queue.enqueue(BetaJob(label="b"))).id
    item = await store.claim([ContractKind.BETA], worker_id="w-1", lease_duration=lease)
    assert item is not None
    await clock.advance(2)
    await store.heartbeat(item.lease, progress={"done": 5}, lease_duration=lease)
    await clock.advance(1)
    queued = [(await queue.enqueue(AlphaJob(number=n))).id for n in range(2, 4)]
    await store.close()
    await queue.close()
    return {"failed": failed, "running": running, "first_queued": queued[0]}


TOKEN = "an-admin-token-for-the-test"
SCHEDULES = (
    WorkSchedule(AlphaJob(number=1), interval=timedelta(hours=1)),
    WorkSchedule(BetaJob(), cron="0 3 * * *", timezone="Europe/Paris"),
)


CATALOG = KindCatalog([AlphaJob.kind, BetaJob.kind], [AlphaJob, BetaJob])
"""What the view's requeue validates a stored payload against, as the container's catalog."""


def client_for(
    pool: asyncpg.Pool, clock: FakeClock, *, with_actions: bool = False
) -> httpx.AsyncClient:
    monitor = PostgresWorkMonitor(pool)
    actions = None
    if with_actions:
        queue, store = PostgresWorkQueue(pool, clock), PostgresWorkStore(pool, clock)
        actions = WebActions(TOKEN, store, queue, CATALOG.decode)
    services = WebServices(
        monitor=monitor,
        overview=OverviewReader(monitor, clock, kinds=KINDS),
        schema=PostgresSchema(pool),
        clock=clock,
        actions=actions,
        schedules=SCHEDULES,
    )
    app = create_app(services, allowed_hosts=("view",))
    return httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://view")


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


async def test_every_route_answers_on_postgresql(
    migrated_pool: asyncpg.Pool, clock: FakeClock
) -> None:
    ids = await fill(migrated_pool, clock)

    async with client_for(migrated_pool, clock) as client:
        overview = (await client.get("/api/overview")).json()
        running = (await client.get("/api/running")).json()
        queued = (
            await client.get("/api/queued", params={"kind": "contract_alpha", "limit": 1})
        ).json()
        failures = (await client.get("/api/failures")).json()
        item = (await client.get(f"/api/items/{ids['running']}")).json()
        page = await client.get("/")
        item_page = await client.get(f"/items/{ids['failed']}")
        metrics = (await client.get("/metrics")).text
        health = await client.get("/healthz")

    assert overview["counts"]["contract_alpha"] == {
        "queued": 2,
        "running": 0,
        "succeeded": 0,
        "failed": 1,
        "cancelled": 0,
    }
    assert overview["counts"]["contract_beta"]["running"] == 1
    assert overview["oldest_queued"]["contract_alpha"]["age_seconds"] == 0
    assert [entry["id"] for entry in running["items"]] == [ids["running"]]
    assert running["items"][0]["heartbeat_age_seconds"] == 1
    assert running["items"][0]["lease_left_seconds"] == 59
    assert running["items"][0]["progress"] == {"done": 5}
    assert [entry["id"] for entry in queued["items"]] == [ids["first_queued"]]
    assert queued["next_after"] == ids["first_queued"]
    assert [entry["id"] for entry in failures["items"]] == [ids["failed"]]
    assert item["item"]["worker_id"] == "w-1"
    assert page.status_code == 200
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page.text
    assert "<script>alert" not in page.text
    assert item_page.status_code == 200
    assert 'workqueue_items{kind="contract_beta",status="running"} 1.0' in metrics
    assert "workqueue_database_up 1.0" in metrics
    assert health.status_code == 200
    assert health.json()["schema"] == "current"


async def test_health_says_the_schema_is_not_current_on_an_unmigrated_database(
    empty_database_url: str, clock: FakeClock
) -> None:
    pool = await create_pool(empty_database_url, min_size=1, max_size=2)
    try:
        async with client_for(pool, clock) as client:
            response = await client.get("/healthz")
    finally:
        await close_pool(pool)

    assert response.status_code == 503
    # work_items does not exist yet: the first check already fails.
    assert response.json()["database"] == "unreadable"
    assert "UndefinedTableError" in response.json()["reason"]


@pytest_asyncio.fixture
async def reader_role(database_url: str, postgres_admin_url: str) -> AsyncIterator[str]:
    """A login role with only SELECT on work_items and work_schedules (README's grants);
    dropped afterwards."""
    role = f"workqueue_web_{uuid.uuid4().hex[:12]}"
    admin = await asyncpg.connect(postgres_admin_url)
    owner = await asyncpg.connect(database_url)
    try:
        await admin.execute(f"CREATE ROLE {role} LOGIN PASSWORD '{PASSWORD}'")
        await owner.execute(
            "GRANT SELECT ON work_items, work_schedules, work_kind_pauses, work_kind_controls,"
            f" work_activity, work_depth TO {role}"
        )
        yield role
    finally:
        await owner.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = $1", role
        )
        await owner.execute(f"DROP OWNED BY {role}")
        await owner.close()
        await admin.execute(f"DROP ROLE {role}")
        await admin.close()


async def test_the_view_works_for_a_role_with_only_select_on_work_items(
    database_url: str, migrated_pool: asyncpg.Pool, reader_role: str, clock: FakeClock
) -> None:
    ids = await fill(migrated_pool, clock)
    url = as_role(database_url, reader_role)
    pool = await create_pool(url, min_size=1, max_size=2)
    try:
        async with client_for(pool, clock) as client:
            responses = {
                path: await client.get(path)
                for path in [
                    "/",
                    f"/items/{ids['running']}",
                    "/fragments/overview",
                    "/api/overview",
                    "/api/running",
                    "/api/queued",
                    "/api/failures",
                    f"/api/items/{ids['failed']}",
                    "/api/schedules",
                    "/schedules",
                    "/metrics",
                ]
            }
            health = await client.get("/healthz")
            await migrated_pool.execute(f"GRANT SELECT ON workqueue_migrations TO {reader_role}")
            health_with_grant = await client.get("/healthz")
        with pytest.raises(asyncpg.InsufficientPrivilegeError):
            await pool.execute("UPDATE work_items SET stalls = stalls + 1")
        with pytest.raises(asyncpg.InsufficientPrivilegeError):
            await pool.execute("DELETE FROM work_items")
    finally:
        await close_pool(pool)

    assert {path: response.status_code for path, response in responses.items()} == dict.fromkeys(
        responses, 200
    )
    assert [entry["id"] for entry in responses["/api/running"].json()["items"]] == [ids["running"]]
    assert "workqueue_database_up 1.0" in responses["/metrics"].text
    # The schema check reads workqueue_migrations: without that grant it cannot say.
    assert health.status_code == 503
    assert health.json() == {
        "status": "unavailable",
        "database": "reachable",
        "schema": "unknown",
        "reason": "cannot check the migrations: InsufficientPrivilegeError: permission denied "
        "for table workqueue_migrations",
    }
    assert health_with_grant.status_code == 200
    for response in [*responses.values(), health]:
        assert PASSWORD not in response.text
        assert reader_role not in response.text


async def test_the_actions_cancel_and_requeue_on_postgresql(
    migrated_pool: asyncpg.Pool, clock: FakeClock
) -> None:
    ids = await fill(migrated_pool, clock)
    form = {"token": TOKEN, "reason": "not wanted"}
    origin = {"origin": "http://view"}

    async with client_for(migrated_pool, clock, with_actions=True) as client:
        queued = await client.post(
            f"/items/{ids['first_queued']}/cancel", data=form, headers=origin
        )
        running = await client.post(f"/items/{ids['running']}/cancel", data=form, headers=origin)
        requeued = await client.post(f"/items/{ids['failed']}/requeue", data=form, headers=origin)

    assert [response.status_code for response in (queued, running, requeued)] == [200, 200, 200]
    rows = {
        row["id"]: row
        for row in await migrated_pool.fetch("SELECT id, status, cancel_reason FROM work_items")
    }
    assert rows[ids["first_queued"]]["status"] == "cancelled"
    assert (rows[ids["running"]]["status"], rows[ids["running"]]["cancel_reason"]) == (
        "running",
        "not wanted",
    )
    assert max(rows) > ids["first_queued"] + 1, "the requeue inserted a new item"


async def test_the_actions_are_refused_clearly_for_a_role_with_only_select(
    database_url: str, migrated_pool: asyncpg.Pool, reader_role: str, clock: FakeClock
) -> None:
    ids = await fill(migrated_pool, clock)
    pool = await create_pool(as_role(database_url, reader_role), min_size=1, max_size=2)
    try:
        async with client_for(pool, clock, with_actions=True) as client:
            responses = [
                await client.post(
                    f"/items/{ids[name]}/{verb}",
                    data={"token": TOKEN},
                    headers={"origin": "http://view"},
                )
                for name, verb in [
                    ("first_queued", "cancel"),
                    ("running", "cancel"),
                    ("failed", "requeue"),
                ]
            ]
    finally:
        await close_pool(pool)

    assert [response.status_code for response in responses] == [403, 403, 403]
    assert all("database role may only read" in response.text for response in responses)
    statuses = [
        row["status"]
        for row in await migrated_pool.fetch("SELECT status FROM work_items ORDER BY id")
    ]
    assert statuses == ["failed", "running", "queued", "queued"]


async def test_the_readmes_grants_are_all_the_actions_need(
    database_url: str, migrated_pool: asyncpg.Pool, reader_role: str, clock: FakeClock
) -> None:
    ids = await fill(migrated_pool, clock)
    for grant in [
        "GRANT UPDATE (status, error, finished_at, cancel_reason, requeued_as)"
        " ON work_items TO {role}",
        "GRANT INSERT ON work_items TO {role}",
        "GRANT USAGE ON SEQUENCE work_items_id_seq TO {role}",
        "GRANT SELECT, INSERT, UPDATE, DELETE ON work_kind_controls TO {role}",
    ]:
        await migrated_pool.execute(grant.format(role=reader_role))
    pool = await create_pool(as_role(database_url, reader_role), min_size=1, max_size=2)
    try:
        async with client_for(pool, clock, with_actions=True) as client:
            responses = [
                await client.post(
                    f"/items/{ids[name]}/{verb}",
                    data={"token": TOKEN},
                    headers={"origin": "http://view"},
                )
                for name, verb in [
                    ("first_queued", "cancel"),
                    ("running", "cancel"),
                    ("failed", "requeue"),
                ]
            ]
            responses += [
                await client.post(
                    f"/kinds/contract_alpha/{verb}",
                    data={"token": TOKEN},
                    headers={"origin": "http://view"},
                )
                for verb in ["pause", "resume"]
            ]
            responses += [
                await client.post(
                    f"/kinds/contract_alpha/{verb}",
                    data={"token": TOKEN, "up_to_id": "1000000", "shown": shown},
                    headers={"origin": "http://view"},
                )
                for verb, shown in [("requeue-failed", "1"), ("cancel-queued", "3")]
            ]
    finally:
        await close_pool(pool)

    assert [response.status_code for response in responses] == [200] * 7
    assert await migrated_pool.fetchval("SELECT count(*) FROM work_items") == 6
    assert await migrated_pool.fetchval("SELECT count(*) FROM work_kind_controls") == 0
    assert await migrated_pool.fetchval(
        "SELECT requeued_as FROM work_items WHERE id = $1", ids["failed"]
    ) == await migrated_pool.fetchval("SELECT max(id) FROM work_items")
    assert (
        await migrated_pool.fetchval("SELECT count(*) FROM work_items WHERE status = 'queued'") == 0
    )


async def rows(pool: asyncpg.Pool) -> list[dict[str, Any]]:
    """Every row of work_items, every column, by id."""
    return [dict(row) for row in await pool.fetch("SELECT * FROM work_items ORDER BY id")]


async def test_a_kind_with_a_nul_character_is_a_400_not_a_database_error(
    migrated_pool: asyncpg.Pool, clock: FakeClock
) -> None:
    await fill(migrated_pool, clock)

    async with client_for(migrated_pool, clock) as client:
        responses = [
            await client.get(path, params={"kind": "contract_alpha\x00"})
            for path in ["/", "/fragments/overview", "/api/queued"]
        ]

    assert [response.status_code for response in responses] == [400, 400, 400]
    assert responses[2].json() == {"error": "kind must not contain a NUL character"}


async def test_an_id_beyond_bigint_is_no_item_on_every_route(
    migrated_pool: asyncpg.Pool, clock: FakeClock
) -> None:
    await fill(migrated_pool, clock)
    before = await rows(migrated_pool)
    form, origin = {"token": TOKEN}, {"origin": "http://view"}

    async with client_for(migrated_pool, clock, with_actions=True) as client:
        responses = {
            f"{method} {path}": await client.request(
                method, path, data=form if method == "POST" else None, headers=origin
            )
            for item_id in [2**63, 10**30]
            for method, path in [
                ("GET", f"/items/{item_id}"),
                ("GET", f"/fragments/items/{item_id}"),
                ("GET", f"/api/items/{item_id}"),
                ("POST", f"/items/{item_id}/cancel"),
                ("POST", f"/items/{item_id}/requeue"),
            ]
        }

    assert {name: response.status_code for name, response in responses.items()} == dict.fromkeys(
        responses, 404
    )
    assert (
        "Nothing to do: no item 9223372036854775808."
        in responses["POST /items/9223372036854775808/cancel"].text
    )
    assert await rows(migrated_pool) == before


async def test_a_cancel_reason_with_a_nul_character_is_a_400_and_nothing_is_written(
    migrated_pool: asyncpg.Pool, clock: FakeClock
) -> None:
    ids = await fill(migrated_pool, clock)
    before = await rows(migrated_pool)

    async with client_for(migrated_pool, clock, with_actions=True) as client:
        responses = [
            await client.post(
                f"/items/{ids[name]}/cancel",
                data={"token": TOKEN, "reason": "wrong\x00customer"},
                headers={"origin": "http://view"},
            )
            for name in ["first_queued", "running"]
        ]

    assert [response.status_code for response in responses] == [400, 400]
    assert all(
        "Refused: the reason contains a NUL character, which the database cannot store."
        in response.text
        for response in responses
    )
    assert await rows(migrated_pool) == before


async def test_a_requeue_of_an_item_whose_payload_no_longer_validates_is_a_422(
    migrated_pool: asyncpg.Pool, clock: FakeClock
) -> None:
    ids = await fill(migrated_pool, clock)
    await migrated_pool.execute(
        """UPDATE work_items SET payload = '{"number": "one"}' WHERE id = $1""", ids["failed"]
    )
    before = await rows(migrated_pool)

    async with client_for(migrated_pool, clock, with_actions=True) as client:
        response = await client.post(
            f"/items/{ids['failed']}/requeue",
            data={"token": TOKEN},
            headers={"origin": "http://view"},
        )

    assert response.status_code == 422
    assert (
        f"Cannot requeue item {ids['failed']}: invalid payload for kind &#39;contract_alpha&#39;: "
        "number: Input should be a valid integer"
    ) in response.text
    assert await rows(migrated_pool) == before


async def test_a_role_with_only_select_never_meets_a_500(
    database_url: str, migrated_pool: asyncpg.Pool, reader_role: str, clock: FakeClock
) -> None:
    ids = await fill(migrated_pool, clock)
    await migrated_pool.execute(
        """UPDATE work_items SET payload = '{"number": "one"}' WHERE id = $1""", ids["failed"]
    )
    before = await rows(migrated_pool)
    origin = {"origin": "http://view"}
    pool = await create_pool(as_role(database_url, reader_role), min_size=1, max_size=2)
    try:
        async with client_for(pool, clock, with_actions=True) as client:
            stale = await client.post(
                f"/items/{ids['failed']}/requeue", data={"token": TOKEN}, headers=origin
            )
            nul = await client.post(
                f"/items/{ids['first_queued']}/cancel",
                data={"token": TOKEN, "reason": "a\x00b"},
                headers=origin,
            )
            beyond = await client.post(
                f"/items/{2**63}/cancel", data={"token": TOKEN}, headers=origin
            )
            unknown = await client.post(
                "/items/999999/cancel", data={"token": TOKEN}, headers=origin
            )
            cancel = await client.post(
                f"/items/{ids['first_queued']}/cancel", data={"token": TOKEN}, headers=origin
            )
    finally:
        await close_pool(pool)

    statuses = [r.status_code for r in (stale, nul, beyond, unknown, cancel)]
    assert statuses == [422, 400, 404, 403, 403]
    assert "database role may only read" in unknown.text
    assert "database role may only read" in cancel.text
    assert await rows(migrated_pool) == before


async def test_items_are_found_by_id_kind_and_status_on_postgresql(
    migrated_pool: asyncpg.Pool, clock: FakeClock
) -> None:
    ids = await fill(migrated_pool, clock)

    async with client_for(migrated_pool, clock) as client:
        found = await client.get("/find", params={"q": f"#{ids['failed']}"}, follow_redirects=True)
        beyond = await client.get("/find", params={"q": str(2**63)}, follow_redirects=True)
        failed = (await client.get("/", params={"kind": "contract_alpha", "status": "failed"})).text
        beta = (await client.get("/", params={"kind": "contract_beta"})).text
        running = (await client.get("/", params={"status": "running"})).text

    assert found.status_code == 200
    assert f"Item #{ids['failed']}: contract_alpha" in found.text
    assert beyond.status_code == 404
    assert f'href="/items/{ids["failed"]}"' in failed
    assert '<section id="queued">' not in failed
    assert "Chosen from the latest 500 unsuccessful items." in failed
    assert f'id="running-{ids["running"]}"' in beta
    assert f'href="/items/{ids["first_queued"]}"' not in beta
    assert f'href="/items/{ids["failed"]}"' not in beta
    assert f'id="running-{ids["running"]}"' in running
    assert '<section id="failures">' not in running


async def test_items_are_found_by_dedup_key_on_postgresql_by_a_role_with_only_select(
    database_url: str, migrated_pool: asyncpg.Pool, reader_role: str, clock: FakeClock
) -> None:
    queue = PostgresWorkQueue(migrated_pool, clock)
    store = PostgresWorkStore(migrated_pool, clock)
    lease = timedelta(seconds=LEASE_SECONDS)
    first = (await queue.enqueue(AlphaJob(number=1), dedup_key="invoice-7")).id
    assert await store.claim([ContractKind.ALPHA], worker_id="w-1", lease_duration=lease)
    second = (await queue.enqueue(BetaJob(), dedup_key="invoice-7")).id
    only = (await queue.enqueue(AlphaJob(number=2), dedup_key="<b>one</b>")).id
    await store.close()
    await queue.close()
    pool = await create_pool(as_role(database_url, reader_role), min_size=1, max_size=2)
    try:
        async with client_for(pool, clock) as client:
            several = await client.get("/find", params={"q": "invoice-7"})
            one = await client.get("/find", params={"q": "<b>one</b>"})
            none = await client.get("/find", params={"q": "Invoice-7"})
            nul = await client.get("/find", params={"q": "a\x00b"})
            api = await client.get("/api/items", params={"dedup_key": "invoice-7"})
            api_nul = await client.get("/api/items", params={"dedup_key": "a\x00b"})
    finally:
        await close_pool(pool)

    assert several.status_code == 200
    assert several.text.index(f'href="/items/{second}"') < several.text.index(
        f'href="/items/{first}"'
    )
    assert (one.status_code, one.headers["location"]) == (303, f"/items/{only}")
    assert none.status_code == 404
    assert "No item has the id or dedup key \u201cInvoice-7\u201d." in none.text
    assert (nul.status_code, api_nul.status_code) == (400, 400)
    assert [entry["status"] for entry in api.json()["items"]] == ["queued", "running"]
    assert [entry["id"] for entry in api.json()["items"]] == [second, first]
