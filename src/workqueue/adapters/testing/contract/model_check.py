"""Contract: random sequences of every operation keep the store in step with the model."""

from __future__ import annotations

import asyncio
import contextlib
import threading
from typing import ClassVar

from hypothesis import HealthCheck, Phase
from hypothesis import settings as Settings
from hypothesis.stateful import run_state_machine_as_test

from workqueue.adapters.testing.clock import FakeClock
from workqueue.adapters.testing.contract.backdoor import Backdoor
from workqueue.adapters.testing.contract.state_machine import StoreSubject, seeded_state_machine
from workqueue.domain import WorkQueue, WorkStore

__all__ = ["MODEL_CHECK_SETTINGS", "ModelContract"]

MODEL_CHECK_SETTINGS = Settings(
    max_examples=20,
    stateful_step_count=30,
    deadline=None,
    # Examples share the adapter's data and clock, so none is replayed from a database;
    # a failure is reported as found, not shrunk: shrinking here would replay
    # hundreds of examples on a live store. store_state_machine shrinks.
    database=None,
    phases=[Phase.explicit, Phase.generate],
    suppress_health_check=[HealthCheck.too_slow],
)
"""About a second on the in-memory store, a few on PostgreSQL."""


class ModelContract:
    """The state machine of :mod:`workqueue.adapters.testing.contract.state_machine`, on the
    suite's fixtures.

    Examples run one after another on the test's store, queue and back door,
    each after emptying the store through its own API. ``model_check_settings``
    sizes the run; an adapter may raise it. For a fresh store per example (exact
    replays, shrinking to the shortest story) use
    :func:`~workqueue.adapters.testing.contract.store_state_machine` as well.
    """

    model_check_settings: ClassVar[Settings] = MODEL_CHECK_SETTINGS

    async def test_random_operations_keep_the_store_in_step_with_the_model(
        self, queue: WorkQueue, store: WorkStore, backdoor: Backdoor, clock: FakeClock
    ) -> None:
        loop = asyncio.get_running_loop()
        machine = seeded_state_machine(
            StoreSubject(clock=clock, queue=queue, store=store, read_items=backdoor.all_items),
            loop,
        )
        finished: asyncio.Future[None] = loop.create_future()

        def report(error: BaseException | None) -> None:
            if finished.done():  # the test was given up (hung) already
                return
            if error is None:
                finished.set_result(None)
            else:
                finished.set_exception(error)

        def check() -> None:
            error: BaseException | None = None
            try:
                run_state_machine_as_test(machine, settings=self.model_check_settings)
            except BaseException as raised:
                error = raised
            # The loop is gone when the test was given up; nobody is left to tell.
            with contextlib.suppress(RuntimeError):
                loop.call_soon_threadsafe(report, error)

        # A daemon thread: if a store call hangs, the test's hang guard fails the
        # test and the thread, stuck waiting for the loop, is left behind.
        threading.Thread(target=check, name="contract-model-check", daemon=True).start()
        await finished
