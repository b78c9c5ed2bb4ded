"""An executor given some of its registry's kinds claims, waits for and is woken for
those only; one given a kind its registry does not serve is refused."""

from __future__ import annotations

import asyncio
from collections.abc import Collection

import pytest
from service_bench import Bench, seconds

from workqueue.domain import WorkStatus


class TestAnExecutorGivenSomeKinds:
    async def test_it_claims_only_those_and_leaves_the_others_queued(self, bench: Bench) -> None:
        beta = await bench.enqueue("b", beta=True)
        alpha = await bench.enqueue("a")
        executor = bench.executor(kinds=["alpha"])

        first = await executor.run_next()
        second = await executor.run_next()

        assert first is not None
        assert (first.item_id, second) == (alpha, None)
        assert (await bench.item(beta)).status is WorkStatus.QUEUED
        assert executor.kinds == {"alpha"}

    async def test_it_waits_only_for_the_next_item_of_those_kinds(self, bench: Bench) -> None:
        now = bench.clock.now()
        await bench.enqueue("b", beta=True, delay=30)
        await bench.enqueue("a", delay=60)

        assert await bench.executor(kinds=["alpha"]).next_run_at() == now + seconds(60)
        assert await bench.executor().next_run_at() == now + seconds(30)

    async def test_the_worker_over_it_is_woken_only_for_those_kinds(self, bench: Bench) -> None:
        asked: list[frozenset[str]] = []

        class Recording:
            async def wait_for_work(self, kinds: Collection[str]) -> None:
                asked.append(frozenset(kinds))
                await asyncio.Event().wait()

        worker = bench.worker(executor=bench.executor(kinds={"beta"}), notifications=Recording())
        running = asyncio.create_task(worker.run())
        await bench.clock.settle()

        assert asked == [{"beta"}]
        worker.stop()
        await running

    async def test_given_every_kind_of_its_registry_it_claims_them_all(self, bench: Bench) -> None:
        executor = bench.executor(kinds=("beta", "alpha"))

        assert executor.kinds == bench.registry.kinds


class TestAKindTheRegistryDoesNotServe:
    def test_is_refused_naming_each_such_kind(self, bench: Bench) -> None:
        with pytest.raises(ValueError) as refused:
            bench.executor(kinds=["alpha", "gamma", "delta"])

        assert str(refused.value) == (
            "cannot claim kinds the registry does not serve: delta, gamma"
        )
