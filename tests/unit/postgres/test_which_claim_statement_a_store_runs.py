"""A store runs the capped claim statement only while a capped kind it serves has room."""

from __future__ import annotations

import pytest

from workqueue.adapters.postgres.claim_path import ClaimPath, path_after
from workqueue.adapters.postgres.store import _SQL


@pytest.mark.parametrize("path", list(ClaimPath))
@pytest.mark.parametrize("room", [None, False, True])
def test_claims_that_serve_no_capped_kind_run_the_plain_statement(
    path: ClaimPath, room: bool | None
) -> None:
    assert path_after(path, capped=False, room=room) is ClaimPath.PLAIN


def test_a_plain_claim_that_finds_a_served_kind_capped_sends_the_store_to_the_capped_one() -> None:
    assert path_after(ClaimPath.PLAIN, capped=True, room=None) is ClaimPath.CAPPED


@pytest.mark.parametrize("path", [ClaimPath.CAPPED, ClaimPath.BESIDE])
def test_while_a_capped_kind_has_room_the_store_runs_the_capped_statement(
    path: ClaimPath,
) -> None:
    assert path_after(path, capped=True, room=True) is ClaimPath.CAPPED


@pytest.mark.parametrize("path", [ClaimPath.CAPPED, ClaimPath.BESIDE])
def test_while_no_capped_kind_has_room_the_store_claims_beside_them(path: ClaimPath) -> None:
    assert path_after(path, capped=True, room=False) is ClaimPath.BESIDE


def test_each_path_names_a_statement_of_the_store() -> None:
    assert {path.value for path in ClaimPath} <= set(_SQL)
