"""The adapter's SQL lives in named statements that load, and bad files are refused."""

from __future__ import annotations

from importlib.resources import files

import pytest

from adapters.postgres.sql import load_statements, parse_statements

SQL_FILES = sorted(
    entry.name
    for entry in files("adapters.postgres").joinpath("sql").iterdir()
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
    with pytest.raises(KeyError, match=r"store\.sql defines no statement named 'nope'"):
        load_statements("store.sql")["nope"]


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
