"""The kind registry serves each kind with exactly one payload class and one handler, or
refuses to exist; after that, dispatch is a lookup."""

from __future__ import annotations

from enum import Enum, IntEnum, StrEnum
from typing import Any

import pytest
from pydantic import Field, ValidationError

from workqueue.application import KindRegistry, describe_validation_error
from workqueue.domain import (
    DEFAULT_POLICY,
    InvalidPayloadError,
    KindPolicy,
    KindRegistryError,
    UnknownKindError,
    WorkContext,
    WorkHandler,
    WorkPayload,
)


class Chore(StrEnum):
    SWEEP = "sweep"
    MOP = "mop"


class Other(StrEnum):
    DUST = "dust"


class Sweep(WorkPayload):
    kind = Chore.SWEEP

    rooms: int
    broom: str = "wide"


class SweepAgain(WorkPayload):
    kind = Chore.SWEEP


class Mop(WorkPayload):
    kind = Chore.MOP

    bucket: str


class Dust(WorkPayload):
    kind = Other.DUST


class SweepHandler(WorkHandler[Sweep]):
    async def handle(self, payload: Sweep, ctx: WorkContext) -> None:
        return None


class SweepAgainHandler(WorkHandler[SweepAgain]):
    async def handle(self, payload: SweepAgain, ctx: WorkContext) -> None:
        return None


class MopHandler(WorkHandler[Mop]):
    async def handle(self, payload: Mop, ctx: WorkContext) -> None:
        return None


class DustHandler(WorkHandler[Dust]):
    async def handle(self, payload: Dust, ctx: WorkContext) -> None:
        return None


class UntypedHandler(WorkHandler[Any]):
    async def handle(self, payload: Any, ctx: WorkContext) -> None:
        return None


def chores() -> KindRegistry[Chore]:
    return KindRegistry(Chore, [Sweep, Mop], [SweepHandler(), MopHandler()])


def refusal(payloads: list[Any], handlers: list[Any], kinds: type[Enum] = Chore) -> str:
    with pytest.raises(KindRegistryError) as refused:
        KindRegistry(kinds, payloads, handlers)
    return str(refused.value)


class TestConstruction:
    def test_a_registry_serves_every_kind_of_its_enum(self) -> None:
        registry = chores()

        assert registry.kinds == frozenset({"sweep", "mop"})
        assert registry.payload_type("mop") is Mop
        assert isinstance(registry.handler("sweep"), SweepHandler)
        assert repr(registry) == "KindRegistry(Chore, kinds=['mop', 'sweep'])"

    def test_a_kind_without_a_payload_class_is_refused_naming_the_kind(self) -> None:
        message = refusal([Sweep], [SweepHandler(), MopHandler()])

        assert "kind 'mop' has no payload class" in message
        assert "sweep" not in message

    def test_a_kind_without_a_handler_is_refused_naming_the_kind(self) -> None:
        message = refusal([Sweep, Mop], [MopHandler()])

        assert "kind 'sweep' has no handler" in message

    def test_a_kind_with_two_payload_classes_is_refused_naming_the_kind_and_both(self) -> None:
        message = refusal([Sweep, SweepAgain, Mop], [SweepHandler(), MopHandler()])

        assert "kind 'sweep' has 2 payload classes: Sweep, SweepAgain" in message

    def test_a_kind_with_two_handlers_is_refused_naming_the_kind_and_both(self) -> None:
        message = refusal([Sweep, Mop], [SweepHandler(), SweepHandler(), MopHandler()])

        assert "kind 'sweep' has 2 handlers: SweepHandler, SweepHandler" in message

    def test_a_payload_of_a_kind_outside_the_enum_is_refused(self) -> None:
        message = refusal([Sweep, Mop, Dust], [SweepHandler(), MopHandler()])

        assert "payload Dust" in message
        assert "not a member of Chore" in message

    def test_a_handler_of_a_kind_outside_the_enum_is_refused(self) -> None:
        message = refusal([Sweep, Mop], [SweepHandler(), MopHandler(), DustHandler()])

        assert "handler DustHandler" in message
        assert "not a member of Chore" in message

    def test_a_handler_whose_class_has_no_payload_type_is_refused_naming_the_class(self) -> None:
        message = refusal([Sweep, Mop], [SweepHandler(), MopHandler(), UntypedHandler()])

        assert "handler UntypedHandler has no payload_type" in message

    def test_a_handler_typed_for_another_payload_class_of_its_kind_is_refused(self) -> None:
        message = refusal([Sweep, Mop], [SweepAgainHandler(), MopHandler()])

        assert "handler SweepAgainHandler handles payload SweepAgain" in message
        assert "kind's payload class is Sweep" in message

    def test_every_problem_is_listed_in_one_message(self) -> None:
        message = refusal([Sweep], [MopHandler()])

        assert "kind 'sweep' has no handler" in message
        assert "kind 'mop' has no payload class" in message

    def test_an_empty_enum_makes_an_empty_registry(self) -> None:
        class NoKinds(Enum):
            pass

        assert KindRegistry(NoKinds, [], []).kinds == frozenset()


