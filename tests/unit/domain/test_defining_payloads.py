"""A payload class is checked when it is defined; a kind is named by its string value.

The classes these tests need are defined inside the tests themselves, since
defining one is what is tested.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from enum import Enum, IntEnum, StrEnum

import pytest

from workqueue.domain import PayloadDefinitionError, WorkPayload, kind_name


class Chore(StrEnum):
    SWEEP = "sweep"


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
