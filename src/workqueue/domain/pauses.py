"""Pausing a kind: no worker claims it until it is resumed (docs/adr/0034).

An operator pauses a kind whose target is down, or whose work floods a partner;
the rest of the fleet goes on. While a kind is paused no claim takes an item of
it, whichever worker asks; its running items finish; enqueues still add items,
which wait. The pause is a row of the store, not a flag of a worker: it outlives
restarts of workers and of the database, and a worker started during it obeys it.
A resume wakes the idle workers of the kind, as an enqueue does.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from workqueue.domain.errors import InvalidPauseError
from workqueue.domain.storable import unstorable_character

__all__ = ["MAX_PAUSE_REASON_LENGTH", "KindPause", "checked_pause"]

MAX_PAUSE_REASON_LENGTH = 1000
"""The longest pause reason a store takes, in characters: a line or two for an operator."""


@dataclass(frozen=True, slots=True)
class KindPause:
    """A kind no worker claims, since when and why.

    :param kind: the paused kind.
    :param paused_at: when the pause began (the store's clock).
    :param reason: what the operator gave, or None.
    """

    kind: str
    paused_at: datetime
    reason: str | None


def checked_pause(kind: str, reason: str | None) -> str | None:
    """The reason a pause of ``kind`` stores: ``reason`` stripped, None when blank.

    Every store's ``pause_kind`` checks its arguments with this before it writes.

    :raises InvalidPauseError: if ``kind`` is blank, or either holds a character no
        store can hold (a NUL, a lone surrogate), or the reason is longer than
        :data:`MAX_PAUSE_REASON_LENGTH` characters.
    """
    if not kind.strip():
        raise InvalidPauseError("a pause names a kind")
    character = unstorable_character(kind)
    if character is not None:
        raise InvalidPauseError(f"a kind name cannot hold {character}")
    if reason is None or not reason.strip():
        return None
    if len(reason) > MAX_PAUSE_REASON_LENGTH:
        raise InvalidPauseError(
            f"a pause reason is at most {MAX_PAUSE_REASON_LENGTH} characters, not {len(reason)}"
        )
    character = unstorable_character(reason)
    if character is not None:
        raise InvalidPauseError(f"a pause reason cannot hold {character}")
    return reason.strip()
