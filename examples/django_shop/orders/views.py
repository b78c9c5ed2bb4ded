"""Placing an order: the order, its confirmation and the stock it takes, all or nothing."""

from __future__ import annotations

import json

from django.db import transaction
from django.db.models import F
from django.http import HttpRequest, JsonResponse
from django.views.decorators.http import require_POST

from orders.models import Order, Product
from orders.work import ConfirmOrder, work_queue


class OutOfStock(Exception):
    """Fewer items left than ordered: the whole order is undone."""


@require_POST
def place_order(request: HttpRequest) -> JsonResponse:
    """``POST /orders`` with ``{"product": name, "quantity": n, "email": address}``.

    201 with the order's id and its confirmation's work item; 409 when the stock
    is short, and then neither the order nor its confirmation exists.
    """
    wanted = json.loads(request.body)
    product = Product.objects.get(name=wanted["product"])
    try:
        with transaction.atomic():
            order = Order.objects.create(
                product=product, quantity=wanted["quantity"], email=wanted["email"]
            )
            confirmation = work_queue().enqueue(
                ConfirmOrder(
                    order_id=order.id,
                    email=order.email,
                    product=product.name,
                    quantity=order.quantity,
                )
            )
            # The stock is taken last, so a short one undoes what came before it:
            # the order row and the enqueued confirmation alike.
            taken = Product.objects.filter(id=product.id, stock__gte=order.quantity).update(
                stock=F("stock") - order.quantity
            )
            if not taken:
                raise OutOfStock
    except OutOfStock:
        return JsonResponse({"error": f"only {product.stock} {product.name} left"}, status=409)
    return JsonResponse({"order": order.id, "confirmation": confirmation.id}, status=201)
