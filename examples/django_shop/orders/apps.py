"""The orders app."""

from __future__ import annotations

from django.apps import AppConfig


class OrdersConfig(AppConfig):
    name = "orders"
