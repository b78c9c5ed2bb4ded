"""The worker's count line: what the items run since the last one came to.

At INFO a worker writes one line per run of items, and one per poll interval while
it drains: how many items, in how long, how they ended and of which kinds
(``ran 812 items in 5.003 s: 810 succeeded (send_digest 809, token_cleanup 1), 2
failed (send_digest)``), see :func:`count_line`. Its lanes count every item they
run into one :class:`Tally`, so a worker of several lanes still writes one line,
not one per lane. Each item's own line is DEBUG (a failure or a lost lease is
also a WARNING of its own): the outcome of every item is in the table, and a line
per success at INFO would only slow a drain of short items.
"""

from __future__ import annotations

import logging
from collections import Counter
from datetime import datetime

from workqueue.application.activity import ActivityRecorder
from workqueue.application.execution import ExecutionOutcome, ExecutionStatus
from workqueue.domain import Clock

__all__ = ["RunCounts", "Tally", "count_line"]

logger = logging.getLogger("workqueue.worker")

RunCounts = Counter[tuple[ExecutionStatus, str]]
"""Items run, counted by how they ended and their kind: one increment per item."""


def count_line(counts: RunCounts) -> tuple[str, dict[str, object]]:
    """What the worker's INFO line says of ``counts``, and its fields.

    The text gives each way items ended with its count, then the kinds that ended
    so, the most frequent first: ``810 succeeded (send_digest 809, token_cleanup 1),
    2 failed (send_digest)`` (a kind alone there is not counted again). The fields
    are the count of each way (``succeeded``: 810) and ``by_kind``, each kind's
    counts by how its items ended (``{"send_digest": {"succeeded": 809, "failed": 2}}``).
    """
    ended: dict[str, dict[str, int]] = {}
    by_kind: dict[str, dict[str, int]] = {}
    for (status, kind), count in counts.items():
        ended.setdefault(status.value, {})[kind] = count
        by_kind.setdefault(kind, {})[status.value] = count
    parts: list[str] = []
    fields: dict[str, object] = {}
    for status in ExecutionStatus:
        kinds = ended.get(status.value)
        if kinds is None:
            continue
        total = sum(kinds.values())
        fields[status.value] = total
        ranked = sorted(kinds.items(), key=lambda kind_count: (-kind_count[1], kind_count[0]))
        named = ranked[0][0] if len(ranked) == 1 else ", ".join(f"{k} {n}" for k, n in ranked)
        parts.append(f"{total} {status.value} ({named})")
    fields["by_kind"] = {kind: by_kind[kind] for kind in sorted(by_kind)}
    return ", ".join(parts), fields


class Tally:
    """The items a worker's lanes ran since its last count line, and that line.

    A stretch of items begins when a run of items begins (:meth:`begin`: the first
    lane of a worker whose lanes all slept is woken) and ends with each line
    (:meth:`log`), which starts the next stretch of a run still going on.

    :param clock: what the stretch is timed on.
    :param activity: also counts each item, by minute, for the charts (docs/adr/0040).
    """

    def __init__(self, clock: Clock, activity: ActivityRecorder | None = None) -> None:
        self._clock = clock
        self._activity = activity
        self._counts: RunCounts = Counter()
        # When the stretch counted began; set by begin() before the first item is added.
        self._began: datetime

    def begin(self) -> None:
        """A run of items begins: the next line counts from now."""
        self._began = self._clock.now()

    def add(self, outcome: ExecutionOutcome) -> None:
        """Count one item run."""
        self._counts[outcome.status, outcome.kind] += 1
        if self._activity is not None:
            self._activity.add(outcome)

    def log(self) -> None:
        """Log what the items run since the stretch began came to, if any; start a new one.

        The line says how many items, in how long, how they ended and of which kinds
        (see :func:`count_line`). With no item counted it logs nothing, and the
        stretch goes on: a long item's line counts from when its run began.
        """
        items = self._counts.total()
        if not items:
            return
        now = self._clock.now()
        text, fields = count_line(self._counts)
        seconds = (now - self._began).total_seconds()
        logger.info(
            "ran %d %s in %.3f s: %s",
            items,
            "item" if items == 1 else "items",
            seconds,
            text,
            extra={"items": items, "seconds": seconds, **fields},
        )
        self._counts = Counter()
        self._began = now
