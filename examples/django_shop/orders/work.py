"""The shop's own kind of work: confirming an order by mail.

The kind, its payload and its handler belong to the application, not to
workqueue: the queue only needs them to be a WorkPayload and a WorkHandler.
"""

from __future__ import annotations

from enum import StrEnum

from asgiref.sync import sync_to_async
from django.core.mail import send_mail
from django.db import connection

from workqueue.adapters.clock import SystemClock
from workqueue.adapters.psycopg import PsycopgWorkQueue
from workqueue.application import KindRegistry
from workqueue.domain import WorkContext, WorkHandler, WorkPayload


class ShopKind(StrEnum):
    CONFIRM_ORDER = "shop.confirm_order"


class ConfirmOrder(WorkPayload):
    """Mail the customer that their order is placed. Carries what the mail says."""

    kind = ShopKind.CONFIRM_ORDER

    order_id: int
    email: str
    product: str
    quantity: int


class ConfirmOrderHandler(WorkHandler[ConfirmOrder]):
    async def handle(self, payload: ConfirmOrder, ctx: WorkContext) -> None:
        await sync_to_async(send_mail)(
            f"Order {payload.order_id} is placed",
            f"{payload.quantity} x {payload.product}, on its way soon.",
            None,
            [payload.email],
        )


def shop_registry() -> KindRegistry[ShopKind]:
    """What a worker for the shop runs: its kinds, their payloads and handlers."""
    return KindRegistry(ShopKind, [ConfirmOrder], [ConfirmOrderHandler()])


def work_queue() -> PsycopgWorkQueue:
    """A queue on Django's own connection: what it enqueues joins the open transaction."""
    connection.ensure_connection()
    return PsycopgWorkQueue(connection.connection, SystemClock())
