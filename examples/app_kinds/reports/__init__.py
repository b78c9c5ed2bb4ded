"""An application with kinds of its own, served by the stock ``workqueue worker --app reports``."""

from __future__ import annotations

__all__: list[str] = []
