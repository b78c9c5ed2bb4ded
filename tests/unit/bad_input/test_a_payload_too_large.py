"""A payload larger than its model takes is refused before anything is written: 1 MiB of
JSON unless the model says otherwise, one payload or one of a batch."""

from __future__ import annotations

from typing import ClassVar

import pytest

from unit.bad_input.bad_payloads import Parcel, ParcelKind
from workqueue.adapters.memory import InMemoryState, InMemoryWorkQueue
from workqueue.adapters.testing import FakeClock
from workqueue.domain import (
    DEFAULT_MAX_PAYLOAD_BYTES,
    EnqueueRequest,
    InvalidPayloadError,
    WorkPayload,
)
from workqueue.domain.payload_check import checked_payloads_json


class Note(WorkPayload):
    """A payload whose model takes at most 30 bytes of JSON: {"text":"..."} with 19 characters."""

    kind = ParcelKind.PARCEL
    max_payload_bytes: ClassVar[int] = 30

    text: str = ""


def fresh() -> tuple[InMemoryState, InMemoryWorkQueue]:
    state = InMemoryState()
    return state, InMemoryWorkQueue(state, FakeClock())


def test_a_payload_may_be_one_mebibyte_unless_its_model_says_otherwise() -> None:
    assert DEFAULT_MAX_PAYLOAD_BYTES == 1_048_576
    assert Parcel.max_payload_bytes == DEFAULT_MAX_PAYLOAD_BYTES
    assert Note.max_payload_bytes == 30


async def test_a_payload_of_exactly_the_largest_size_is_taken() -> None:
    state, queue = fresh()

    result = await queue.enqueue(Note(text="x" * 19))

    assert state.items[result.id].payload == {"text": "x" * 19}


async def test_one_byte_more_is_refused_naming_its_size_and_the_bound() -> None:
    state, queue = fresh()

    with pytest.raises(InvalidPayloadError) as refused:
        await queue.enqueue(Note(text="x" * 20))

    assert str(refused.value) == (
        "invalid payload for kind 'bad_input_parcel': its JSON is 31 bytes, more than the 30"
        " its model takes (max_payload_bytes)"
    )
    assert state.items == {}


async def test_the_size_is_counted_in_bytes_of_utf8() -> None:
    state, queue = fresh()

    with pytest.raises(InvalidPayloadError, match="its JSON is 31 bytes"):
        await queue.enqueue(Note(text="é" * 10))  # 10 characters, 20 bytes

    assert state.items == {}


async def test_ten_megabytes_of_payload_are_refused_by_default() -> None:
    state, queue = fresh()

    with pytest.raises(InvalidPayloadError, match="more than the 1048576 its model takes"):
        await queue.enqueue(Parcel(label="x" * 10_000_000))

    assert state.items == {}


async def test_a_batch_with_one_payload_too_large_is_refused_whole() -> None:
    state, queue = fresh()
    requests = [EnqueueRequest(Note(text="a")), EnqueueRequest(Note(text="x" * 20))]

    with pytest.raises(InvalidPayloadError, match="its JSON is 31 bytes"):
        await queue.enqueue_many(requests)

    assert state.items == {}


async def test_in_a_batch_an_earlier_mistake_is_the_one_reported() -> None:
    state, queue = fresh()
    requests = [
        EnqueueRequest(Parcel.model_construct(count="many")),
        EnqueueRequest(Note(text="x" * 20)),
    ]

    with pytest.raises(InvalidPayloadError, match="count: "):
        await queue.enqueue_many(requests)

    assert state.items == {}


async def test_a_batch_larger_than_one_payload_may_be_is_taken_when_each_is_small() -> None:
    state, queue = fresh()
    requests = [EnqueueRequest(Note(text="x" * 19)) for _ in range(10)]

    results = await queue.enqueue_many(requests)

    assert [state.items[r.id].payload for r in results] == [{"text": "x" * 19}] * 10


class TestCheckingABatchTogether:
    """The batch check (what the PostgreSQL queues run for ``enqueue_many``)."""

    def test_the_first_payload_too_large_in_order_is_refused(self) -> None:
        batch = [Note(text="a"), Note(text="x" * 20), Note(text="x" * 21)]

        with pytest.raises(InvalidPayloadError) as refused:
            checked_payloads_json(batch)

        assert str(refused.value).endswith(
            ": its JSON is 31 bytes, more than the 30 its model takes (max_payload_bytes)"
        )

    def test_payloads_of_the_largest_size_pass_however_large_the_batch(self) -> None:
        batch = [Note(text="x" * 19)] * 10

        assert checked_payloads_json(batch) == [{"text": "x" * 19}] * 10

    def test_an_earlier_mistake_of_another_model_comes_first(self) -> None:
        batch = [Parcel.model_construct(count="many"), Note(text="x" * 20)]

        with pytest.raises(InvalidPayloadError, match="count: "):
            checked_payloads_json(batch)

    def test_a_model_whose_payloads_are_small_is_not_refused_beside_one_too_large(
        self,
    ) -> None:
        batch = [Parcel(label="p"), Note(text="x" * 20)]

        with pytest.raises(InvalidPayloadError, match="its JSON is 31 bytes"):
            checked_payloads_json(batch)
        assert checked_payloads_json(batch[:1]) == [Parcel(label="p").to_json()]
