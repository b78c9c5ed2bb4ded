"""The WorkContext a running handler is given: its item, and the progress it reports."""

from __future__ import annotations

import re

from pydantic import JsonValue

from workqueue.domain import SNAPSHOT_JSON, ProgressSnapshot, WorkItem

__all__ = ["DEFAULT_MAX_PROGRESS_BYTES", "ExecutionContext", "checked_json"]

DEFAULT_MAX_PROGRESS_BYTES = 65536
"""The largest progress snapshot a handler may report by default, in bytes of JSON."""

# An escaped NUL that is not itself an escaped backslash followed by "u0000":
# PostgreSQL's jsonb refuses \u0000, so a snapshot holding one could never be written.
_ESCAPED_NUL = re.compile(r"(?<!\\)(?:\\\\)*\\u0000")


class ExecutionContext:
    """One attempt's view of its item, given to the handler (a
    :class:`~workqueue.domain.WorkContext`).

    The executor writes :attr:`snapshot` at every heartbeat and when it records the
    outcome, so what the handler reports last is what the item keeps.

    Handler tests may build one directly::

        ctx = ExecutionContext(item_id=1, attempt=1, kind="token_cleanup")

    :raises ValueError: if ``max_progress_bytes`` is not positive.
    """

    __slots__ = ("_attempt", "_item_id", "_kind", "_max_progress_bytes", "_snapshot")

    def __init__(
        self,
        *,
        item_id: int,
        attempt: int,
        kind: str,
        progress: JsonValue = None,
        max_progress_bytes: int = DEFAULT_MAX_PROGRESS_BYTES,
    ) -> None:
        if max_progress_bytes <= 0:
            raise ValueError(f"max_progress_bytes must be positive, not {max_progress_bytes!r}")
        self._item_id = item_id
        self._attempt = attempt
        self._kind = kind
        self._snapshot = ProgressSnapshot.of_value(progress)
        self._max_progress_bytes = max_progress_bytes

    @classmethod
    def for_item(cls, item: WorkItem, *, max_progress_bytes: int) -> ExecutionContext:
        """The context of a claimed ``item``, starting from the progress an earlier attempt left."""
        return cls(
            item_id=item.id,
            attempt=item.attempt,
            kind=item.kind,
            progress=item.progress,
            max_progress_bytes=max_progress_bytes,
        )

    @property
    def item_id(self) -> int:
        """The id of the item being handled."""
        return self._item_id

    @property
    def attempt(self) -> int:
        """Which attempt this is (1 for the first claim)."""
        return self._attempt

    @property
    def kind(self) -> str:
        """The item's kind name."""
        return self._kind

    @property
    def progress(self) -> JsonValue:
        """The latest snapshot: this attempt's last report, else what an earlier attempt left."""
        return self._snapshot.value()

    @property
    def snapshot(self) -> ProgressSnapshot:
        """The latest snapshot as the store is sent it: encoded once, whatever writes it."""
        return self._snapshot

    def report_progress(self, snapshot: JsonValue) -> None:
        """Replace the progress snapshot; the next heartbeat writes it to the item.

        The snapshot is kept as it will read back from the store: a JSON copy, so a
        handler that mutates its object afterwards changes nothing, and keys that
        JSON turns into strings are strings here too. It is encoded here, once: the
        heartbeats and the outcome send that text.

        :raises ValueError: if the snapshot is not JSON (NaN, infinity, a value JSON
            cannot hold, a cycle), contains a NUL character, or its JSON is larger than
            the context's ``max_progress_bytes``. The previous snapshot stays.
        """
        self._snapshot = checked_json(snapshot, self._max_progress_bytes, "progress snapshot")

    def __repr__(self) -> str:
        return (
            f"ExecutionContext(item_id={self._item_id}, attempt={self._attempt}, "
            f"kind={self._kind!r})"
        )


def checked_json(value: JsonValue, max_bytes: int, what: str) -> ProgressSnapshot:
    """``value`` encoded once, if a store can hold it and it is no larger than ``max_bytes``.

    :param what: what the value is, as errors name it ("progress snapshot", "result").
    :raises ValueError: if it is not JSON (NaN, infinity, a value JSON cannot
        encode), larger than ``max_bytes`` of UTF-8 JSON, or holds a NUL character.
    """
    try:
        encoded = SNAPSHOT_JSON.encode(value)
    except (TypeError, ValueError) as error:
        raise ValueError(f"{what} is not JSON: {error}") from error
    size = len(encoded.encode())
    if size > max_bytes:
        raise ValueError(
            f"{what} is {size} bytes of JSON; the limit (max_progress_bytes) is {max_bytes}"
        )
    if "\\u0000" in encoded and _ESCAPED_NUL.search(encoded):
        raise ValueError(f"{what} contains a NUL character, which the store cannot hold")
    return ProgressSnapshot.of_json(encoded)
