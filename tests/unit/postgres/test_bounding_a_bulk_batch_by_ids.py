"""A bulk batch's range of ids is sent as bigints, whatever ids the caller gave."""

from __future__ import annotations

import pytest

from workqueue.adapters.postgres.store import item_id_bound
from workqueue.domain import LARGEST_ITEM_ID


@pytest.mark.parametrize("item_id", [-LARGEST_ITEM_ID, -5, 0, 7, LARGEST_ITEM_ID])
def test_an_id_a_bigint_holds_bounds_the_range_as_given(item_id: int) -> None:
    assert item_id_bound(item_id) == item_id


def test_an_id_beyond_the_largest_bigint_bounds_the_range_at_the_largest() -> None:
    assert item_id_bound(LARGEST_ITEM_ID + 1) == LARGEST_ITEM_ID
    assert item_id_bound(10**30) == LARGEST_ITEM_ID


def test_an_id_below_the_smallest_bigint_bounds_the_range_at_minus_the_largest() -> None:
    assert item_id_bound(-LARGEST_ITEM_ID - 1) == -LARGEST_ITEM_ID
    assert item_id_bound(-(10**30)) == -LARGEST_ITEM_ID
