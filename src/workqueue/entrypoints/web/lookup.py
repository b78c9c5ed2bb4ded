"""Finding items on the overview: an item looked up by its id or its dedup key, the lists
filtered by kind and status.

``GET /find?q=42`` (or ``#42``) goes to item 42's page. Any other ``q`` is taken as
a dedup key, matched exactly (no prefix, no folding of case or spaces), among
items of every kind and status: one item with it goes to that item's page; several
are listed newest first (the newest :data:`FOUND_SHOWN`); none is a 404 saying no
item has that id or dedup key. A key that is all digits reads as an id here:
``/api/items?dedup_key=`` finds it. A ``q`` that can be neither (empty, blank,
longer than a dedup key may be, a NUL character) is a 400.

The overview's ``status`` parameter shows only the list that holds that status:
``queued``, ``running``, or one of the unsuccessful ones (the latest unsuccessful
items, among the latest :data:`UNSUCCESSFUL_SCANNED`, of that status). The
``kind`` filter narrows every list: the queued page is read for that kind, the
running items (every one is read, so the filter loses none) and the unsuccessful
ones are narrowed here.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from starlette.requests import Request

from workqueue.domain import (
    UNSUCCESSFUL_STATUSES,
    InvalidDedupKeyError,
    WorkItem,
    WorkStatus,
    check_dedup_key,
)
from workqueue.entrypoints.web.reads import MAX_LIMIT, BadQueryError

__all__ = [
    "FOUND_SHOWN",
    "LISTED_STATUSES",
    "UNSUCCESSFUL_SCANNED",
    "ShownLists",
    "dedup_key_param",
    "looked_up",
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

FOUND_SHOWN = 50
"""Items listed for a dedup key, the newest first (the API's default ``limit`` too)."""

# An item's id as typed: digits, perhaps after a "#", as many as a bigint has at most.
_ITEM_ID = re.compile(r"#?([0-9]{1,19})")

_FIND_HELP = "q must be an item's id, such as 42, or a dedup key"


def looked_up(query: str | None) -> int | str:
    """What the find box's ``query`` names: an item's id (``42``, ``#42``, spaces
    around), or else a dedup key, ``query`` as typed.

    :raises BadQueryError: if ``query`` can be neither (None, empty or blank, or a
        text no dedup key can be: too long, a NUL character).
    """
    text = query or ""
    found = _ITEM_ID.fullmatch(text.strip())
    if found is not None:
        return int(found.group(1))
    try:
        check_dedup_key(text)
    except InvalidDedupKeyError as error:
        raise BadQueryError(f"{_FIND_HELP}; {error}") from None
    return text


def dedup_key_param(request: Request) -> str:
    """The ``dedup_key`` parameter, exactly as given (no spaces stripped).

    :raises BadQueryError: if it is absent, or no dedup key can be it.
    """
    text = request.query_params.get("dedup_key")
    if text is None:
        raise BadQueryError("dedup_key must be given: the dedup key of the items to find")
    try:
        check_dedup_key(text)
    except InvalidDedupKeyError as error:
        raise BadQueryError(f"dedup_key: {error}") from None
    return text


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
