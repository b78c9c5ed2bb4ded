"""A payload is checked on pydantic's core and by its JSON text; step by step only if need be.

The quick check calls pydantic's serializer and validator without the model's
methods around them, and looks for unstorable text in the JSON text it writes
anyway instead of walking the payload. Whatever it cannot clear (a failing step, a
NUL escape in the text, a model with its own check methods) goes through the
step-by-step check, which says what is wrong. Either way the payload is stored,
or refused, exactly as the step-by-step check alone would.
"""

from __future__ import annotations

import warnings
from enum import StrEnum
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import Field, ModelWrapValidatorHandler, field_serializer, model_validator
from pydantic_core import to_json

from unit.bad_input.bad_payloads import (
    Dimensions,
    Parcel,
    mistyped_parcels,
    parcels_with_unstorable,
    valid_parcels,
)
from workqueue.domain import InvalidPayloadError, WorkPayload
from workqueue.domain import payload_check as payload_check_module
from workqueue.domain.payload_check import (
    _checked_step_by_step,
    checked_payload_json,
    checked_payload_text,
    checked_payloads_json,
)


class CoreKind(StrEnum):
    CHORE = "core_chore"


class Counted(WorkPayload):
    kind = CoreKind.CHORE

    rooms: int = 0


class Blob(WorkPayload):
    kind = CoreKind.CHORE

    blob: bytes = b""
    parts: tuple[str, ...] = ()


class Doubling(WorkPayload):
    kind = CoreKind.CHORE

    rooms: int

    @field_serializer("rooms", when_used="json")
    def _doubled(self, rooms: int) -> int:
        return rooms * 2


class Grid(WorkPayload):
    kind = CoreKind.CHORE

    rows: list[list[str]] = Field(default_factory=list)


class Hidden(WorkPayload):
    """Stored without its secret: only the payload as given shows what the secret holds."""

    kind = CoreKind.CHORE

    secret: str

    @field_serializer("secret", when_used="json")
    def _masked(self, secret: str) -> str:
        return "***"


class Remade(WorkPayload):
    """Validating it makes a :class:`Marked`, whose own to_json is what gets stored."""

    kind = CoreKind.CHORE

    rooms: int

    @model_validator(mode="wrap")
    @classmethod
    def _marked(cls, data: Any, handler: ModelWrapValidatorHandler[Remade]) -> Remade:
        return Marked.model_construct(rooms=handler(data).rooms)


class Marked(Remade):
    def to_json(self) -> dict[str, Any]:
        return {"rooms": self.rooms, "marked": True}


@pytest.fixture
def checked_step_by_step(monkeypatch: pytest.MonkeyPatch) -> list[WorkPayload]:
    """The payloads that went through the step-by-step check, in the order they did."""
    seen: list[WorkPayload] = []

    def spy(payload: WorkPayload) -> dict[str, Any]:
        seen.append(payload)
        return _checked_step_by_step(payload)

    monkeypatch.setattr(payload_check_module, "_checked_step_by_step", spy)
    return seen


CLEARED_ON_THE_CORE = [
    pytest.param(Counted(rooms=3), {"rooms": 3}, id="a number"),
    pytest.param(
        Blob(blob=b"ab", parts=("c", "d")), {"blob": "ab", "parts": ["c", "d"]}, id="bytes, tuple"
    ),
    pytest.param(
        Parcel(label="hello", tags=("a",), notes={"k": "v"}, dimensions=Dimensions(width=2)),
        {
            "count": 0,
            "label": "hello",
            "weight": 0.0,
            "fragile": False,
            "tags": ["a"],
            "size": "small",
            "notes": {"k": "v"},
            "dimensions": {"width": 2, "height": 1},
        },
        id="every shape",
    ),
    pytest.param(
        Counted.model_construct(rooms="5"),  # type: ignore[arg-type]
        {"rooms": 5},
        id="a value that revalidates",
    ),
    # Dumped to JSON (2), read back (2) and dumped again (4), as step by step.
    pytest.param(Doubling(rooms=1), {"rooms": 4}, id="the JSON form validated again"),
    pytest.param(Grid(rows=[["a"], ["b", "c"]]), {"rows": [["a"], ["b", "c"]]}, id="nested lists"),
]


@pytest.mark.parametrize(("payload", "stored"), CLEARED_ON_THE_CORE)
def test_a_storable_payload_is_cleared_on_the_core_and_stored_as_step_by_step(
    payload: WorkPayload, stored: dict[str, Any], checked_step_by_step: list[WorkPayload]
) -> None:
    with warnings.catch_warnings():
        # A serializer warning would send the payload step by step: there are none.
        warnings.simplefilter("error")
        as_json = checked_payload_json(payload)
        as_text = checked_payload_text(payload)

    assert as_json == stored == _checked_step_by_step(payload)
    assert as_text == to_json(stored).decode()
    assert checked_step_by_step == []


