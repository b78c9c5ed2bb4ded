"""Which claim statement a store runs next, from what its last one said (docs/adr/0035).

A claim of a capped kind costs more than a plain one (its slots, a probe per kind
served, the sorts that pair items with slots), so a store runs the capped statement
only while it may take something with it:

- :attr:`ClaimPath.PLAIN` while no kind it serves is capped: the plain statements,
  which pass over capped kinds and say (``capped``) whether one is served;
- :attr:`ClaimPath.CAPPED` while a capped kind it serves has an open slot and an
  item to put in it (the statement's ``room``), and after a plain claim first
  finds a served kind capped;
- :attr:`ClaimPath.BESIDE` while capped kinds are served but none has room (their
  slots are held elsewhere, or none of their items is queued): the plain statement
  with a probe of the capped kinds' slots and queues, whose ``room`` sends the
  store back to the capped one.
"""

from __future__ import annotations

from enum import Enum

__all__ = ["ClaimPath", "path_after"]


class ClaimPath(Enum):
    """A claim statement of store.sql, by the name it has there."""

    PLAIN = "complete_and_claim_many"
    CAPPED = "complete_and_claim_capped"
    BESIDE = "complete_and_claim_beside_capped"


def path_after(path: ClaimPath, *, capped: bool, room: bool | None) -> ClaimPath:
    """The statement to run after one of ``path`` said ``capped`` and ``room``.

    :param capped: whether a kind the claims serve is capped (every statement says).
    :param room: whether a capped kind had room (the capped and beside statements
        say; None for the plain one, which does not look).
    """
    if not capped:
        return ClaimPath.PLAIN
    if path is ClaimPath.PLAIN or room:
        return ClaimPath.CAPPED
    return ClaimPath.BESIDE
