"""The Django shop (examples/django_shop): an order and its confirmation task, all or nothing.

A real Django project on psycopg 3 and a real PostgreSQL, its tasks on workqueue
(``TASKS`` names ``workqueue.django.WorkQueueBackend``): the view writes the order
and enqueues its confirmation with ``confirm_order.enqueue`` inside
``transaction.atomic()``, and takes the stock last. Requests go through Django's
test client (the project's whole request handling). A worker process runs the
committed confirmation in test_django_shop_worker.py.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from django.core import mail
from django.db import connections
from django.test import Client

from integration.django_tasks_site import set_django_up

pytestmark = pytest.mark.postgres


@pytest.fixture
def shop(migrated_database_factory: Callable[[str], str]) -> Iterator[Client]:
    """The shop with 2 kettles in stock, no order, no work item, no mail."""
    set_django_up(migrated_database_factory)
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


def work_items() -> list[tuple[str, str, Any]]:
    with connections["default"].cursor() as cursor:
        cursor.execute("SELECT kind, status, payload::text FROM work_items ORDER BY id")
        return [(kind, status, json.loads(payload)) for kind, status, payload in cursor.fetchall()]


def test_an_order_and_its_confirmation_task_commit_together(shop: Client) -> None:
    from orders.models import Order, Product

    status, body = order(shop, 2)

    assert status == 201
    placed = Order.objects.get()
    assert body == {"order": placed.id, "confirmation": "1"}
    assert Product.objects.get().stock == 0
    assert work_items() == [
        (
            "django.mail",
            "queued",
            {"task": "orders.tasks.confirm_order", "args": [placed.id], "kwargs": {}},
        )
    ]
    response = shop.get("/confirmations/1")
    assert (response.status_code, response.json()) == (
        200,
        {"status": "READY", "attempts": 0, "returned": None, "errors": []},
    )
    assert mail.outbox == []


def test_a_short_stock_rolls_back_the_order_and_its_confirmation(shop: Client) -> None:
    from orders.models import Order, Product

    status, body = order(shop, 3)

    assert (status, body) == (409, {"error": "only 2 kettle left"})
    assert not Order.objects.exists()
    assert Product.objects.get().stock == 2
    assert work_items() == []
    assert shop.get("/confirmations/1").status_code == 404


def test_orders_after_a_rolled_back_one_still_get_their_confirmation(shop: Client) -> None:
    assert order(shop, 3)[0] == 409
    assert order(shop, 1)[0] == 201
    assert order(shop, 1)[0] == 201
    assert order(shop, 1)[0] == 409

    assert [item[:2] for item in work_items()] == [("django.mail", "queued")] * 2
