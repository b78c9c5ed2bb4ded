"""Finding items on the overview: an item looked up by its id, the lists filtered by kind
and status.

``GET /find?q=42`` (or ``#42``) goes to item 42's page. The overview's ``status``
parameter shows only the list that holds that status: ``queued``, ``running``, or
one of the unsuccessful ones (the latest unsuccessful items, among the latest
:data:`UNSUCCESSFUL_SCANNED`, of that status). The ``kind`` filter narrows every
list: the queued page is read for that kind, the running items (every one is
read, so the filter loses none) and the unsuccessful ones are narrowed here.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from starlette.requests import Request

from workqueue.domain import UNSUCCESSFUL_STATUSES, WorkItem, WorkStatus
from workqueue.entrypoints.web.reads import MAX_LIMIT, BadQueryError

__all__ = [
    "LISTED_STATUSES",
    "UNSUCCESSFUL_SCANNED",
    "ShownLists",
    "item_path",
    "narrowed",
    "shown_lists",
    "status_param",
]

LISTED_STATUSES = (
    WorkStatus.QUEUED,
    WorkStatus.RUNNING,
    *sorted(UNSUCCESSFUL_STATUSES, key=list(WorkStatus).index),
)
"""The statuses the overview lists items of, in its order (succeeded ones are only counted)."""

UNSUCCESSFUL_SCANNED = MAX_LIMIT
"""How many of the latest unsuccessful items a filtered list is chosen from."""

# An item's id as typed: digits, perhaps after a "#", as many as a bigint has at most.
_ITEM_ID = re.compile(r"#?([0-9]{1,19})")

_LOOKUP_HELP = "q must be an item's id, a whole number such as 42"


def item_path(query: str | None) -> str:
    """The page of the item whose id ``query`` is (``42``, ``#42``, spaces around).

    An id no item has, one beyond ``bigint`` too, goes to the item page's "no such item".

    :raises BadQueryError: if ``query`` is not an id (or None: no query).
    """
    found = None if query is None else _ITEM_ID.fullmatch(query.strip())
    if found is None:
        raise BadQueryError(_LOOKUP_HELP)
    return f"/items/{int(found.group(1))}"


def status_param(request: Request) -> WorkStatus | None:
    """The ``status`` filter, None when absent or blank.

    :raises BadQueryError: if it names no status the overview lists.
    """
    text = request.query_params.get("status", "").strip()
    if not text:
        return None
    for status in LISTED_STATUSES:
        if status.value == text:
            return status
    names = ", ".join(status.value for status in LISTED_STATUSES)
    raise BadQueryError(f"status must be one of {names}")


@dataclass(frozen=True, slots=True)
class ShownLists:
    """Which of the overview's lists a status filter leaves on the page."""

    running: bool
    queued: bool
    unsuccessful: bool


def shown_lists(status: WorkStatus | None) -> ShownLists:
    """Every list without a filter; else only the one that holds ``status``."""
    if status is None:
        return ShownLists(running=True, queued=True, unsuccessful=True)
    return ShownLists(
        running=status is WorkStatus.RUNNING,
        queued=status is WorkStatus.QUEUED,
        unsuccessful=status in UNSUCCESSFUL_STATUSES,
    )


def narrowed(
    items: Iterable[WorkItem],
    *,
    kind: str | None,
    status: WorkStatus | None,
    limit: int | None = None,
) -> list[WorkItem]:
    """The first ``limit`` (None: all) of ``items`` of ``kind`` and ``status`` (None: any)."""
    kept = [
        item
        for item in items
        if (kind is None or item.kind == kind) and (status is None or item.status is status)
    ]
    return kept[:limit]
