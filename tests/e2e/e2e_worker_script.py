"""``workqueue`` with one extra, test-only kind, for the end-to-end tests.

Runs the production CLI (``workqueue.entrypoints.cli.main``) with a container whose
registry serves only the kinds below (its parts overridden) and which schedules nothing; every other
provider is production's. Production code knows nothing of these kinds.

- ``e2e_nap``: reports progress, then sleeps ``seconds`` (cancellable).
- ``e2e_stubborn``: like nap, but ignores cancellation, so a graceful stop
  cannot finish: only a forced exit ends the process.

Usage: ``python e2e_worker_script.py worker`` or ``... enqueue e2e_nap``.
"""

from __future__ import annotations

import asyncio
import sys
from enum import StrEnum

from dependency_injector import providers

from workqueue.domain import Clock, WorkContext, WorkHandler, WorkPayload
from workqueue.entrypoints.cli import main
from workqueue.entrypoints.worker.container import WorkerContainer, build_container
from workqueue.entrypoints.worker.settings import WorkerSettings


class E2EKind(StrEnum):
    NAP = "e2e_nap"
    STUBBORN = "e2e_stubborn"


class Nap(WorkPayload):
    kind = E2EKind.NAP
    seconds: float = 60.0


class Stubborn(WorkPayload):
    kind = E2EKind.STUBBORN
    seconds: float = 60.0


class NapHandler(WorkHandler[Nap]):
    def __init__(self, clock: Clock) -> None:
        self._clock = clock

    async def handle(self, payload: Nap, ctx: WorkContext) -> None:
        ctx.report_progress({"napping": True})
        await self._clock.sleep(payload.seconds)


class StubbornHandler(WorkHandler[Stubborn]):
    def __init__(self, clock: Clock) -> None:
        self._clock = clock

    async def handle(self, payload: Stubborn, ctx: WorkContext) -> None:
        ctx.report_progress({"stubborn": True})
        deadline = asyncio.get_running_loop().time() + payload.seconds
        while (left := deadline - asyncio.get_running_loop().time()) > 0:
            try:
                await self._clock.sleep(left)
            except asyncio.CancelledError:
                # Deliberately refuses to stop: the test forces the exit.
                asyncio.current_task().uncancel()  # type: ignore[union-attr]


def with_e2e_kinds(settings: WorkerSettings) -> WorkerContainer:
    container = build_container(settings)
    # The parts the registry (and the enqueue's catalog) are built from.
    container.kinds.override(providers.Object([E2EKind]))
    container.payload_types.override(providers.Object([Nap, Stubborn]))
    container.handlers.override(
        providers.List(
            providers.Singleton(NapHandler, container.clock),
            providers.Singleton(StubbornHandler, container.clock),
        )
    )
    container.schedules.override(providers.Object([]))
    return container


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:], container_factory=with_e2e_kinds))
