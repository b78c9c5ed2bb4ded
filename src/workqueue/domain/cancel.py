"""Cancel and requeue: what an operator's request did, and what a heartbeat answers.

A cancel of a queued item ends it ``cancelled`` at once. A running item is
cancelled by its holder: the request is recorded on the row, the holder's next
heartbeat answers :attr:`HeartbeatAnswer.CANCEL_REQUESTED`, and the holder
cancels its handler and writes ``cancelled``, fenced by its lease. A holder that
died leaves the item to lease recovery, which ends it ``cancelled`` (docs/adr/0018).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

from workqueue.domain.errors import InvalidCancelReasonError
from workqueue.domain.status import WorkStatus
from workqueue.domain.storable import unstorable_character

__all__ = [
    "DEFAULT_CANCEL_REASON",
    "MAX_CANCEL_REASON_LENGTH",
    "CancelOutcome",
    "HeartbeatAnswer",
    "RequeueOutcome",
    "RequeueResult",
    "cancel_reason_text",
    "checked_cancel_reason",
]

DEFAULT_CANCEL_REASON = "cancelled by an operator"
"""The reason stored in ``error`` when a cancel gives none."""


MAX_CANCEL_REASON_LENGTH = 1000
"""The longest cancel reason a store takes, in characters: a line or two for an operator."""


def checked_cancel_reason(reason: str) -> str:
    """``reason``, if a store can hold it as a cancel's reason.

    Every store's ``cancel`` checks its reason with this before it writes anything.

    :raises InvalidCancelReasonError: if it holds a NUL character or a lone
        surrogate, or is longer than :data:`MAX_CANCEL_REASON_LENGTH` characters.
    """
    if len(reason) > MAX_CANCEL_REASON_LENGTH:
        raise InvalidCancelReasonError(
            f"a cancel reason is at most {MAX_CANCEL_REASON_LENGTH} characters, not {len(reason)}"
        )
    character = unstorable_character(reason)
    if character is not None:
        raise InvalidCancelReasonError(f"a cancel reason cannot hold {character}")
    return reason


def cancel_reason_text(reason: str | None) -> str:
    """The reason a cancel stores: ``reason`` stripped, or the default when blank."""
    if reason is None or not reason.strip():
        return DEFAULT_CANCEL_REASON
    return reason.strip()


class HeartbeatAnswer(Enum):
    """What a heartbeat found: the lease held, held with a cancel requested, or lost.

    Truthy while the lease is held (the heartbeat extended it), so a caller that
    only asks whether the lease is held reads it as the bool it used to be.
    """

    HELD = "held"
    CANCEL_REQUESTED = "cancel requested"
    LOST = "lost"

    def __bool__(self) -> bool:
        return self is not HeartbeatAnswer.LOST


class CancelOutcome(Enum):
    """What :meth:`~workqueue.domain.WorkStore.cancel` did.

    - ``CANCELLED``: the item was queued and is now cancelled;
    - ``REQUESTED``: the item is running; the request is recorded for its holder;
    - ``ALREADY_REQUESTED``: the item is running and a cancel was already requested;
    - ``FINISHED``: the item had already finished; nothing changed;
    - ``UNKNOWN``: no item has this id.
    """

    CANCELLED = "cancelled"
    REQUESTED = "requested"
    ALREADY_REQUESTED = "already requested"
    FINISHED = "finished"
    UNKNOWN = "unknown"

    def took_effect(self) -> bool:
        """True when the cancel changed the item (cancelled it, or recorded the request)."""
        return self in (CancelOutcome.CANCELLED, CancelOutcome.REQUESTED)


class RequeueOutcome(Enum):
    """What a requeue did.

    - ``REQUEUED``: a new queued item with the old one's kind, payload and dedup key;
    - ``ABSORBED``: a queued item with the same kind and dedup key absorbed it;
    - ``REFUSED``: the item is neither failed nor cancelled; nothing was written;
    - ``UNKNOWN``: no item has this id.
    """

    REQUEUED = "requeued"
    ABSORBED = "absorbed"
    REFUSED = "refused"
    UNKNOWN = "unknown"

    def took_effect(self) -> bool:
        """True when a queued item now does the work again (new, or the twin that absorbed it)."""
        return self in (RequeueOutcome.REQUEUED, RequeueOutcome.ABSORBED)


@dataclass(frozen=True, slots=True)
class RequeueResult:
    """What a requeue did.

    :param outcome: what happened.
    :param queued_id: the queued item that does the work again (new or absorbing).
    :param status: the status of the item asked for (None when unknown).
    """

    outcome: RequeueOutcome
    queued_id: int | None = None
    status: WorkStatus | None = None
