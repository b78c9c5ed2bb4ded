"""The version of workqueue, written once: the distribution's metadata reads it from here."""

from __future__ import annotations

__version__ = "0.2.0"
