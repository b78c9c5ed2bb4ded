"""The context a handler is given: who its item is, and the progress it may report."""

from __future__ import annotations

import math
from typing import Any

import pytest
from service_bench import Bench, StoreSpy, start

from work_items import running_item
from workqueue.application import ExecutionContext
from workqueue.domain import Lease, ProgressSnapshot, RunOutcome, WorkItem


def context(*, progress: Any = None, limit: int = 1000) -> ExecutionContext:
    return ExecutionContext(
        item_id=7, attempt=2, kind="alpha", progress=progress, max_progress_bytes=limit
    )


def claimed_item() -> WorkItem:
    return running_item(id=12, attempt=3, stalls=1, progress={"rows": 5})


class TestWhoTheItemIs:
    def test_a_context_starts_from_the_progress_an_earlier_attempt_left(self) -> None:
        ctx = context(progress={"rows": 10})

        assert (ctx.item_id, ctx.attempt, ctx.kind, ctx.progress) == (7, 2, "alpha", {"rows": 10})

    def test_the_context_of_a_claimed_item_is_that_items(self) -> None:
        ctx = ExecutionContext.for_item(claimed_item(), max_progress_bytes=100)

        assert (ctx.item_id, ctx.attempt, ctx.kind, ctx.progress) == (12, 3, "alpha", {"rows": 5})
        assert repr(ctx) == "ExecutionContext(item_id=12, attempt=3, kind='alpha')"


class TestAReportedSnapshot:
    def test_a_reported_snapshot_is_kept_as_the_store_will_read_it_back(self) -> None:
        snapshot: dict[Any, Any] = {"rows": [1, 2], 3: "three"}
        ctx = context()

        ctx.report_progress(snapshot)
        snapshot["rows"].append(99)

        assert ctx.progress == {"rows": [1, 2], "3": "three"}

    def test_a_snapshot_exactly_at_the_limit_is_accepted_and_one_byte_more_is_not(self) -> None:
        ctx = context(limit=10)
        at_limit = "é" * 4  # '"' + 8 bytes of UTF-8 + '"'

        ctx.report_progress(at_limit)
        with pytest.raises(
            ValueError, match=r"11 bytes of JSON; the limit \(max_progress_bytes\) is 10"
        ):
            ctx.report_progress(at_limit + "x")

        assert ctx.progress == at_limit

    def test_the_size_counted_is_that_of_compact_json(self) -> None:
        # {"a":[1,2]} is 11 bytes; with spaces after separators it would be 14.
        ctx = ExecutionContext(item_id=1, attempt=1, kind="alpha", max_progress_bytes=11)

        ctx.report_progress({"a": [1, 2]})

        assert ctx.progress == {"a": [1, 2]}

    def test_a_limit_of_one_byte_is_a_limit_and_zero_is_refused(self) -> None:
        ctx = ExecutionContext(item_id=1, attempt=1, kind="alpha", max_progress_bytes=1)
        ctx.report_progress(7)
        assert ctx.progress == 7
        with pytest.raises(ValueError, match="max_progress_bytes must be positive, not 0"):
            ExecutionContext(item_id=1, attempt=1, kind="alpha", max_progress_bytes=0)

    def test_a_context_needs_a_positive_progress_limit(self) -> None:
        with pytest.raises(ValueError, match="max_progress_bytes"):
            context(limit=0)


class TestARefusedSnapshot:
    @pytest.mark.parametrize(
        "snapshot",
        [math.nan, {"ratio": math.inf}, {"seen": {1, 2}}, object()],
        ids=["nan", "infinity", "set", "object"],
    )
    def test_a_snapshot_that_is_not_json_is_refused_and_the_previous_one_stays(
        self, snapshot: Any
    ) -> None:
        ctx = context(progress={"kept": True})

        with pytest.raises(ValueError, match="progress snapshot is not JSON"):
            ctx.report_progress(snapshot)

        assert ctx.progress == {"kept": True}

    def test_a_snapshot_that_contains_itself_is_refused(self) -> None:
        cycle: list[Any] = []
        cycle.append(cycle)

        with pytest.raises(ValueError, match="not JSON"):
            context().report_progress(cycle)

    def test_a_nul_character_is_refused_because_the_store_cannot_hold_it(self) -> None:
        with pytest.raises(ValueError, match="NUL"):
            context().report_progress({"name": "a\x00b"})

    def test_a_nul_character_in_a_snapshot_is_refused_saying_why(self) -> None:
        ctx = ExecutionContext(item_id=1, attempt=1, kind="alpha")

        with pytest.raises(ValueError) as refused:
            ctx.report_progress({"name": "a\x00b"})

        assert str(refused.value) == (
            "progress snapshot contains a NUL character, which the store cannot hold"
        )

    def test_text_that_merely_spells_an_escaped_nul_is_accepted(self) -> None:
        ctx = context()

        ctx.report_progress({"name": "\\u0000"})

        assert ctx.progress == {"name": "\\u0000"}


class TestEncodedOnce:
    def test_a_report_is_encoded_once_and_read_back_as_one_copy(self) -> None:
        ctx = context()

        ctx.report_progress({"rows": [1, 2], "note": "é"})

        assert ctx.snapshot.text() == '{"rows":[1,2],"note":"é"}'
        assert ctx.snapshot.text() is ctx.snapshot.text()
        assert ctx.progress is ctx.progress

    def test_the_progress_an_earlier_attempt_left_is_read_as_it_is(self) -> None:
        left = {"rows": 10}
        ctx = context(progress=left)

        assert ctx.progress is left
        assert ctx.snapshot.text() == '{"rows":10}'

    def test_a_refused_report_leaves_the_snapshot_sent_as_it_was(self) -> None:
        ctx = context(limit=20)
        ctx.report_progress({"rows": 1})
        sent = ctx.snapshot

        with pytest.raises(ValueError, match="max_progress_bytes"):
            ctx.report_progress({"rows": "x" * 50})

        assert ctx.snapshot is sent

    async def test_every_write_of_one_report_sends_the_same_encoded_snapshot(
        self, bench: Bench
    ) -> None:
        sent: list[tuple[str, object]] = []
        spy = StoreSpy(bench.store)

        async def heartbeat(lease: Lease, *, progress: Any, lease_duration: Any) -> bool:
            sent.append(("heartbeat", progress))
            return await bench.store.heartbeat(
                lease, progress=progress, lease_duration=lease_duration
            )

        async def finish(lease: Lease, outcome: RunOutcome) -> bool:
            sent.append((f"finish {outcome.ending}", outcome.progress))
            return await bench.store.finish(lease, outcome)

        spy.heartbeat = heartbeat  # type: ignore[method-assign]
        spy.finish = finish  # type: ignore[method-assign]
        item_id = await bench.enqueue("a")
        done = bench.script.block("a")
        run = start(bench, bench.executor(store=spy))
        await bench.clock.settle()
        bench.script.contexts["a"].report_progress({"done": 1, "note": "é"})

        await bench.clock.advance(2)
        await bench.clock.advance(2)
        done.set()
        await run

        assert [write for write, _ in sent] == ["heartbeat", "heartbeat", "finish succeeded"]
        (snapshot,) = {id(progress): progress for _, progress in sent}.values()
        assert isinstance(snapshot, ProgressSnapshot)
        assert snapshot.text() == '{"done":1,"note":"é"}'
        assert (await bench.item(item_id)).progress == {"done": 1, "note": "é"}
