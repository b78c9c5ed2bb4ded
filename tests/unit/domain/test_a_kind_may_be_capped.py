"""A fleet-wide cap per kind (docs/adr/0035): what a store may write, and a policy's cap."""

from __future__ import annotations

from dataclasses import FrozenInstanceError
from datetime import UTC, datetime
from typing import Any

import pytest

from workqueue.domain import (
    DEFAULT_POLICY,
    MAX_CAP,
    CapSource,
    InvalidCapError,
    InvalidPolicyError,
    KindCap,
    KindPolicy,
    WorkQueueError,
    cap_stays,
    checked_cap,
)

KIND = "import_orders"
SET_AT = datetime(2026, 12, 5, 9, tzinfo=UTC)
OPERATOR = CapSource.OPERATOR
POLICY = CapSource.POLICY


def in_force(max_running: int, source: CapSource) -> KindCap:
    return KindCap(KIND, max_running, source, SET_AT, 1)


def refused_cap(kind: str, max_running: Any) -> str:
    with pytest.raises(InvalidCapError) as raised:
        checked_cap(kind, max_running)
    return str(raised.value)


def refused_policy(max_running: Any) -> str:
    with pytest.raises(InvalidPolicyError) as raised:
        KindPolicy(max_running=max_running)
    return str(raised.value)


class TestTheLargestCap:
    def test_is_ten_thousand_slots(self) -> None:
        assert MAX_CAP == 10_000


class TestACapAStoreMayWrite:
    @pytest.mark.parametrize("max_running", [1, 2, 9_999, 10_000])
    def test_is_a_whole_number_from_one_to_the_largest(self, max_running: int) -> None:
        checked_cap(KIND, max_running)

    def test_or_none_which_clears_the_cap(self) -> None:
        checked_cap(KIND, None)

    @pytest.mark.parametrize("kind", ["x", " import orders ", "Ünïcödé ✓"])
    def test_names_any_kind_a_store_can_hold(self, kind: str) -> None:
        checked_cap(kind, 3)


class TestACapNoStoreCanHoldIsRefused:
    @pytest.mark.parametrize("kind", ["", " ", "\t\n"], ids=["empty", "a space", "blank"])
    @pytest.mark.parametrize("max_running", [3, None, 0])
    def test_a_cap_that_names_no_kind(self, kind: str, max_running: int | None) -> None:
        assert refused_cap(kind, max_running) == "a cap names a kind"

    @pytest.mark.parametrize("max_running", [3, None])
    def test_a_kind_with_a_nul_character(self, max_running: int | None) -> None:
        assert refused_cap("import\x00orders", max_running) == (
            "a kind name cannot hold a NUL character"
        )

    @pytest.mark.parametrize("max_running", [3, None])
    def test_a_kind_with_a_lone_surrogate(self, max_running: int | None) -> None:
        assert refused_cap("import \ud800", max_running) == (
            "a kind name cannot hold a lone surrogate"
        )

    @pytest.mark.parametrize("max_running", [0, -1, -10_000])
    def test_fewer_than_one_slot(self, max_running: int) -> None:
        assert refused_cap(KIND, max_running) == f"a cap is from 1 to 10000, not {max_running}"

    @pytest.mark.parametrize("max_running", [10_001, 10**9])
    def test_more_slots_than_the_largest_cap(self, max_running: int) -> None:
        assert refused_cap(KIND, max_running) == f"a cap is from 1 to 10000, not {max_running}"

    @pytest.mark.parametrize(
        ("max_running", "shown"),
        [(True, "bool"), (False, "bool"), (2.0, "float"), (0.5, "float"), ("3", "str")],
    )
    def test_a_count_that_is_not_a_whole_number(self, max_running: object, shown: str) -> None:
        assert refused_cap(KIND, max_running) == f"a cap is a whole number, not {shown}"

    def test_the_error_is_a_value_error_of_the_queue(self) -> None:
        with pytest.raises(InvalidCapError) as raised:
            checked_cap(KIND, 0)

        assert isinstance(raised.value, WorkQueueError)
        assert isinstance(raised.value, ValueError)


