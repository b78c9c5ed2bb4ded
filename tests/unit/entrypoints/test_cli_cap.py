"""``workqueue cap KIND N`` and ``workqueue cap KIND none``: an operator bounds how many items of a
kind run at once across every worker, or lifts the bound, with one line saying the cap in force;
0 when done, 2 for bad input with nothing written."""

from __future__ import annotations

import asyncio
from datetime import timedelta

import pytest
from worker_world import PRODUCTION_KINDS, WorkerWorld

from workqueue.adapters.memory.state import StoredCap
from workqueue.domain import CapSource, KindCap, WorkItem, WorkItemRetention
from workqueue.entrypoints.commands.cap import cap_line

LEASE = timedelta(seconds=60)
RETENTION = "work_item_retention"
NO_CAP_LINE = (
    "work_item_retention has no cap: workers run as many of its items at once as they claim; "
    "a cap its policy declares is in force again from the next worker's start\n"
)


def running(world: WorkerWorld, count: int) -> list[WorkItem]:
    """``count`` items of work_item_retention enqueued and claimed: running."""

    async def claimed() -> list[WorkItem]:
        items = []
        for _ in range(count):
            await world.queue.enqueue(WorkItemRetention())
            item = await world.store.claim([RETENTION], worker_id="w-1", lease_duration=LEASE)
            assert item is not None
            items.append(item)
        return items

    return asyncio.run(claimed())


def claim(world: WorkerWorld) -> WorkItem | None:
    return asyncio.run(world.store.claim([RETENTION], worker_id="w-2", lease_duration=LEASE))


class TestSettingACap:
    def test_a_capped_kind_runs_no_more_than_its_cap_and_the_line_says_so(
        self, world: WorkerWorld
    ) -> None:
        running(world, 1)
        asyncio.run(world.queue.enqueue(WorkItemRetention()))
        world.clock.advance(1.25)

        run = world.cli("cap", RETENTION, "1")

        assert (run.status, run.out, run.err) == (
            0,
            "work_item_retention is capped at 1 running at once across every worker "
            "(set by an operator); 1 slot held now\n",
            "",
        )
        assert world.state.caps == {RETENTION: StoredCap(1, CapSource.OPERATOR, world.clock.now())}
        assert claim(world) is None

    @pytest.mark.parametrize(("count", "held"), [(0, "0 slots"), (2, "2 slots")])
    def test_the_line_counts_the_slots_held_now(
        self, world: WorkerWorld, count: int, held: str
    ) -> None:
        running(world, count)

        run = world.cli("cap", RETENTION, "3")

        assert run.out.endswith(f"(set by an operator); {held} held now\n")

    def test_an_operators_cap_replaces_the_cap_its_policy_set(self, world: WorkerWorld) -> None:
        asyncio.run(world.store.cap_kind(RETENTION, 2, source=CapSource.POLICY))

        run = world.cli("cap", RETENTION, "5")

        assert run.out.startswith(
            "work_item_retention is capped at 5 running at once across every worker "
            "(set by an operator)"
        )
        assert world.state.caps[RETENTION].source is CapSource.OPERATOR

    def test_an_unknown_kind_is_bad_input_and_caps_nothing(self, world: WorkerWorld) -> None:
        run = world.cli("cap", "work_item_retension", "3")

        assert (run.status, run.out) == (2, "")
        assert run.err.startswith(
            "workqueue: unknown kind 'work_item_retension' "
            f"(known kinds: {', '.join(PRODUCTION_KINDS)})"
        )
        assert world.state.caps == {}


class TestClearingACap:
    def test_a_cleared_kind_runs_unbounded_and_the_line_says_its_policy_returns_at_a_start(
        self, world: WorkerWorld
    ) -> None:
        running(world, 1)
        world.cli("cap", RETENTION, "1")
        asyncio.run(world.queue.enqueue(WorkItemRetention()))

        run = world.cli("cap", RETENTION, "none")

        assert (run.status, run.out, run.err) == (0, NO_CAP_LINE, "")
        assert world.state.caps == {}
        assert claim(world) is not None

    def test_clearing_a_kind_with_no_cap_says_it_has_none(self, world: WorkerWorld) -> None:
        run = world.cli("cap", RETENTION, "none")

        assert (run.status, run.out, run.err) == (0, NO_CAP_LINE, "")

    def test_any_capped_kind_is_cleared_even_one_no_application_serves_now(
        self, world: WorkerWorld
    ) -> None:
        asyncio.run(world.store.cap_kind("retired_kind", 2))

        run = world.cli("cap", "retired_kind", "none")

        assert (run.status, run.err) == (0, "")
        assert run.out.startswith("retired_kind has no cap: ")
        assert world.state.caps == {}


class TestBadInput:
    @pytest.mark.parametrize(
        ("typed", "said"),
        [
            ("0", "a cap is from 1 to 10000, not 0"),
            ("-1", "a cap is from 1 to 10000, not -1"),
            ("10001", "a cap is from 1 to 10000, not 10001"),
            ("abc", "a cap is a whole number from 1 to 10000, or none to clear it, not 'abc'"),
            ("2.5", "a cap is a whole number from 1 to 10000, or none to clear it, not '2.5'"),
            ("None", "a cap is a whole number from 1 to 10000, or none to clear it, not 'None'"),
        ],
    )
    def test_a_count_that_is_no_cap_is_one_line_and_exit_2_with_nothing_written(
        self, world: WorkerWorld, typed: str, said: str
    ) -> None:
        asyncio.run(world.store.cap_kind(RETENTION, 4))
        before = dict(world.state.caps)

        run = world.cli("cap", RETENTION, typed)

        assert (run.status, run.out, run.err) == (2, "", f"workqueue: {said}\n")
        assert world.state.caps == before

    def test_the_count_is_checked_before_the_kind_and_the_database(
        self, world: WorkerWorld
    ) -> None:
        world.schema.missing = ["0011_kind_caps"]

        run = world.cli("cap", "no_such_kind", "0")

        assert (run.status, run.err) == (2, "workqueue: a cap is from 1 to 10000, not 0\n")

    def test_a_kind_no_store_can_hold_is_bad_input_also_when_clearing(
        self, world: WorkerWorld
    ) -> None:
        run = world.cli("cap", "crawl\x00page", "none")

        assert (run.status, run.out) == (2, "")
        assert run.err.startswith("workqueue: a kind name cannot hold ")

    @pytest.mark.parametrize("typed", ["3", "none"])
    def test_a_schema_not_current_is_a_failure_and_the_cap_holds(
        self, world: WorkerWorld, typed: str
    ) -> None:
        asyncio.run(world.store.cap_kind(RETENTION, 4))
        before = dict(world.state.caps)
        world.schema.missing = ["0011_kind_caps"]

        run = world.cli("cap", RETENTION, typed)

        assert run.status == 1
        assert "workqueue migrate" in run.err
        assert world.state.caps == before


def test_status_lists_the_cap_an_operator_set(world: WorkerWorld) -> None:
    world.cli("cap", RETENTION, "3")

    run = world.cli("status")

    assert run.status == 0
    assert (
        "capped kinds: 1\n"
        "  work_item_retention at most 3 at once, 0 held now, set by an operator at "
        "2026-01-01T00:00:00Z\n"
    ) in run.out


def test_the_line_of_a_cap_its_policy_set_says_so(world: WorkerWorld) -> None:
    cap = KindCap(RETENTION, 2, CapSource.POLICY, world.clock.now(), 0)

    assert cap_line(RETENTION, cap) == (
        "work_item_retention is capped at 2 running at once across every worker "
        "(set by its policy); 0 slots held now"
    )
