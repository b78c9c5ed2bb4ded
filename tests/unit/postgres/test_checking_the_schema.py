"""The schema: the migrations this code ships, what a database that lacks them is told,
and the schema document (``python -m workqueue.adapters.postgres.schema``), database-free.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from workqueue.adapters.postgres import MigrationError, SchemaNotCurrentError, available_migrations
from workqueue.adapters.postgres import migrations as migrations_module
from workqueue.adapters.postgres import schema as schema_module
from workqueue.adapters.postgres.schema import _column_line, schema_difference
from workqueue.domain import WorkQueueError


class TestASchemaThatIsNotCurrent:
    def test_missing_migrations_are_named_with_the_one_command_that_applies_them(self) -> None:
        error = SchemaNotCurrentError(["0002_b", "0003_c"], [])

        assert (error.missing, error.unknown) == (["0002_b", "0003_c"], [])
        assert str(error) == (
            "database is not migrated: run `workqueue migrate` (missing: 0002_b, 0003_c)"
        )

    def test_unknown_migrations_are_named_and_the_newer_version_asked_for(self) -> None:
        error = SchemaNotCurrentError([], ["0008_x", "0009_y"])

        assert str(error) == (
            "database has migrations this code does not know (0008_x, 0009_y): it was "
            "migrated by a newer version of workqueue; run that version"
        )

    def test_both_are_said_in_one_line(self) -> None:
        error = SchemaNotCurrentError(["0002_b"], ["0009_y"])

        assert str(error) == (
            "database is not migrated: run `workqueue migrate` (missing: 0002_b); "
            "database has migrations this code does not know (0009_y): it was "
            "migrated by a newer version of workqueue; run that version"
        )

    def test_it_is_one_of_the_queues_errors(self) -> None:
        assert issubclass(SchemaNotCurrentError, WorkQueueError)
        assert issubclass(MigrationError, WorkQueueError)


class OtherFilesFirst:
    """A package's files, listed with what is not a migration first, whatever the disk says."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory

    def joinpath(self, name: str) -> OtherFilesFirst:
        return OtherFilesFirst(self.directory / name)

    def iterdir(self) -> list[Path]:
        return sorted(self.directory.iterdir(), key=lambda path: (path.suffix == ".sql", path))


