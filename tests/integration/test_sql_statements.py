"""The adapter's SQL lives in named statements that load, and bad files are refused."""

from __future__ import annotations

from dataclasses import fields
from importlib.resources import files

import pytest

from workqueue.adapters.postgres.columns import ITEM_COLUMNS, item_columns
from workqueue.adapters.postgres.sql import load_statements, parse_statements
from workqueue.domain import WorkItem

SQL_FILES = sorted(
    entry.name
    for entry in files("workqueue.adapters.postgres").joinpath("sql").iterdir()
    if entry.name.endswith(".sql")
)


@pytest.mark.parametrize("file_name", SQL_FILES)
def test_every_statement_file_loads_with_named_non_empty_statements(file_name: str) -> None:
    statements = load_statements(file_name)

    assert len(statements) >= 1
    assert all(not sql.rstrip().endswith(";") for sql in statements.values())


def test_statements_are_split_at_their_name_lines() -> None:
    statements = parse_statements(
        "two.sql",
        "-- A file comment.\n\n-- name: first\n-- why\nSELECT 1;\n\n-- name: second\nSELECT 2;\n",
    )

    assert dict(statements) == {"first": "-- why\nSELECT 1", "second": "SELECT 2"}


def test_looking_up_a_missing_statement_names_the_file() -> None:
    with pytest.raises(KeyError, match=r"tokens\.sql defines no statement named 'nope'"):
        load_statements("tokens.sql")["nope"]


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("SELECT 1;\n", "no '-- name: ...' line"),
        ("SELECT 0;\n-- name: one\nSELECT 1;\n", "SQL before its first"),
        ("-- name: one\nSELECT 1;\n-- name: one\nSELECT 2;\n", "twice"),
        ("-- name: one\n-- only a comment\n", "is empty"),
    ],
)
def test_a_malformed_statement_file_is_refused(text: str, problem: str) -> None:
    with pytest.raises(ValueError, match=problem):
        parse_statements("bad.sql", text)


class TestWhereAStatementBeginsAndEnds:
    def test_a_statement_keeps_its_text_without_the_semicolon_or_surrounding_space(self) -> None:
        statements = parse_statements("x.sql", "-- name: one\n  SELECT 1 ;  \n")

        assert statements["one"] == "SELECT 1"

    def test_each_statement_ends_where_the_next_name_line_begins(self) -> None:
        text = "-- name: one\nSELECT 1;\n-- name: two\nSELECT 2;\n-- name: three\nSELECT 3;\n"

        assert dict(parse_statements("x.sql", text)) == {
            "one": "SELECT 1",
            "two": "SELECT 2",
            "three": "SELECT 3",
        }

    def test_a_missing_statement_is_named_with_its_file(self) -> None:
        statements = parse_statements("x.sql", "-- name: one\nSELECT 1;\n")

        with pytest.raises(KeyError) as missing:
            statements["two"]

        assert missing.value.args == ("x.sql defines no statement named 'two'",)

    @pytest.mark.parametrize(
        "text",
        [
            "-- name: one\n-- only a comment\n\n-- name: two\nSELECT 2;\n",
            "-- name: one\n   \n-- name: two\nSELECT 2;\n",
        ],
    )
    def test_a_name_with_only_comments_or_blanks_under_it_is_refused(self, text: str) -> None:
        with pytest.raises(ValueError, match=r"^x\.sql: the statement 'one' is empty$"):
            parse_statements("x.sql", text)

    def test_comments_and_blank_lines_may_come_before_the_first_name(self) -> None:
        statements = parse_statements("x.sql", "-- about this file\n\n-- name: one\nSELECT 1;\n")

        assert dict(statements) == {"one": "SELECT 1"}


def test_a_statement_file_is_read_from_the_package_on_first_use_and_then_kept() -> None:
    load_statements.cache_clear()
    try:
        statements = load_statements("tokens.sql")

        assert load_statements("tokens.sql") is statements
        assert statements.file_name == "tokens.sql"
        assert list(statements) == ["delete_expired_and_revoked"]
        assert "FROM refresh_tokens" in statements["delete_expired_and_revoked"]
    finally:
        load_statements.cache_clear()


