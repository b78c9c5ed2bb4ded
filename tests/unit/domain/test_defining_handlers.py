"""A handler learns the payload type it handles from its type argument."""

from __future__ import annotations

from enum import StrEnum
from typing import Generic, TypeVar

from workqueue.domain import WorkContext, WorkHandler, WorkPayload


class Chore(StrEnum):
    SWEEP = "sweep"


class Sweep(WorkPayload):
    kind = Chore.SWEEP


class TestHandlerPayloadTypes:
    def test_a_handler_learns_its_payload_type_from_its_type_argument(self) -> None:
        class SweepHandler(WorkHandler[Sweep]):
            async def handle(self, payload: Sweep, ctx: WorkContext) -> None:
                return None

        assert SweepHandler.payload_type is Sweep

    def test_a_subclass_of_a_concrete_handler_keeps_its_payload_type(self) -> None:
        class SweepHandler(WorkHandler[Sweep]):
            async def handle(self, payload: Sweep, ctx: WorkContext) -> None:
                return None

        class QuietSweepHandler(SweepHandler):
            pass

        assert QuietSweepHandler.payload_type is Sweep

    def test_a_handler_generic_over_its_payload_is_defined_without_a_payload_type(self) -> None:
        P = TypeVar("P", bound=WorkPayload)

        class LoggingHandler(WorkHandler[P], Generic[P]):
            async def handle(self, payload: P, ctx: WorkContext) -> None:
                return None

        assert not hasattr(LoggingHandler, "payload_type")
