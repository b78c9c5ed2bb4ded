"""How every report of workqueue writes a moment: ISO 8601 in UTC with a ``Z``.

One owner for the CLI's text and JSON (``status``, ``show``, ``schedules``) and the
web view's documents, so a time reads the same wherever an operator meets it.
"""

from __future__ import annotations

from datetime import datetime
from typing import Literal

__all__ = ["iso_timestamp"]


def iso_timestamp(
    moment: datetime | None, *, timespec: Literal["auto", "seconds"] = "auto"
) -> str | None:
    """``moment`` (in UTC) as ISO 8601 with a ``Z``, to ``timespec``; None stays None."""
    if moment is None:
        return None
    return moment.isoformat(timespec=timespec).replace("+00:00", "Z")
