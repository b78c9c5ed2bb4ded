"""The kinds of work this deployment runs."""

from __future__ import annotations

from enum import Enum, StrEnum

__all__ = ["WorkKind", "kind_name"]


class WorkKind(StrEnum):
    """The production kinds. Each has one payload model and one handler.

    Application services are generic over the kind enum they are given, so
    tests and benchmarks declare enums of their own; any :class:`~enum.Enum`
    whose values are strings is a kind enum.
    """

    TOKEN_CLEANUP = "token_cleanup"  # noqa: S105 - a kind name, not a secret
    WORK_ITEM_RETENTION = "work_item_retention"


def kind_name(kind: Enum | str) -> str:
    """The text stored in ``work_items.kind`` for ``kind``.

    :raises TypeError: if ``kind`` is an enum member whose value is not a string.
    """
    if isinstance(kind, Enum):
        value = kind.value
        if not isinstance(value, str):
            raise TypeError(f"kind {kind!r} must have a string value, not {type(value).__name__}")
        return value
    return kind
