"""A batch of payloads is checked as its payloads would be one by one, only faster.

``checked_payloads_json`` runs the steps of ``checked_payload_json`` over a whole
batch at once and falls back to the one-by-one check whenever the batch does not
pass cleanly. Whatever path it takes, it must store what the one-by-one check
stores and refuse with the error the one-by-one check raises first.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from enum import StrEnum
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import Field, field_serializer

from unit.bad_input.bad_payloads import (
    Parcel,
    mistyped_parcels,
    parcels_with_unstorable,
    valid_parcels,
)
from workqueue.domain import InvalidPayloadError, WorkPayload
from workqueue.domain import payload_check as payload_check_module
from workqueue.domain.payload_check import checked_payload_json, checked_payloads_json


class BatchKind(StrEnum):
    COUNTED = "batch_counted"
    BLOB = "batch_blob"
    SCORES = "batch_scores"
    NOTE = "batch_note"


class Counted(WorkPayload):
    kind = BatchKind.COUNTED

    rooms: int = 0


class Blob(WorkPayload):
    kind = BatchKind.BLOB

    blob: bytes = b""
    parts: tuple[str, ...] = ()


class Note(WorkPayload):
    """Dumps alike both ways: its stored JSON alone shows its text."""

    kind = BatchKind.NOTE

    note: str = ""


def outcome(check: Callable[[], list[dict[str, Any]]]) -> object:
    """What a check stores, or the type and words of the error it raises."""
    try:
        return check()
    except Exception as error:  # any error: it must be the same one
        return type(error), str(error)


def one_by_one(payloads: list[WorkPayload]) -> object:
    return outcome(lambda: [checked_payload_json(payload) for payload in payloads])


def together(payloads: list[WorkPayload]) -> object:
    return outcome(lambda: checked_payloads_json(payloads))


@pytest.fixture
def checked_one_by_one(monkeypatch: pytest.MonkeyPatch) -> list[WorkPayload]:
    """The payloads that went through the one-by-one check, in the order they did."""
    seen: list[WorkPayload] = []

    def spy(payload: WorkPayload) -> dict[str, Any]:
        seen.append(payload)
        return checked_payload_json(payload)

    monkeypatch.setattr(payload_check_module, "checked_payload_json", spy)
    return seen


any_payload = st.one_of(
    valid_parcels(),
    mistyped_parcels().map(lambda bad: bad[0]),
    parcels_with_unstorable().map(lambda bad: bad[0]),
    st.builds(Counted, rooms=st.integers()),
    st.builds(lambda rooms: Counted.model_construct(rooms=rooms), st.sampled_from(["5", "x"])),
    st.builds(Blob, blob=st.binary(max_size=4), parts=st.lists(st.text(max_size=3)).map(tuple)),
)


@given(payloads=st.lists(any_payload, max_size=6))
def test_a_batch_stores_or_refuses_exactly_as_its_payloads_checked_one_by_one(
    payloads: list[WorkPayload],
) -> None:
    assert together(payloads) == one_by_one(payloads)


def test_payloads_of_several_models_are_checked_together_and_kept_in_order(
    checked_one_by_one: list[WorkPayload],
) -> None:
    payloads = [Counted(rooms=1), Parcel(label="a"), Counted(rooms=2), Blob(blob=b"b")]

    stored = checked_payloads_json(payloads)

    assert stored == [checked_payload_json(payload) for payload in payloads]
    assert [entry.get("rooms") for entry in stored] == [1, None, 2, None]
    assert checked_one_by_one == []


def test_payloads_stored_unlike_they_were_given_are_still_checked_together(
    checked_one_by_one: list[WorkPayload],
) -> None:
    # Bytes and tuples dump as themselves, and are stored as a JSON string and list.
    stored = checked_payloads_json([Blob(blob=b"ab", parts=("c", "d"))])

    assert stored == [{"blob": "ab", "parts": ["c", "d"]}]
    assert checked_one_by_one == []


def test_a_value_that_revalidates_is_stored_as_its_model_reads_it_together_without_warnings(
    checked_one_by_one: list[WorkPayload],
) -> None:
    loose = Counted.model_construct(rooms="5")  # type: ignore[arg-type]

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        stored = checked_payloads_json([loose, Counted(rooms=6)])

    assert stored == [{"rooms": 5}, {"rooms": 6}]
    assert checked_one_by_one == []


def test_what_is_validated_again_is_the_json_form_of_each_payload() -> None:
    class Doubling(WorkPayload):
        kind = BatchKind.COUNTED

        rooms: int

        @field_serializer("rooms", when_used="json")
        def _doubled(self, rooms: int) -> int:
            return rooms * 2

    # Dumped to JSON (2), read back (2) and dumped again (4), as one by one.
    assert checked_payloads_json([Doubling(rooms=1)]) == [{"rooms": 4}]


def test_an_empty_batch_stores_nothing() -> None:
    assert checked_payloads_json([]) == []


@pytest.mark.parametrize(
    ("payload", "detail"),
    [
        (Blob(blob=b"a\x00b"), "blob: text holds a NUL character"),
        (Parcel(label="a\x00b"), "label: text holds a NUL character"),
        (Parcel(tags=("fine", "lone \ud800")), "tags.1: text holds a lone surrogate"),
        # Dumped to JSON the key is silently rewritten; only the payload given shows it.
        (Parcel(notes={"\udcff": "value"}), "notes: a key holds a lone surrogate"),
        (Blob(parts=("\x00",)), "parts.0: text holds a NUL character"),
        (Note(note="a\x00b"), "note: text holds a NUL character"),
    ],
)
def test_unstorable_anywhere_in_a_batch_is_refused_naming_its_field(
    payload: WorkPayload, detail: str
) -> None:
    with pytest.raises(InvalidPayloadError) as refused:
        checked_payloads_json([Counted(rooms=1), payload, Counted(rooms=2)])

    assert refused.value.detail == detail


def test_the_first_payload_refused_in_order_is_the_one_reported() -> None:
    payloads: list[WorkPayload] = [
        Counted(rooms=1),
        Parcel(label="nul \x00"),
        Counted.model_construct(rooms="many"),  # type: ignore[arg-type]
    ]

    with pytest.raises(InvalidPayloadError) as refused:
        checked_payloads_json(payloads)

    assert refused.value.kind == "bad_input_parcel"
    assert refused.value.detail == "label: text holds a NUL character"


class TestModelsThatOverrideTheCheck:
    """A model's own version of a method the check calls is honoured in a batch too."""

    def test_its_own_to_json_is_what_gets_stored(self) -> None:
        class Doubled(WorkPayload):
            kind = BatchKind.COUNTED

            rooms: int

            def to_json(self) -> dict[str, Any]:
                return {"rooms": self.rooms * 2}

        assert checked_payloads_json([Doubled(rooms=2), Counted(rooms=2)]) == [
            {"rooms": 4},
            {"rooms": 2},
        ]

    def test_its_own_model_validate_reads_the_dumped_payload(self) -> None:
        class Counting(WorkPayload):
            kind = BatchKind.COUNTED

            rooms: int

            @classmethod
            def model_validate(cls, obj: Any, **options: Any) -> Counting:
                return super().model_validate({"rooms": obj["rooms"] + 1}, **options)

        assert checked_payloads_json([Counting(rooms=1)]) == [{"rooms": 2}]

    def test_its_own_model_dump_is_what_gets_validated(self) -> None:
        class Tagged(WorkPayload):
            kind = BatchKind.COUNTED

            rooms: int

            def model_dump(self, **options: Any) -> dict[str, Any]:
                return {**super().model_dump(**options), "tagged": True}

        with pytest.raises(InvalidPayloadError) as refused:
            checked_payloads_json([Tagged(rooms=1)])

        assert refused.value.detail == "tagged: Extra inputs are not permitted"

    def test_an_override_in_a_parent_model_is_honoured_in_its_children(self) -> None:
        class Doubled(WorkPayload):
            kind = BatchKind.COUNTED

            rooms: int

            def to_json(self) -> dict[str, Any]:
                return {"rooms": self.rooms * 2}

        class DoubledChild(Doubled):
            pass

        assert checked_payloads_json([DoubledChild(rooms=3)]) == [{"rooms": 6}]