class TestTheShippedMigrations:
    @pytest.fixture
    def shipped(self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
        """An empty migrations directory standing in for the package's, read afresh."""
        (tmp_path / "migrations").mkdir()
        monkeypatch.setattr(migrations_module, "files", lambda package: OtherFilesFirst(tmp_path))
        available_migrations.cache_clear()
        yield tmp_path / "migrations"
        monkeypatch.undo()
        available_migrations.cache_clear()

    def test_the_migrations_are_read_in_version_order_with_their_sql(self, shipped: Path) -> None:
        (shipped / "0002_more.sql").write_text("SELECT 2;\n", encoding="utf-8")
        (shipped / "0001_first.sql").write_text("SELECT 'é';\n", encoding="utf-8")
        (shipped / "README").write_text("not a migration", encoding="utf-8")

        migrations = available_migrations()

        assert [(m.version, m.name, m.sql) for m in migrations] == [
            (1, "0001_first", "SELECT 'é';\n"),
            (2, "0002_more", "SELECT 2;\n"),
        ]
        assert available_migrations() is migrations  # read once

    @pytest.mark.parametrize("name", ["1_first.sql", "0001-first.sql", "0001_First.sql"])
    def test_a_file_not_named_nnnn_name_is_refused_naming_it(
        self, shipped: Path, name: str
    ) -> None:
        (shipped / name).write_text("SELECT 1;", encoding="utf-8")

        with pytest.raises(MigrationError) as refused:
            available_migrations()

        assert str(refused.value) == f"migration file {name!r} is not named NNNN_name.sql"

    @pytest.mark.parametrize(
        ("names", "versions"),
        [(["0002_b.sql"], [2]), (["0001_a.sql", "0003_c.sql"], [1, 3])],
        ids=["not from one", "a gap"],
    )
    def test_versions_must_run_from_one_without_gaps(
        self, shipped: Path, names: list[str], versions: list[int]
    ) -> None:
        for name in names:
            (shipped / name).write_text("SELECT 1;", encoding="utf-8")

        with pytest.raises(MigrationError) as refused:
            available_migrations()

        assert str(refused.value) == (
            f"migration versions must run 1, 2, 3, ... without gaps: {versions}"
        )

    def test_the_package_ships_its_migrations_from_one_up(self) -> None:
        versions = [migration.version for migration in available_migrations()]

        assert versions == list(range(1, len(versions) + 1))
        assert available_migrations()[0].name == "0001_work_items"


class TestSchemaDocument:
    @pytest.mark.parametrize(
        ("column", "line"),
        [
            (
                {
                    "name": "id",
                    "type": "bigint",
                    "not_null": True,
                    "default_value": None,
                    "identity": "a",
                },
                "id bigint NOT NULL GENERATED ALWAYS AS IDENTITY",
            ),
            (
                {
                    "name": "n",
                    "type": "integer",
                    "not_null": True,
                    "default_value": None,
                    "identity": "d",
                },
                "n integer NOT NULL GENERATED BY DEFAULT AS IDENTITY",
            ),
            (
                {
                    "name": "attempt",
                    "type": "integer",
                    "not_null": True,
                    "default_value": "0",
                    "identity": "",
                },
                "attempt integer NOT NULL DEFAULT 0",
            ),
            (
                {
                    "name": "error",
                    "type": "text",
                    "not_null": False,
                    "default_value": None,
                    "identity": "",
                },
                "error text",
            ),
        ],
    )
    def test_a_column_reads_as_its_definition(self, column: dict[str, Any], line: str) -> None:
        assert _column_line(column) == line  # type: ignore[arg-type]

    def test_the_difference_of_two_schemas_is_a_unified_diff_naming_both(self) -> None:
        difference = schema_difference(
            "a\nb\n", "a\nc\n", expected_name="docs/schema.sql", actual_name="the database"
        )

        assert difference == (
            "--- docs/schema.sql\n+++ the database\n@@ -1,2 +1,2 @@\n a\n-b\n+c\n"
        )
        assert schema_difference("a\n", "a\n") == ""
        assert schema_difference("a\n", "b\n").startswith("--- expected\n+++ actual\n")


class TestSchemaCommand:
    """``python -m workqueue.adapters.postgres.schema``, with the database's answer scripted."""

    SCHEMA = "CREATE TABLE work_items ();\n"

    @pytest.fixture(autouse=True)
    def asked(self, monkeypatch: pytest.MonkeyPatch) -> list[str]:
        """The database URLs the command was given, in order."""
        asked: list[str] = []

        async def migrate_and_describe(database_url: str) -> str:
            asked.append(database_url)
            return self.SCHEMA

        monkeypatch.setattr(schema_module, "_migrate_and_describe", migrate_and_describe)
        return asked

    def test_without_an_option_the_schema_is_printed(
        self, capsys: pytest.CaptureFixture[str], asked: list[str]
    ) -> None:
        assert schema_module.main(["--database-url", "postgresql://x/db"]) == 0

        assert capsys.readouterr().out == self.SCHEMA
        assert asked == ["postgresql://x/db"]

    def test_write_puts_the_schema_in_the_file_and_says_so(
        self, tmp_path: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        target = tmp_path / "schema.sql"

        status = schema_module.main(["--database-url", "u", "--write", str(target)])

        assert status == 0
        assert target.read_text(encoding="utf-8") == self.SCHEMA
        assert capsys.readouterr().out == f"wrote {target}\n"

    def test_check_of_a_current_document_says_so(
        self, tmp_path: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        document = tmp_path / "schema.sql"
        document.write_text(self.SCHEMA, encoding="utf-8")

        assert schema_module.main(["--database-url", "u", "--check", str(document)]) == 0

        assert capsys.readouterr().out == f"{document} is current\n"

    def test_check_of_a_stale_document_prints_the_diff_and_fails(
        self, tmp_path: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        document = tmp_path / "schema.sql"
        document.write_text("CREATE TABLE old ();\n", encoding="utf-8")

        assert schema_module.main(["--database-url", "u", "--check", str(document)]) == 1

        captured = capsys.readouterr()
        assert captured.out == (
            f"--- {document}\n+++ the migrated database\n@@ -1 +1 @@\n"
            "-CREATE TABLE old ();\n+CREATE TABLE work_items ();\n"
        )
        assert captured.err == f"{document} is stale: regenerate it with --write\n"

    def test_the_database_url_is_required_and_write_and_check_exclude_each_other(
        self, capsys: pytest.CaptureFixture[str]
    ) -> None:
        with pytest.raises(SystemExit) as missing:
            schema_module.main([])
        with pytest.raises(SystemExit) as both:
            schema_module.main(["--database-url", "u", "--write", "a", "--check", "b"])

        assert (missing.value.code, both.value.code) == (2, 2)
        err = capsys.readouterr().err
        assert err.startswith(
            "usage: python -m workqueue.adapters.postgres.schema [-h] --database-url"
        )
        assert "the following arguments are required: --database-url" in err
        assert "argument --check: not allowed with argument --write" in err

    def test_the_help_names_each_option(
        self, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
    ) -> None:
        monkeypatch.setenv("COLUMNS", "80")

        with pytest.raises(SystemExit):
            schema_module.main(["--help"])

        assert capsys.readouterr().out == (
            "usage: python -m workqueue.adapters.postgres.schema [-h] --database-url\n"
            "                                                    DATABASE_URL\n"
            "                                                    [--write PATH | --check PATH]\n"
            "\n"
            "Migrate a PostgreSQL database and print, write or check its schema.\n"
            "\n"
            "options:\n"
            "  -h, --help            show this help message and exit\n"
            "  --database-url DATABASE_URL\n"
            "                        postgresql://user@host/db\n"
            "  --write PATH          write the schema to PATH\n"
            "  --check PATH          exit 1 if PATH is stale\n"
        )
