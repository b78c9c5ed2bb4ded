"""Handlers that say too much: huge or unstorable errors, huge or unstorable progress.

What a handler says is bounded by the executor's settings and made storable; the
item still ends the way the handler did (failed when it raised, succeeded when it
returned), and the next item runs as usual.
"""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import JsonValue

from unit.bad_input.bad_payloads import Parcel, ParcelKind, json_values
from workqueue.adapters.memory import InMemoryState, InMemoryWorkQueue, InMemoryWorkStore
from workqueue.adapters.testing import FakeClock
from workqueue.application import ExecutionStatus, ExecutorSettings, KindRegistry, WorkExecutor
from workqueue.domain import WorkContext, WorkHandler, WorkStatus, unstorable_character

MAX_ERROR_LENGTH = 300
MAX_PROGRESS_BYTES = 500
ANY_TEXT = st.text(alphabet=st.characters() | st.characters(categories=["Cs"]))


class Loudmouth(WorkHandler[Parcel]):
    """Reports each snapshot it is given, noting which were refused, then raises or returns."""

    def __init__(self) -> None:
        self.snapshots: list[JsonValue] = []
        self.error: BaseException | None = None
        self.accepted: list[JsonValue] = []
        self.refusals: list[str] = []

    async def handle(self, payload: Parcel, ctx: WorkContext) -> None:
        for snapshot in self.snapshots:
            try:
                ctx.report_progress(snapshot)
            except ValueError as refused:
                self.refusals.append(str(refused))
            else:
                self.accepted.append(snapshot)
        if self.error is not None:
            raise self.error


async def run_one(handler: Loudmouth) -> tuple[Any, Any]:
    """Enqueue a parcel and a second one, run both; the first's item and the second's status."""
    state, clock = InMemoryState(), FakeClock()
    queue, store = InMemoryWorkQueue(state, clock), InMemoryWorkStore(state, clock)
    executor = WorkExecutor(
        store,
        KindRegistry(ParcelKind, [Parcel], [handler]),
        clock,
        worker_id="w",
        settings=ExecutorSettings(
            max_error_length=MAX_ERROR_LENGTH, max_progress_bytes=MAX_PROGRESS_BYTES
        ),
    )
    first = (await queue.enqueue(Parcel(label="first"))).id
    second = (await queue.enqueue(Parcel(label="second"))).id
    outcome = await executor.run_next()
    assert outcome is not None
    handler.snapshots, handler.error = [], None
    await executor.run_next()
    after = await store.get(second)
    assert after is not None
    return await store.get(first), after.status


# A megabyte-long message takes longer than Hypothesis's default deadline under load.
@settings(deadline=None)
@given(message=ANY_TEXT, repeat=st.sampled_from([1, 1000, 100_000]))
async def test_a_huge_or_unstorable_error_is_stored_bounded_and_the_next_item_runs(
    message: str, repeat: int
) -> None:
    handler = Loudmouth()
    handler.error = RuntimeError(message * repeat)

    item, next_status = await run_one(handler)

    assert item.status is WorkStatus.FAILED
    assert item.error.startswith("RuntimeError")
    assert len(item.error) <= MAX_ERROR_LENGTH
    assert unstorable_character(item.error) is None
    assert next_status is WorkStatus.SUCCEEDED


@given(snapshots=st.lists(json_values() | ANY_TEXT | st.just("x" * 10_000), max_size=4))
async def test_progress_is_the_last_accepted_snapshot_within_its_limit_and_storable(
    snapshots: list[JsonValue],
) -> None:
    handler = Loudmouth()
    handler.snapshots = snapshots

    item, next_status = await run_one(handler)

    assert item.status is WorkStatus.SUCCEEDED
    assert len(handler.accepted) + len(handler.refusals) == len(snapshots)
    last = handler.accepted[-1] if handler.accepted else None
    assert item.progress == json.loads(json.dumps(last))
    encoded = json.dumps(item.progress, ensure_ascii=False, separators=(",", ":"))
    assert len(encoded.encode()) <= MAX_PROGRESS_BYTES
    assert unstorable_character(encoded) is None
    assert next_status is WorkStatus.SUCCEEDED


async def test_a_snapshot_over_the_limit_is_refused_naming_the_limit_and_the_last_one_kept() -> (
    None
):
    handler = Loudmouth()
    handler.snapshots = [{"done": 1}, {"blob": "x" * MAX_PROGRESS_BYTES}]

    item, _ = await run_one(handler)

    assert item.status is WorkStatus.SUCCEEDED
    assert item.progress == {"done": 1}
    (refusal,) = handler.refusals
    assert "max_progress_bytes" in refusal
    assert f"is {MAX_PROGRESS_BYTES + 11} bytes" in refusal


async def test_an_uncaught_refusal_fails_the_item_with_the_reason_and_the_next_item_runs() -> None:
    class Careless(WorkHandler[Parcel]):
        async def handle(self, payload: Parcel, ctx: WorkContext) -> None:
            if payload.label == "first":
                ctx.report_progress({"blob": "x" * MAX_PROGRESS_BYTES})

    state, clock = InMemoryState(), FakeClock()
    queue, store = InMemoryWorkQueue(state, clock), InMemoryWorkStore(state, clock)
    executor = WorkExecutor(
        store,
        KindRegistry(ParcelKind, [Parcel], [Careless()]),
        clock,
        worker_id="w",
        settings=ExecutorSettings(max_progress_bytes=MAX_PROGRESS_BYTES),
    )
    first = (await queue.enqueue(Parcel(label="first"))).id
    await queue.enqueue(Parcel(label="second"))

    outcomes = [await executor.run_next(), await executor.run_next()]

    assert [outcome.status for outcome in outcomes if outcome] == [
        ExecutionStatus.FAILED,
        ExecutionStatus.SUCCEEDED,
    ]
    item = await store.get(first)
    assert item is not None
    assert item.error is not None
    assert item.error.startswith("ValueError: progress snapshot is ")
    assert "the limit (max_progress_bytes) is 500" in item.error
