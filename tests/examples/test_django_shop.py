"""The Django shop (examples/django_shop): an order and its confirmation, all or nothing.

A real Django project on psycopg 3 and a real PostgreSQL: the view writes the
order and enqueues its confirmation with PsycopgWorkQueue on Django's own
connection, inside ``transaction.atomic()``, and takes the stock last. Requests
go through Django's test client (the project's whole request handling); the
committed confirmation is run by a WorkExecutor over the shop's registry, as a
worker for the shop would run it.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Coroutine, Iterator
from typing import Any

import asyncpg
import django
import pytest
from django.core import mail
from django.core.management import call_command
from django.db import connections
from django.test import Client

from workqueue.adapters.clock import SystemClock
from workqueue.adapters.postgres import PostgresWorkStore, close_pool, create_pool
from workqueue.application import ExecutionOutcome, ExecutionStatus, WorkExecutor

RunInFreshLoop = Callable[[Callable[[], Coroutine[Any, Any, Any]]], Any]


@pytest.fixture(scope="module")
def shop_database(migrated_database_factory: Callable[[str], str]) -> Iterator[str]:
    """A database migrated for workqueue, then for the shop by Django's migrate."""
    url = migrated_database_factory("django_shop")
    os.environ["SHOP_DATABASE_URL"] = url
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "shop_site.settings")
    django.setup()
    call_command("migrate", verbosity=0)
    try:
        yield url
    finally:
        connections.close_all()
        del os.environ["SHOP_DATABASE_URL"]


@pytest.fixture
def shop(shop_database: str) -> Iterator[Client]:
    """The shop with 2 kettles in stock, no order, no work item, no mail."""
    from orders.models import Product

    with connections["default"].cursor() as cursor:
        cursor.execute("TRUNCATE orders_order, orders_product, work_items RESTART IDENTITY")
    Product.objects.create(name="kettle", stock=2)
    mail.outbox = []
    yield Client()
    connections.close_all()


def order(client: Client, quantity: int) -> tuple[int, dict[str, Any]]:
    response = client.post(
        "/orders",
        json.dumps({"product": "kettle", "quantity": quantity, "email": "ada@example.com"}),
        content_type="application/json",
    )
    return response.status_code, response.json()


def work_items(url: str, run: RunInFreshLoop) -> list[tuple[str, str, Any]]:
    async def read() -> list[tuple[str, str, Any]]:
        connection = await asyncpg.connect(url)
        try:
            rows = await connection.fetch(
                "SELECT kind, status, payload::text AS payload FROM work_items ORDER BY id"
            )
        finally:
            await connection.close()
        return [(row["kind"], row["status"], json.loads(row["payload"])) for row in rows]

    result: list[tuple[str, str, Any]] = run(read)
    return result


def run_the_shops_worker_once(url: str, run: RunInFreshLoop) -> ExecutionOutcome | None:
    """Claim and run one item of the shop's kinds, as a worker for the shop does."""
    from orders.work import shop_registry

    async def run_next() -> ExecutionOutcome | None:
        pool = await create_pool(url, min_size=1, max_size=2)
        store = PostgresWorkStore(pool, SystemClock())
        try:
            executor = WorkExecutor(store, shop_registry(), SystemClock(), worker_id="shop")
            return await executor.run_next()
        finally:
            await store.close()
            await close_pool(pool)

    outcome: ExecutionOutcome | None = run(run_next)
    return outcome


def test_an_order_and_its_confirmation_commit_together_and_a_worker_mails_it(
    shop: Client, shop_database: str, run_in_fresh_loop: RunInFreshLoop
) -> None:
    from orders.models import Order, Product

    status, body = order(shop, 2)

    assert status == 201
    placed = Order.objects.get()
    assert body == {"order": placed.id, "confirmation": 1}
    assert Product.objects.get().stock == 0
    expected_payload = {
        "order_id": placed.id,
        "email": "ada@example.com",
        "product": "kettle",
        "quantity": 2,
    }
    assert work_items(shop_database, run_in_fresh_loop) == [
        ("shop.confirm_order", "queued", expected_payload)
    ]

    outcome = run_the_shops_worker_once(shop_database, run_in_fresh_loop)

    assert outcome is not None
    assert (outcome.item_id, outcome.status) == (1, ExecutionStatus.SUCCEEDED)
    assert [(sent.subject, sent.to) for sent in mail.outbox] == [
        (f"Order {placed.id} is placed", ["ada@example.com"])
    ]
    assert work_items(shop_database, run_in_fresh_loop) == [
        ("shop.confirm_order", "succeeded", expected_payload)
    ]


def test_a_short_stock_rolls_back_the_order_and_its_confirmation(
    shop: Client, shop_database: str, run_in_fresh_loop: RunInFreshLoop
) -> None:
    from orders.models import Order, Product

    status, body = order(shop, 3)

    assert (status, body) == (409, {"error": "only 2 kettle left"})
    assert not Order.objects.exists()
    assert Product.objects.get().stock == 2
    assert work_items(shop_database, run_in_fresh_loop) == []
    assert run_the_shops_worker_once(shop_database, run_in_fresh_loop) is None
    assert mail.outbox == []


def test_orders_after_a_rolled_back_one_still_get_their_confirmation(
    shop: Client, shop_database: str, run_in_fresh_loop: RunInFreshLoop
) -> None:
    assert order(shop, 3)[0] == 409
    assert order(shop, 1)[0] == 201
    assert order(shop, 1)[0] == 201
    assert order(shop, 1)[0] == 409

    kinds_and_states = [item[:2] for item in work_items(shop_database, run_in_fresh_loop)]
    assert kinds_and_states == [("shop.confirm_order", "queued")] * 2
