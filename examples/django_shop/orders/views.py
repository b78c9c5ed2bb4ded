"""Placing an order: the order, its confirmation and the stock it takes, all or nothing."""

from __future__ import annotations

import json

from django.db import transaction
from django.db.models import F
from django.http import HttpRequest, JsonResponse
from django.views.decorators.http import require_GET, require_POST
from django_tasks.exceptions import TaskResultDoesNotExist

from orders.models import Order, Product
from orders.tasks import confirm_order


class OutOfStock(Exception):
    """Fewer items left than ordered: the whole order is undone."""


@require_POST
def place_order(request: HttpRequest) -> JsonResponse:
    """``POST /orders`` with ``{"product": name, "quantity": n, "email": address}``.

    201 with the order's id and its confirmation's task id; 409 when the stock is
    short, and then neither the order nor its confirmation exists.
    """
    wanted = json.loads(request.body)
    product = Product.objects.get(name=wanted["product"])
    try:
        with transaction.atomic():
            order = Order.objects.create(
                product=product, quantity=wanted["quantity"], email=wanted["email"]
            )
            confirmation = confirm_order.enqueue(order.id)
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


@require_GET
def confirmation(request: HttpRequest, task_id: str) -> JsonResponse:
    """``GET /confirmations/<id>``: where the confirmation task is, and what it returned."""
    try:
        result = confirm_order.get_result(task_id)
    except TaskResultDoesNotExist:
        return JsonResponse({"error": f"no confirmation {task_id}"}, status=404)
    return JsonResponse(
        {
            "status": result.status,
            "attempts": result.attempts,
            "returned": result.return_value if result.status == "SUCCESSFUL" else None,
            "errors": [error.exception_class_path for error in result.errors],
        }
    )