class TestWhoSetACap:
    def test_is_a_policy_or_an_operator_stored_by_name(self) -> None:
        assert [source.value for source in CapSource] == ["policy", "operator"]
        assert CapSource("policy") is CapSource.POLICY
        assert CapSource("operator") is CapSource.OPERATOR


class TestACapInForce:
    def test_says_its_kind_count_source_moment_and_slots_held(self) -> None:
        cap = KindCap(KIND, 3, OPERATOR, SET_AT, 1)

        assert (cap.kind, cap.max_running, cap.source, cap.set_at, cap.running) == (
            KIND,
            3,
            OPERATOR,
            SET_AT,
            1,
        )
        assert cap == KindCap(KIND, 3, OPERATOR, SET_AT, 1)
        with pytest.raises(FrozenInstanceError):
            cap.running = 2  # type: ignore[misc]


class TestWhetherACapStaysAsItIs:
    @pytest.mark.parametrize("source", [OPERATOR, POLICY])
    def test_clearing_a_kind_without_a_cap_leaves_it_without(self, source: CapSource) -> None:
        assert cap_stays(None, None, source) is True

    @pytest.mark.parametrize("source", [OPERATOR, POLICY])
    def test_capping_a_kind_without_a_cap_caps_it(self, source: CapSource) -> None:
        assert cap_stays(None, 1, source) is False

    @pytest.mark.parametrize("max_running", [None, 1, 3, 10_000])
    def test_a_policy_never_changes_an_operators_cap(self, max_running: int | None) -> None:
        assert cap_stays(in_force(3, OPERATOR), max_running, POLICY) is True

    @pytest.mark.parametrize("source", [OPERATOR, POLICY])
    def test_the_cap_in_force_set_again_by_its_source_stays(self, source: CapSource) -> None:
        assert cap_stays(in_force(3, source), 3, source) is True

    @pytest.mark.parametrize(
        ("current", "max_running", "source"),
        [
            pytest.param(in_force(3, OPERATOR), 4, OPERATOR, id="an operator's new count"),
            pytest.param(in_force(3, OPERATOR), None, OPERATOR, id="an operator clears it"),
            pytest.param(in_force(3, POLICY), 2, POLICY, id="a policy's new count"),
            pytest.param(in_force(3, POLICY), None, POLICY, id="a policy clears its own"),
            pytest.param(in_force(3, POLICY), 3, OPERATOR, id="an operator takes it over"),
            pytest.param(in_force(3, POLICY), 5, OPERATOR, id="an operator's count over it"),
            pytest.param(in_force(3, POLICY), None, OPERATOR, id="an operator clears a policy's"),
        ],
    )
    def test_any_other_change_is_written(
        self, current: KindCap, max_running: int | None, source: CapSource
    ) -> None:
        assert cap_stays(current, max_running, source) is False


class TestAPolicysCap:
    def test_is_none_unless_declared(self) -> None:
        assert KindPolicy().max_running is None
        assert DEFAULT_POLICY.max_running is None

    @pytest.mark.parametrize("max_running", [1, 2, 9_999, 10_000])
    def test_is_a_whole_number_from_one_to_the_largest_cap(self, max_running: int) -> None:
        assert KindPolicy(max_running=max_running).max_running == max_running

    def test_sits_beside_the_rest_of_the_policy(self) -> None:
        policy = KindPolicy(max_attempts=3, max_snoozes=0, max_running=5)

        assert (policy.max_attempts, policy.max_snoozes, policy.max_running) == (3, 0, 5)

    @pytest.mark.parametrize("max_running", [0, -1])
    def test_of_fewer_than_one_is_refused(self, max_running: int) -> None:
        assert refused_policy(max_running) == f"max_running must be at least 1, not {max_running}"

    @pytest.mark.parametrize("max_running", [10_001, 10**9])
    def test_past_the_largest_cap_is_refused(self, max_running: int) -> None:
        assert refused_policy(max_running) == (
            f"max_running must be at most 10000, not {max_running}"
        )

    @pytest.mark.parametrize(
        ("max_running", "shown"), [(True, "bool"), (False, "bool"), (2.0, "float"), ("3", "str")]
    )
    def test_that_is_not_an_integer_is_refused(self, max_running: object, shown: str) -> None:
        assert refused_policy(max_running) == f"max_running must be an integer, not {shown}"