REFUSED_STEP_BY_STEP = [
    pytest.param(Grid(rows=[["a"], ["b", "c\x00"]]), "rows.1.1: text holds a NUL character"),
    pytest.param(Parcel(tags=("fine", "lone \ud800")), "tags.1: text holds a lone surrogate"),
    # Dumped to JSON the key is silently rewritten; only the payload given shows it.
    pytest.param(Parcel(notes={"\udcff": "value"}), "notes: a key holds a lone surrogate"),
    pytest.param(Parcel(notes={"k\x00": "value"}), "notes: a key holds a NUL character"),
    # Stored as "***": only the payload given shows the NUL.
    pytest.param(Hidden(secret="a\x00b"), "secret: text holds a NUL character"),
    pytest.param(
        Grid.model_construct(rows=[["a"], 5]),  # type: ignore[list-item]
        "rows.1: Input should be a valid list",
    ),
    pytest.param(
        Counted.model_construct(rooms="many"),  # type: ignore[arg-type]
        "rooms: Input should be a valid integer, unable to parse string as an integer",
    ),
]


@pytest.mark.parametrize(("payload", "detail"), REFUSED_STEP_BY_STEP)
def test_a_payload_the_core_cannot_clear_is_refused_step_by_step_naming_its_field(
    payload: WorkPayload, detail: str, checked_step_by_step: list[WorkPayload]
) -> None:
    with pytest.raises(InvalidPayloadError) as as_json:
        checked_payload_json(payload)
    with pytest.raises(InvalidPayloadError) as as_text:
        checked_payload_text(payload)

    assert as_json.value.detail == as_text.value.detail == detail
    assert checked_step_by_step == [payload, payload]


def test_a_payload_that_only_looks_like_it_holds_a_nul_is_stored_step_by_step(
    checked_step_by_step: list[WorkPayload],
) -> None:
    # A backslash and "u0000": its JSON text holds the escape of a NUL, escaped.
    payload = Parcel(label="\\u0000")

    stored = checked_payload_json(payload)
    text = checked_payload_text(payload)

    assert stored["label"] == "\\u0000"
    assert text == to_json(stored).decode()
    assert checked_step_by_step == [payload, payload]


def test_what_a_validator_makes_of_another_class_is_stored_by_its_own_to_json(
    checked_step_by_step: list[WorkPayload],
) -> None:
    payload = Remade.model_construct(rooms=1)

    assert checked_payload_json(payload) == {"rooms": 1, "marked": True}
    assert checked_payload_text(payload) == '{"rooms":1,"marked":true}'
    assert checked_payloads_json([payload, Counted(rooms=2)]) == [
        {"rooms": 1, "marked": True},
        {"rooms": 2},
    ]
    assert checked_step_by_step == [payload, payload, payload]


def outcome(check: Any, payload: WorkPayload) -> object:
    """What a check stores, or the type and words of the error it raises."""
    try:
        stored: object = check(payload)
    except Exception as error:  # any error: it must be the same one
        return type(error), str(error)
    return stored


@given(
    st.one_of(
        valid_parcels(),
        mistyped_parcels().map(lambda bad: bad[0]),
        parcels_with_unstorable().map(lambda bad: bad[0]),
        st.builds(Blob, blob=st.binary(max_size=4), parts=st.lists(st.text(max_size=3)).map(tuple)),
        st.builds(Grid, rows=st.lists(st.lists(st.text(max_size=3), max_size=2), max_size=2)),
        st.builds(Hidden, secret=st.text(max_size=3)),
    )
)
def test_any_payload_is_stored_or_refused_exactly_as_step_by_step(payload: WorkPayload) -> None:
    assert outcome(checked_payload_json, payload) == outcome(_checked_step_by_step, payload)
    expected_text = outcome(lambda p: to_json(_checked_step_by_step(p)).decode(), payload)
    assert outcome(checked_payload_text, payload) == expected_text


class TestModelsThatOverrideTheCheck:
    """A model's own version of a method the check calls is honoured, step by step."""

    def test_its_own_to_json_is_what_gets_stored_and_written(
        self, checked_step_by_step: list[WorkPayload]
    ) -> None:
        class Doubled(WorkPayload):
            kind = CoreKind.CHORE

            rooms: int

            def to_json(self) -> dict[str, Any]:
                return {"rooms": self.rooms * 2}

        payload = Doubled(rooms=2)

        assert checked_payload_json(payload) == {"rooms": 4}
        assert checked_payload_text(payload) == '{"rooms":4}'
        assert checked_step_by_step == [payload, payload]

    def test_its_own_model_validate_reads_the_dumped_payload(self) -> None:
        class Counting(WorkPayload):
            kind = CoreKind.CHORE

            rooms: int

            @classmethod
            def model_validate(cls, obj: Any, **options: Any) -> Counting:
                return super().model_validate({"rooms": obj["rooms"] + 1}, **options)

        assert checked_payload_json(Counting(rooms=1)) == {"rooms": 2}

    def test_its_own_model_dump_is_what_gets_validated(self) -> None:
        class Tagged(WorkPayload):
            kind = CoreKind.CHORE

            rooms: int

            def model_dump(self, **options: Any) -> dict[str, Any]:
                return {**super().model_dump(**options), "tagged": True}

        with pytest.raises(InvalidPayloadError) as refused:
            checked_payload_json(Tagged(rooms=1))

        assert refused.value.detail == "tagged: Extra inputs are not permitted"
