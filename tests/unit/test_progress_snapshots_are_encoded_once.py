"""A progress snapshot is encoded once: its text is what PostgreSQL is sent, its value
what the in-memory store keeps, each made from the other at most once."""

from __future__ import annotations

import math

import pytest

from workqueue.adapters.postgres.pool import _dump_json, lease_columns, progress_text
from workqueue.domain import Lease, ProgressSnapshot, progress_value


class TestBothForms:
    def test_the_text_of_a_value_is_compact_json_keeping_its_characters(self) -> None:
        snapshot = ProgressSnapshot.of_value({"rows": [1, 2], "note": "é ✓"})

        assert snapshot.text() == '{"rows":[1,2],"note":"é ✓"}'

    def test_the_value_of_a_text_is_its_json(self) -> None:
        snapshot = ProgressSnapshot.of_json('{"rows":[1,2],"done":null}')

        assert snapshot.value() == {"rows": [1, 2], "done": None}

    def test_a_value_given_is_the_value_kept_and_a_text_given_is_the_text_kept(self) -> None:
        value = {"rows": 3}
        text = '{"rows":3}'

        assert ProgressSnapshot.of_value(value).value() is value
        assert ProgressSnapshot.of_json(text).text() is text

    def test_each_form_is_made_once_however_often_it_is_asked_for(self) -> None:
        from_value = ProgressSnapshot.of_value({"rows": 3})
        from_text = ProgressSnapshot.of_json('{"rows":3}')

        assert from_value.text() is from_value.text()
        assert from_text.value() is from_text.value()

    def test_null_is_a_snapshot_like_any_other(self) -> None:
        assert ProgressSnapshot.of_value(None).text() == "null"
        assert ProgressSnapshot.of_json("null").value() is None

    def test_a_value_json_cannot_hold_is_refused_when_it_is_encoded(self) -> None:
        snapshot = ProgressSnapshot.of_value({"ratio": math.nan})

        with pytest.raises(ValueError, match="not JSON compliant"):
            snapshot.text()


class TestWhatAStoreReads:
    def test_a_store_that_keeps_values_reads_a_snapshots_value_and_a_value_as_it_is(self) -> None:
        value = {"rows": 3}

        assert progress_value(ProgressSnapshot.of_json('{"rows":3}')) == value
        assert progress_value(value) is value
        assert progress_value(None) is None

    def test_postgresql_is_sent_a_snapshots_text_as_it_is_and_other_json_compact(self) -> None:
        text = '{"note":"é"}'

        assert _dump_json(ProgressSnapshot.of_json(text)) is text
        assert _dump_json(ProgressSnapshot.of_value({"a": [1, 2]})) == '{"a":[1,2]}'
        assert _dump_json({"a": [1, 2]}) == '{"a":[1,2]}'

    def test_many_snapshots_at_once_are_sent_as_the_same_texts_and_none_as_null(self) -> None:
        text = '{"page":2}'

        assert progress_text(ProgressSnapshot.of_json(text)) is text
        assert progress_text([1, "b"]) == '[1,"b"]'
        assert progress_text(0) == "0"
        assert progress_text(None) is None

    def test_a_statement_on_many_leases_is_sent_ids_attempts_and_progress_all_as_text(
        self,
    ) -> None:
        text = '{"page":2}'
        leases = [(Lease(7, 1), ProgressSnapshot.of_json(text)), (Lease(12, 3), None)]

        assert lease_columns(leases) == (["7", "12"], ["1", "3"], [text, None])
        assert lease_columns([]) == ([], [], [])
