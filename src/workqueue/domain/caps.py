"""A fleet-wide cap per kind: at most N of its items ``running`` at once (docs/adr/0035).

An operator whose import floods a partner's API bounds how many of the kind run
at once across every worker, machine and lane; a kind's policy may declare it
(``KindPolicy(max_running=N)``). The cap is N slots of the store: a claim of the
kind takes a free slot with the item, in the same write, and the slot is free
again in the same write as the run ends, however it ends (a success, a failure,
a retry, a release, lease recovery after a worker died). Items over the cap stay
queued, in claim order.

Setting a cap counts the kind's running items against it: they take the first
slots, in id order. Lowering a cap below the running count lets those items
finish; the ones beyond the new cap hold no slot, so until they have finished
up to that many more run. Clearing a cap frees the kind at once.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from datetime import datetime

from workqueue.domain.errors import InvalidCapError
from workqueue.domain.storable import unstorable_character

__all__ = ["MAX_CAP", "CapSource", "KindCap", "cap_stays", "checked_cap"]

MAX_CAP = 10_000
"""The largest cap a store takes: far past any fleet's lanes, and a bound on its slots."""


class CapSource(enum.StrEnum):
    """Who set a cap: a kind's policy, written as a worker starts, or an operator.

    An operator's cap wins: a worker starting later does not overwrite it with its
    policy's. Clearing it (``workqueue cap KIND none``) hands the kind back to its
    policy at the next worker's start.
    """

    POLICY = "policy"
    OPERATOR = "operator"


@dataclass(frozen=True, slots=True)
class KindCap:
    """A kind's cap, who set it and when, and how many of its slots are held now.

    :param kind: the capped kind.
    :param max_running: at most this many of its items run at once.
    :param source: who set it.
    :param set_at: when (the store's clock).
    :param running: the slots held now: the kind's running items that count.
    """

    kind: str
    max_running: int
    source: CapSource
    set_at: datetime
    running: int


def checked_cap(kind: str, max_running: int | None) -> None:
    """Check a cap before a store writes it (every store's ``cap_kind`` calls this).

    :raises InvalidCapError: if ``kind`` is blank or holds a character no store can
        hold, or ``max_running`` is not an integer from 1 to :data:`MAX_CAP`.
    """
    if not kind.strip():
        raise InvalidCapError("a cap names a kind")
    character = unstorable_character(kind)
    if character is not None:
        raise InvalidCapError(f"a kind name cannot hold {character}")
    if max_running is None:
        return
    if type(max_running) is not int:
        raise InvalidCapError(f"a cap is a whole number, not {type(max_running).__name__}")
    if not 1 <= max_running <= MAX_CAP:
        raise InvalidCapError(f"a cap is from 1 to {MAX_CAP}, not {max_running}")


def cap_stays(current: KindCap | None, max_running: int | None, source: CapSource) -> bool:
    """Whether setting ``max_running`` (None: clearing) from ``source`` leaves the cap in
    force, ``current``, as it is; every store's ``cap_kind`` writes nothing then.

    A policy's cap never changes an operator's; the same cap from the same source
    again, or clearing a kind that has none, changes nothing.
    """
    if current is None:
        return max_running is None
    if source is CapSource.POLICY and current.source is CapSource.OPERATOR:
        return True
    return (current.max_running, current.source) == (max_running, source)
