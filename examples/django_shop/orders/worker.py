"""The shop's worker: the stock ``workqueue worker`` serving the shop's confirmations.

Nothing here edits workqueue; the stock command runs it, on the shop's database::

    cd examples/django_shop
    WORKQUEUE_DATABASE_URL="$SHOP_DATABASE_URL" workqueue worker --app orders.worker

The handler sends its mail through Django's mail API, so the worker sets Django up
(``DJANGO_SETTINGS_MODULE``, by default ``shop_site.settings``) when it builds the
handler, at start-up. The mail goes through the backend those settings name
(``SHOP_EMAIL_BACKEND``, see ``shop_site/settings.py``). The shop keeps no refresh
tokens, so its worker neither serves nor schedules the built-in ``token_cleanup``.
"""

from __future__ import annotations

import os

import django

from orders.work import ConfirmOrder, ConfirmOrderHandler, ShopKind
from workqueue import WorkerResources, WorkQueueApp

__all__ = ["DEFAULT_SETTINGS_MODULE", "app", "confirm_order_handler"]

DEFAULT_SETTINGS_MODULE = "shop_site.settings"
"""The Django settings the worker uses when ``DJANGO_SETTINGS_MODULE`` is not set."""


def confirm_order_handler(resources: WorkerResources) -> ConfirmOrderHandler:
    """The shop's handler, with Django set up for its mail; it needs nothing of the worker's."""
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", DEFAULT_SETTINGS_MODULE)
    django.setup()
    return ConfirmOrderHandler()


app = WorkQueueApp(
    kinds=[ShopKind],
    payloads=[ConfirmOrder],
    handlers=[confirm_order_handler],
    token_cleanup=False,
)