def test_a_statement_file_that_is_not_shipped_is_not_found() -> None:
    with pytest.raises(FileNotFoundError):
        load_statements("nope.sql")


class TestWhatStatementsShare:
    def test_a_fragment_is_written_once_and_included_where_a_statement_names_it(self) -> None:
        text = (
            "-- fragment: queued\n-- why, said once\nWHERE status = 'queued'\n\n"
            "-- name: one\nSELECT 1 FROM t {{queued}};\n"
            "-- name: two\nSELECT 2 FROM t {{queued}} AND x;\n"
        )

        statements = parse_statements("x.sql", text)

        assert dict(statements) == {
            "one": "SELECT 1 FROM t WHERE status = 'queued'",
            "two": "SELECT 2 FROM t WHERE status = 'queued' AND x",
        }

    def test_a_fragment_may_include_another(self) -> None:
        text = (
            "-- fragment: a\nx = 1 AND {{b}}\n-- fragment: b\ny = 2\n"
            "-- name: one\nSELECT 1 WHERE {{a}};\n"
        )

        assert parse_statements("x.sql", text)["one"] == "SELECT 1 WHERE x = 1 AND y = 2"

    def test_the_item_columns_are_every_field_of_a_work_item_in_order(self) -> None:
        text = (
            "-- name: one\nSELECT {{item_columns}} FROM w;\n"
            "-- name: two\nSELECT {{item_columns:w}};\n"
        )

        statements = parse_statements("x.sql", text)

        assert statements["one"] == f"SELECT {', '.join(ITEM_COLUMNS)} FROM w"
        assert statements["two"] == "SELECT " + ", ".join(f"w.{c}" for c in ITEM_COLUMNS)
        assert tuple(field.name for field in fields(WorkItem)) == ITEM_COLUMNS
        assert item_columns() == ", ".join(ITEM_COLUMNS)

    @pytest.mark.parametrize(
        ("text", "problem"),
        [
            ("-- name: one\nSELECT {{nope}};\n", r"^x\.sql: \{\{nope\}\} names no fragment$"),
            (
                "-- fragment: f\nSELECT 1\n-- name: one\n{{f:w}};\n",
                r"^x\.sql: \{\{f:w\}\} names no fragment$",
            ),
            (
                "-- fragment: f\nx {{f}}\n-- name: one\nSELECT {{f}};\n",
                r"^x\.sql: fragments nested too deep \(do two include each other\?\)$",
            ),
            ("-- fragment: f\nSELECT 1\n", r"^x\.sql has no '-- name: \.\.\.' line$"),
            (
                "-- fragment: f\nSELECT 1\n-- fragment: f\nSELECT 2\n-- name: one\nSELECT 3;\n",
                r"^x\.sql names the fragment 'f' twice$",
            ),
            (
                "-- name: f\nSELECT 1\n-- fragment: f\nSELECT 2\n",
                r"^x\.sql names the fragment 'f' twice$",
            ),
            (
                "-- fragment: f\n-- only a comment\n-- name: one\nSELECT 3;\n",
                r"^x\.sql: the fragment 'f' is empty$",
            ),
        ],
    )
    def test_a_placeholder_or_fragment_that_cannot_be_used_is_refused(
        self, text: str, problem: str
    ) -> None:
        with pytest.raises(ValueError, match=problem):
            parse_statements("x.sql", text)

    def test_fragments_nested_as_deep_as_allowed_are_included(self) -> None:
        text = (
            "-- fragment: a\n{{b}}\n-- fragment: b\n{{c}}\n-- fragment: c\n{{d}}\n"
            "-- fragment: d\nSELECT 5\n-- name: one\n{{a}};\n"
        )

        assert parse_statements("x.sql", text)["one"] == "SELECT 5"

    def test_a_fragment_keeps_its_comments_below_its_first_sql_line(self) -> None:
        text = "-- fragment: f\n-- said once\nSELECT 1\n-- kept\nFROM t\n-- name: one\n{{f}};\n"

        assert parse_statements("x.sql", text)["one"] == "SELECT 1\n-- kept\nFROM t"
