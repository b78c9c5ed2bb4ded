"""A product with stock, and an order of some of it."""

from __future__ import annotations

from django.db import models


class Product(models.Model):
    name = models.CharField(max_length=100, unique=True)
    stock = models.PositiveIntegerField()


class Order(models.Model):
    product = models.ForeignKey(Product, on_delete=models.PROTECT)
    quantity = models.PositiveIntegerField()
    email = models.EmailField()
    placed_at = models.DateTimeField(auto_now_add=True)
