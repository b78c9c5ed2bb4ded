"""One module per workload; each runs its workload ``settings.runs`` times on fresh databases."""

from __future__ import annotations

__all__: list[str] = []
