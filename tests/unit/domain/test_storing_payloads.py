"""What an enqueue stores for a payload: its model's JSON, after validating it again.

A payload built with ``model_construct`` skipped validation; the check refuses
it by the path of every field that fails, and refuses text no store can hold.
"""

from __future__ import annotations

from enum import StrEnum

import pytest
from pydantic import model_validator

from workqueue.domain import InvalidPayloadError, WorkPayload, checked_payload_json
from workqueue.domain.payload_check import _unstorable


class Chore(StrEnum):
    SWEEP = "sweep"


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

    def test_unstorable_at_the_top_is_said_of_the_payload(self) -> None:
        # The payload's own fields are never text; a value checked on its own is.
        assert _unstorable("a\x00b", ()) == "<payload>: text holds a NUL character"
        assert _unstorable({"rooms": ["ok", "\ud800"]}, ()) == (
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
