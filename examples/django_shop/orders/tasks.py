"""The shop's task: confirming an order by mail, run by workqueue's worker.

A plain Django task (``django.tasks`` on Django 6, the ``django_tasks`` backport
on 5.2): the shop declares it, the view enqueues it, and ``workqueue worker --app
workqueue.django`` runs it, retrying as the ``mail`` queue's policy says
(``shop_site/settings.py``).
"""

from __future__ import annotations

from django.core.mail import send_mail
from django_tasks import task

from orders.models import Order


@task(queue_name="mail")
def confirm_order(order_id: int) -> dict[str, str]:
    """Mail the customer that their order is placed; to whom it went."""
    order = Order.objects.select_related("product").get(id=order_id)
    send_mail(
        f"Order {order.id} is placed",
        f"{order.quantity} x {order.product.name}, on its way soon.",
        None,
        [order.email],
    )
    return {"sent_to": order.email}
