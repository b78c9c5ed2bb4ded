"""The registry's edges: the exact words of a refusal, and of a payload that does not validate."""

from __future__ import annotations

from enum import Enum, IntEnum, StrEnum
from typing import Any

import pytest
from pydantic import Field, ValidationError

from application import KindRegistry, describe_validation_error
from domain import InvalidPayloadError, KindRegistryError, WorkContext, WorkHandler, WorkPayload


class Chore(StrEnum):
    SWEEP = "sweep"


class Sweep(WorkPayload):
    kind = Chore.SWEEP

    rooms: list[int] = Field(default_factory=list)
    broom: str = "wide"


class SweepHandler(WorkHandler[Sweep]):
    async def handle(self, payload: Sweep, ctx: WorkContext) -> None:
        return None


class UntypedHandler(WorkHandler[Any]):
    async def handle(self, payload: Any, ctx: WorkContext) -> None:
        return None


def refusal(kinds: type[Enum], payloads: list[Any], handlers: list[Any]) -> str:
    with pytest.raises(KindRegistryError) as refused:
        KindRegistry(kinds, payloads, handlers)
    return str(refused.value)


def test_a_kind_enum_with_a_number_value_is_refused_naming_the_member() -> None:
    class Numbered(IntEnum):
        ONE = 1

    assert refusal(Numbered, [], []) == (
        "cannot build the kind registry for "
        "test_a_kind_enum_with_a_number_value_is_refused_naming_the_member.<locals>.Numbered: "
        "kind <Numbered.ONE: 1> must have a string value, not int"
    )


def test_something_that_is_not_a_payload_class_is_refused_by_its_repr() -> None:
    message = refusal(Chore, [Sweep, "Sweep"], [SweepHandler()])

    assert message == (
        "cannot build the kind registry for Chore: 'Sweep' is not a WorkPayload subclass"
    )


def test_something_that_is_not_a_handler_is_refused_by_its_repr() -> None:
    message = refusal(Chore, [Sweep], [SweepHandler(), "handler"])

    assert message == "cannot build the kind registry for Chore: 'handler' is not a WorkHandler"


def test_every_problem_is_listed_separated_by_semicolons() -> None:
    message = refusal(Chore, [Sweep], [SweepHandler(), UntypedHandler(), 5])

    assert message == (
        "cannot build the kind registry for Chore: "
        "handler UntypedHandler has no payload_type; "
        "declare it as a subclass of WorkHandler[SomePayload]; "
        "5 is not a WorkHandler"
    )


def test_a_nested_field_is_named_by_its_dotted_path_and_each_failure_is_listed() -> None:
    registry = KindRegistry(Chore, [Sweep], [SweepHandler()])

    with pytest.raises(InvalidPayloadError) as refused:
        registry.decode("sweep", {"rooms": [1, "two"], "broom": 3})

    assert refused.value.detail == (
        "rooms.1: Input should be a valid integer, unable to parse string as an integer; "
        "broom: Input should be a valid string"
    )


def test_a_validation_error_reads_as_field_and_reason() -> None:
    class Strict(WorkPayload):
        kind = Chore.SWEEP

        rooms: int

    with pytest.raises(ValidationError) as raised:
        Strict.model_validate({"rooms": "x"})

    assert describe_validation_error(raised.value) == (
        "rooms: Input should be a valid integer, unable to parse string as an integer"
    )


def test_a_registry_contains_exactly_its_kind_names() -> None:
    registry = KindRegistry(Chore, [Sweep], [SweepHandler()])

    assert "sweep" in registry
    assert "mop" not in registry