class TestLookup:
    def test_an_unknown_kind_is_refused_listing_the_known_ones(self) -> None:
        registry = chores()

        for lookup in (registry.payload_type, registry.handler):
            with pytest.raises(UnknownKindError) as refused:
                lookup("polish")
            assert refused.value.kind == "polish"
            assert refused.value.known == ["mop", "sweep"]

    def test_decode_builds_the_kind_payload(self) -> None:
        assert chores().decode("sweep", {"rooms": 3}) == Sweep(rooms=3)

    def test_decode_of_an_unknown_kind_is_refused(self) -> None:
        with pytest.raises(UnknownKindError):
            chores().decode("polish", {})

    def test_a_decode_error_names_the_kind_and_each_failing_field_on_one_line(self) -> None:
        with pytest.raises(InvalidPayloadError) as refused:
            chores().decode("sweep", {"rooms": "several", "brush": "soft"})

        message = str(refused.value)
        assert refused.value.kind == "sweep"
        assert message.startswith("invalid payload for kind 'sweep': ")
        assert "rooms: Input should be a valid integer" in message
        assert "brush: Extra inputs are not permitted" in message
        assert "\n" not in message

    def test_a_missing_field_is_named(self) -> None:
        with pytest.raises(InvalidPayloadError, match="rooms: Field required"):
            chores().decode("sweep", {})

    def test_dispatch_gives_the_kind_handler_its_decoded_payload_and_its_default_policy(
        self,
    ) -> None:
        mop = MopHandler()
        registry = KindRegistry(Chore, [Sweep, Mop], [SweepHandler(), mop])

        handler, payload, policy = registry.dispatch("mop", {"bucket": "blue"})

        assert handler is mop
        assert payload == Mop(bucket="blue")
        assert policy is DEFAULT_POLICY

    def test_dispatch_gives_the_policy_the_kind_handler_declares(self) -> None:
        declared = KindPolicy()

        class CarefulMopHandler(WorkHandler[Mop]):
            policy = declared

            async def handle(self, payload: Mop, ctx: WorkContext) -> None:
                return None

        registry = KindRegistry(Chore, [Sweep, Mop], [SweepHandler(), CarefulMopHandler()])

        assert registry.dispatch("mop", {"bucket": "blue"}).policy is declared
        assert registry.dispatch("sweep", {"rooms": 1}).policy is DEFAULT_POLICY

    def test_dispatch_of_an_unknown_kind_is_refused_listing_the_known_ones(self) -> None:
        with pytest.raises(UnknownKindError) as refused:
            chores().dispatch("polish", {})

        assert refused.value.known == ["mop", "sweep"]

    def test_dispatch_of_a_payload_that_does_not_validate_is_refused_naming_the_field(
        self,
    ) -> None:
        with pytest.raises(InvalidPayloadError, match="bucket: Field required"):
            chores().dispatch("mop", {})

    def test_parse_json_builds_the_kind_payload_from_text(self) -> None:
        assert chores().parse_json("mop", '{"bucket": "blue"}') == Mop(bucket="blue")

    @pytest.mark.parametrize("text", ["{not json", "[1, 2]", ""])
    def test_text_that_is_not_a_json_object_is_an_invalid_payload(self, text: str) -> None:
        with pytest.raises(InvalidPayloadError, match="invalid payload for kind 'mop': payload: "):
            chores().parse_json("mop", text)


