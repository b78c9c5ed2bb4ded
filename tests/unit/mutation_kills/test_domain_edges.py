"""The domain's edges: the exact words of its errors, and classes defined at run time.

Payload and handler classes are checked when they are defined, so the classes
these tests need are defined inside the tests themselves.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from enum import Enum, IntEnum, StrEnum
from typing import Generic, TypeVar

import pytest
from pydantic import model_validator

from domain import (
    InvalidDedupKeyError,
    InvalidPayloadError,
    PayloadDefinitionError,
    UnknownKindError,
    WorkContext,
    WorkHandler,
    WorkPayload,
    WorkSchedule,
    check_dedup_key,
    checked_payload_json,
    kind_name,
)
from domain.payload_check import _unstorable_text


class Chore(StrEnum):
    SWEEP = "sweep"


class Sweep(WorkPayload):
    kind = Chore.SWEEP


class TestDedupKeyMessages:
    def test_a_key_that_is_not_text_names_its_type(self) -> None:
        with pytest.raises(InvalidDedupKeyError) as raised:
            check_dedup_key(42)  # type: ignore[arg-type]
        assert str(raised.value) == "dedup key must be a string, not int"

    @pytest.mark.parametrize("key", ["", "   "])
    def test_an_empty_or_blank_key_says_so(self, key: str) -> None:
        with pytest.raises(InvalidDedupKeyError) as raised:
            check_dedup_key(key)
        assert str(raised.value) == "dedup key must not be empty or blank"

    def test_a_key_holding_a_nul_says_which_character(self) -> None:
        with pytest.raises(InvalidDedupKeyError) as raised:
            check_dedup_key("a\x00b")
        assert str(raised.value) == "dedup key must not contain a NUL character"


class TestErrorTexts:
    def test_an_unknown_kind_with_no_known_kinds_gives_no_hint(self) -> None:
        error = UnknownKindError("mop")
        assert (str(error), error.kind, error.known) == ("unknown kind 'mop'", "mop", [])

    def test_an_unknown_kind_lists_the_known_ones_sorted(self) -> None:
        error = UnknownKindError("mop", ["sweep", "dust"])
        assert str(error) == "unknown kind 'mop' (known kinds: dust, sweep)"

    def test_an_invalid_payload_keeps_its_kind_and_detail(self) -> None:
        error = InvalidPayloadError("sweep", "rooms: field required")
        assert (error.kind, error.detail) == ("sweep", "rooms: field required")
        assert str(error) == "invalid payload for kind 'sweep': rooms: field required"


class TestKindNames:
    def test_a_kind_enum_with_a_number_value_names_the_member_and_the_type(self) -> None:
        class Numbered(IntEnum):
            ONE = 1

        with pytest.raises(TypeError) as raised:
            kind_name(Numbered.ONE)
        assert str(raised.value) == "kind <Numbered.ONE: 1> must have a string value, not int"


class TestPayloadDefinitions:
    def test_a_payload_with_a_string_kind_member_is_defined(self) -> None:
        class Dust(WorkPayload):
            kind = Chore.SWEEP

            rooms: int = 1

        assert Dust.kind_name() == "sweep"
        assert Dust(rooms=2).to_json() == {"rooms": 2}

    def test_a_payload_without_a_kind_is_refused_with_an_example(self) -> None:
        with pytest.raises(PayloadDefinitionError) as raised:

            class Kindless(WorkPayload):
                rooms: int = 1

        assert str(raised.value) == (
            "TestPayloadDefinitions.test_a_payload_without_a_kind_is_refused_with_an_example."
            "<locals>.Kindless must declare its kind as a class attribute, "
            "e.g. `kind = WorkKind.TOKEN_CLEANUP`"
        )

    def test_a_payload_whose_kind_is_plain_text_is_refused(self) -> None:
        with pytest.raises(PayloadDefinitionError) as raised:

            class Texty(WorkPayload):
                kind = "sweep"  # type: ignore[assignment]

        assert str(raised.value).endswith(
            "<locals>.Texty.kind must be a member of a kind enum with string values, not 'sweep'"
        )

    def test_a_payload_whose_kind_has_a_number_value_is_refused(self) -> None:
        class Numbered(Enum):
            ONE = 1

        with pytest.raises(PayloadDefinitionError, match=r"not <Numbered.ONE: 1>$"):

            class Counted(WorkPayload):
                kind = Numbered.ONE

    def test_the_stored_json_of_a_payload_is_json_not_python_values(self) -> None:
        class Dated(WorkPayload):
            kind = Chore.SWEEP

            due: datetime
            every: timedelta

        payload = Dated(due=datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC), every=timedelta(hours=1))
        assert payload.to_json() == {"due": "2026-01-02T03:04:05Z", "every": "PT1H"}


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


class TestSchedules:
    def test_a_schedule_of_zero_interval_is_refused_naming_its_kind(self) -> None:
        with pytest.raises(ValueError) as raised:
            WorkSchedule(payload=Sweep(), interval=timedelta(0))
        assert str(raised.value) == "schedule interval for 'sweep' must be positive"

    def test_a_schedule_of_the_shortest_positive_interval_is_accepted(self) -> None:
        schedule = WorkSchedule(payload=Sweep(), interval=timedelta(microseconds=1))
        assert (schedule.kind, schedule.dedup_key) == ("sweep", "periodic")

    def test_a_schedule_with_an_unusable_dedup_key_is_refused(self) -> None:
        with pytest.raises(InvalidDedupKeyError):
            WorkSchedule(payload=Sweep(), interval=timedelta(hours=1), dedup_key=" ")


class TestStoredPayloads:
    def test_a_payload_that_cannot_be_written_as_json_names_its_kind(self) -> None:
        class Counted(WorkPayload):
            kind = Chore.SWEEP

            rooms: int

        broken = Counted.model_construct(rooms=object())  # type: ignore[arg-type]

        with pytest.raises(InvalidPayloadError) as refused:
            checked_payload_json(broken)

        assert refused.value.kind == "sweep"
        assert refused.value.detail.startswith(
            "not serialisable as JSON: Unable to serialize unknown type: <class 'object'>"
        )

    def test_unstorable_text_at_the_top_is_said_of_the_payload(self) -> None:
        # The payload's own fields are never text; a value checked on its own is.
        assert _unstorable_text("a\x00b", ()) == "<payload>: text holds a NUL character"
        assert _unstorable_text({"rooms": ["ok", "\ud800"]}, ()) == (
            "rooms.1: text holds a lone surrogate"
        )

    def test_every_field_that_fails_revalidation_is_named_by_its_path(self) -> None:
        class Rooms(WorkPayload):
            kind = Chore.SWEEP

            rooms: list[int]
            name: str

        broken = Rooms.model_construct(rooms=[1, "x"], name=5)  # type: ignore[list-item]

        with pytest.raises(InvalidPayloadError) as refused:
            checked_payload_json(broken)

        assert refused.value.detail == (
            "rooms.1: Input should be a valid integer, unable to parse string as an integer; "
            "name: Input should be a valid string"
        )

    def test_a_payload_refused_as_a_whole_is_said_of_the_payload(self) -> None:
        class Sized(WorkPayload):
            kind = Chore.SWEEP

            rooms: int
            size: int

            @model_validator(mode="after")
            def _sizes_agree(self) -> Sized:
                if self.size < self.rooms:
                    raise ValueError("fewer sizes than rooms")
                return self

        broken = Sized.model_construct(rooms=3, size=1)

        with pytest.raises(InvalidPayloadError) as refused:
            checked_payload_json(broken)

        assert refused.value.detail == "<payload>: Value error, fewer sizes than rooms"

    def test_a_value_that_revalidates_is_stored_as_its_model_reads_it_without_warnings(
        self,
    ) -> None:
        class Counted(WorkPayload):
            kind = Chore.SWEEP

            rooms: int

        loose = Counted.model_construct(rooms="5")  # type: ignore[arg-type]

        assert checked_payload_json(loose) == {"rooms": 5}

    def test_text_that_only_its_json_form_shows_is_refused_too(self) -> None:
        class Blob(WorkPayload):
            kind = Chore.SWEEP

            blob: bytes

        with pytest.raises(InvalidPayloadError) as refused:
            checked_payload_json(Blob(blob=b"a\x00b"))

        assert refused.value.detail == "blob: text holds a NUL character"
