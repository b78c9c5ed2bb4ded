"""docs/schema.sql is the schema a fresh database has after every migration."""

from __future__ import annotations

import asyncio
from pathlib import Path

import asyncpg
import pytest

from workqueue.adapters.postgres.schema import describe_schema, main, schema_difference

SCHEMA_DOC = Path(__file__).resolve().parents[2] / "docs" / "schema.sql"
REGENERATE = (
    "python -m workqueue.adapters.postgres.schema --database-url URL --write docs/schema.sql"
)


def describe(url: str) -> str:
    return asyncio.run(describe_schema(url))


def test_docs_schema_sql_matches_a_freshly_migrated_database(database_url: str) -> None:
    difference = schema_difference(
        SCHEMA_DOC.read_text(encoding="utf-8"),
        describe(database_url),
        expected_name="docs/schema.sql",
        actual_name="a freshly migrated database",
    )

    assert not difference, (
        f"docs/schema.sql is stale; regenerate it with\n  {REGENERATE}\n\n{difference}"
    )


async def add_a_column_behind_the_documents_back(url: str) -> None:
    connection = await asyncpg.connect(url)
    try:
        await connection.execute("ALTER TABLE work_items ADD COLUMN weight integer")
    finally:
        await connection.close()


def test_the_comparison_reports_a_schema_change_that_was_not_regenerated(
    database_url: str,
) -> None:
    asyncio.run(add_a_column_behind_the_documents_back(database_url))

    difference = schema_difference(SCHEMA_DOC.read_text(encoding="utf-8"), describe(database_url))

    assert "+    weight integer," in difference.splitlines()


def test_the_check_command_fails_on_a_stale_document(
    database_url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    stale = tmp_path / "schema.sql"
    stale.write_text(
        SCHEMA_DOC.read_text(encoding="utf-8").replace("fillfactor=80", "fillfactor=90")
    )

    status = main(["--database-url", database_url, "--check", str(stale)])

    assert status == 1
    assert "+) WITH (fillfactor=80" in capsys.readouterr().out


def test_the_write_command_writes_what_the_check_command_accepts(
    database_url: str, tmp_path: Path
) -> None:
    written = tmp_path / "schema.sql"

    assert main(["--database-url", database_url, "--write", str(written)]) == 0
    assert main(["--database-url", database_url, "--check", str(written)]) == 0
    assert written.read_text(encoding="utf-8") == SCHEMA_DOC.read_text(encoding="utf-8")