class OneChore(StrEnum):
    SWEEP = "sweep"


class Sweeping(WorkPayload):
    kind = OneChore.SWEEP

    rooms: list[int] = Field(default_factory=list)
    broom: str = "wide"


class SweepingHandler(WorkHandler[Sweeping]):
    async def handle(self, payload: Sweeping, ctx: WorkContext) -> None:
        return None


def refusal_of(kinds: type[Enum], payloads: list[Any], handlers: list[Any]) -> str:
    with pytest.raises(KindRegistryError) as refused:
        KindRegistry(kinds, payloads, handlers)
    return str(refused.value)


class TestRefusalsInFull:
    def test_a_kind_enum_with_a_number_value_is_refused_naming_the_member(self) -> None:
        class Numbered(IntEnum):
            ONE = 1

        assert refusal_of(Numbered, [], []) == (
            "cannot build the kind registry for "
            "TestRefusalsInFull.test_a_kind_enum_with_a_number_value_is_refused_naming_the_member."
            "<locals>.Numbered: "
            "kind <Numbered.ONE: 1> must have a string value, not int"
        )

    def test_something_that_is_not_a_payload_class_is_refused_by_its_repr(self) -> None:
        message = refusal_of(OneChore, [Sweeping, "Sweeping"], [SweepingHandler()])

        assert message == (
            "cannot build the kind registry for OneChore: 'Sweeping' is not a WorkPayload subclass"
        )

    def test_something_that_is_not_a_handler_is_refused_by_its_repr(self) -> None:
        message = refusal_of(OneChore, [Sweeping], [SweepingHandler(), "handler"])

        assert (
            message == "cannot build the kind registry for OneChore: 'handler' is not a WorkHandler"
        )

    def test_every_problem_is_listed_separated_by_semicolons(self) -> None:
        message = refusal_of(OneChore, [Sweeping], [SweepingHandler(), UntypedHandler(), 5])

        assert message == (
            "cannot build the kind registry for OneChore: "
            "handler UntypedHandler has no payload_type; "
            "declare it as a subclass of WorkHandler[SomePayload]; "
            "5 is not a WorkHandler"
        )


class TestPayloadsThatDoNotValidate:
    def test_a_nested_field_is_named_by_its_dotted_path_and_each_failure_is_listed(self) -> None:
        registry = KindRegistry(OneChore, [Sweeping], [SweepingHandler()])

        with pytest.raises(InvalidPayloadError) as refused:
            registry.decode("sweep", {"rooms": [1, "two"], "broom": 3})

        assert refused.value.detail == (
            "rooms.1: Input should be a valid integer, unable to parse string as an integer; "
            "broom: Input should be a valid string"
        )

    def test_a_validation_error_reads_as_field_and_reason(self) -> None:
        class Strict(WorkPayload):
            kind = OneChore.SWEEP

            rooms: int

        with pytest.raises(ValidationError) as raised:
            Strict.model_validate({"rooms": "x"})

        assert describe_validation_error(raised.value) == (
            "rooms: Input should be a valid integer, unable to parse string as an integer"
        )


class TestMembership:
    def test_a_registry_contains_exactly_its_kind_names(self) -> None:
        registry = KindRegistry(OneChore, [Sweeping], [SweepingHandler()])

        assert "sweep" in registry
        assert "mop" not in registry
