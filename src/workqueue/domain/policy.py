"""A kind's policy: how the runs of its items are judged and bounded, declared with its handler.

Every kind has one :class:`KindPolicy`, declared on its handler class::

    class ImportFeedHandler(WorkHandler[ImportFeed]):
        policy = KindPolicy(...)

and the kind registry returns it with the dispatch of each item, so the
executor holds it with the claim (``Claim.policy``) wherever an item's run is
decided: the verdict, the outcome write, the heartbeat. A handler that declares
none has the default, which is what part one of DESIGN.md fixes for every kind:
a failure fails the item (no retry), nothing caps or pauses the kind.

It holds nothing yet: the retry policy (attempts, backoff), the fleet-wide cap
and whatever else is a kind's own arrive here as fields, with their defaults
keeping every kind as it is (ADR 0029).
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["DEFAULT_POLICY", "KindPolicy"]


@dataclass(frozen=True, slots=True)
class KindPolicy:
    """How the runs of one kind's items are judged and bounded (see the module's docstring)."""


DEFAULT_POLICY = KindPolicy()
"""The policy of a kind whose handler declares none."""