class Scores(WorkPayload):
    kind = BatchKind.SCORES

    by_room: dict[int, str] = Field(default_factory=dict)


def test_a_payload_keyed_by_numbers_is_stored_with_text_keys_alone_and_in_a_batch() -> None:
    payload = Scores(by_room={101: "done", 102: "late"})

    alone = checked_payload_json(payload)
    together = checked_payloads_json([payload, Scores()])

    assert alone == {"by_room": {"101": "done", "102": "late"}}
    assert together == [alone, {"by_room": {}}]


def test_unstorable_under_a_number_key_is_refused_naming_the_key() -> None:
    payload = Scores(by_room={101: "done", 102: "nul \x00"})

    with pytest.raises(InvalidPayloadError) as alone:
        checked_payload_json(payload)
    with pytest.raises(InvalidPayloadError) as together:
        checked_payloads_json([Scores(), payload])

    assert alone.value.detail == together.value.detail == "by_room.102: text holds a NUL character"


def test_a_model_first_seen_in_a_batch_is_checked_with_the_batch(
    checked_one_by_one: list[WorkPayload],
) -> None:
    # Defined here, so this is the first check of the model and of its list.
    class Fresh(WorkPayload):
        kind = BatchKind.COUNTED

        rooms: int

    assert checked_payloads_json([Fresh(rooms=1), Fresh(rooms=2)]) == [{"rooms": 1}, {"rooms": 2}]
    assert checked_one_by_one == []


def test_a_model_that_overrides_a_check_method_is_checked_one_by_one(
    checked_one_by_one: list[WorkPayload],
) -> None:
    class Fussy(WorkPayload):
        kind = BatchKind.COUNTED

        rooms: int

        def to_json(self) -> dict[str, Any]:
            return {"rooms": self.rooms + 1}

    class FussyToo(Fussy):
        pass

    payloads = [FussyToo(rooms=1)]

    assert checked_payloads_json(payloads) == [{"rooms": 2}]
    assert checked_one_by_one == payloads
