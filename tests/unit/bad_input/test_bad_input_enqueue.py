"""Bad enqueues on the in-memory queue: a typed error before anything is written.

The same properties run on PostgreSQL in tests/integration/test_bad_input_enqueue.py;
the in-memory queue must refuse exactly what the real one cannot store.
"""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import ValidationError

from unit.bad_input.bad_payloads import (
    NOT_FINITE,
    UNUSABLE_DEDUP_KEYS,
    USABLE_DEDUP_KEYS,
    Ledger,
    Parcel,
    mistyped_parcels,
    parcels_with_unstorable,
    payloads_with_numbers_json_cannot_hold,
    valid_parcels,
)
from workqueue.adapters.memory import InMemoryState, InMemoryWorkQueue, InMemoryWorkStore
from workqueue.adapters.testing import FakeClock
from workqueue.domain import (
    EnqueueRequest,
    InvalidDedupKeyError,
    InvalidPayloadError,
    WorkPayload,
    checked_payload_json,
)


def fresh() -> tuple[InMemoryState, InMemoryWorkQueue]:
    state = InMemoryState()
    return state, InMemoryWorkQueue(state, FakeClock())


@given(mistyped_parcels())
async def test_a_payload_that_fails_its_model_is_refused_naming_kind_and_field(
    bad: tuple[Parcel, str],
) -> None:
    parcel, field = bad
    state, queue = fresh()

    with pytest.raises(InvalidPayloadError) as raised:
        await queue.enqueue(parcel)

    assert raised.value.kind == "bad_input_parcel"
    assert field in raised.value.detail
    assert state.items == {}


@given(parcels_with_unstorable())
async def test_text_no_store_can_hold_is_refused_naming_the_field(bad: tuple[Parcel, str]) -> None:
    parcel, field = bad
    state, queue = fresh()

    with pytest.raises(InvalidPayloadError) as raised:
        await queue.enqueue(parcel)

    assert raised.value.kind == "bad_input_parcel"
    assert field in raised.value.detail
    assert state.items == {}


@given(UNUSABLE_DEDUP_KEYS)
async def test_an_unusable_dedup_key_is_refused_before_anything_is_written(key: str) -> None:
    state, queue = fresh()

    with pytest.raises(InvalidDedupKeyError):
        await queue.enqueue(Parcel(), dedup_key=key)

    assert state.items == {}


@given(st.lists(valid_parcels(), min_size=1, max_size=4), mistyped_parcels())
async def test_one_bad_request_leaves_its_whole_batch_unwritten(
    good: list[Parcel], bad: tuple[Parcel, str]
) -> None:
    state, queue = fresh()
    requests = [EnqueueRequest(parcel) for parcel in good]

    with pytest.raises(InvalidPayloadError):
        await queue.enqueue_many([*requests, EnqueueRequest(bad[0])])

    assert state.items == {}


@given(valid_parcels(), USABLE_DEDUP_KEYS)
async def test_a_valid_payload_and_key_are_stored_as_validated_and_read_back_whole(
    parcel: Parcel, key: str
) -> None:
    state, queue = fresh()

    result = await queue.enqueue(parcel, dedup_key=key)

    item = await InMemoryWorkStore(state, FakeClock()).get(result.id)
    assert item is not None
    assert (item.kind, item.payload, item.dedup_key) == ("bad_input_parcel", parcel.to_json(), key)
    assert Parcel.model_validate(item.payload) == parcel


@given(payloads_with_numbers_json_cannot_hold())
async def test_a_number_json_cannot_hold_is_refused_naming_the_field(
    bad: tuple[WorkPayload, str],
) -> None:
    payload, path = bad
    state, queue = fresh()

    with pytest.raises(InvalidPayloadError) as raised:
        await queue.enqueue(payload)
    with pytest.raises(InvalidPayloadError):
        await queue.enqueue_many([EnqueueRequest(Ledger()), EnqueueRequest(payload)])

    assert raised.value.detail.startswith(f"{path}: ")
    assert state.items == {}


@pytest.mark.parametrize("number", NOT_FINITE, ids=["NaN", "Infinity", "-Infinity"])
def test_a_float_field_refuses_a_number_json_cannot_hold_when_the_payload_is_built(
    number: float,
) -> None:
    with pytest.raises(ValidationError, match="Input should be a finite number"):
        Parcel(weight=number)


def test_a_number_too_large_for_a_float_is_refused_as_infinity() -> None:
    with pytest.raises(ValidationError, match="Input should be a finite number"):
        Parcel.model_validate_json('{"weight": 1e400}')
    ledger = Ledger.model_validate_json('{"entries": {"big": 1e400}}')

    with pytest.raises(InvalidPayloadError) as raised:
        checked_payload_json(ledger)

    assert str(raised.value) == (
        "invalid payload for kind 'bad_input_parcel': entries.big: inf is not a number JSON"
        " can hold"
    )


async def test_the_words_nan_and_infinity_as_text_are_stored_as_they_are() -> None:
    state, queue = fresh()
    ledger = Ledger(entries={"NaN": "NaN", "Infinity": ["-Infinity"], "u": "\\u0000"})

    result = await queue.enqueue(ledger)

    assert state.items[result.id].payload == ledger.to_json()
