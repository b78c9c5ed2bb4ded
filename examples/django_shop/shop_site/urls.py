"""The shop's URLs: placing an order, and reading its confirmation back."""

from __future__ import annotations

from django.urls import path
from orders.views import confirmation, place_order

urlpatterns = [
    path("orders", place_order, name="place-order"),
    path("confirmations/<str:task_id>", confirmation, name="confirmation"),
]
