"""The PostgreSQL adapter's parts that need no server: DSNs, statement files, rows, errors."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import asyncpg
import pytest

from adapters.postgres import SchemaNotCurrentError, is_connection_loss, redact_dsn
from adapters.postgres import schema as schema_module
from adapters.postgres.enqueue_plan import CheckedBatch, CheckedRequest, check_batch, check_request
from adapters.postgres.pool import _dump_json
from adapters.postgres.rows import work_item_from_row
from adapters.postgres.schema import _column_line, schema_difference
from adapters.postgres.sql import parse_statements
from adapters.postgres.unavailable import connection_loss_as_unavailable
from domain import (
    EnqueueRequest,
    InvalidDedupKeyError,
    InvalidPayloadError,
    StoreUnavailableError,
    TokenCleanup,
    WorkItem,
    WorkItemRetention,
    WorkStatus,
)

T0 = datetime(2026, 1, 1, tzinfo=UTC)


class TestRedaction:
    @pytest.mark.parametrize(
        ("dsn", "shown"),
        [
            ("postgresql://app:pa:ss@db/queue", "postgresql://app:***@db/queue"),
            ("postgresql://app@db/queue", "postgresql://app@db/queue"),
            ("postgresql://db:5432/queue", "postgresql://db:5432/queue"),
            (
                "postgresql://app@db/queue?password=s3cret&application_name=",
                "postgresql://app@db/queue?password=***&application_name=",
            ),
            (
                "postgresql://app@db/queue?options=-c%20search_path%3Dq&sslmode=require",
                "postgresql://app@db/queue?options=-c%20search_path%3Dq&sslmode=require",
            ),
            (
                "postgresql://app@/queue?host=/run/pg&password=s3cret",
                "postgresql://app@/queue?host=/run/pg&password=***",
            ),
        ],
        ids=["colon-in-password", "user-only", "no-user", "blank-beside", "no-password", "socket"],
    )
    def test_only_the_password_changes(self, dsn: str, shown: str) -> None:
        assert redact_dsn(dsn) == shown


class TestStatementFiles:
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


class TestConnectionLoss:
    @pytest.mark.parametrize(
        ("error", "lost"),
        [
            (ConnectionResetError("reset"), True),
            (asyncpg.PostgresConnectionError("gone"), True),
            (asyncpg.AdminShutdownError("shutdown"), True),
            (asyncpg.InterfaceError("connection is closed"), True),
            (asyncpg.ClientConfigurationError("bad option"), False),
            (asyncpg.UnsupportedServerFeatureError("no"), False),
            (asyncpg.InternalClientError("cannot switch to state 15"), True),
            (asyncpg.InternalClientError("another operation is in progress"), True),
            (asyncpg.InternalClientError("a bug"), False),
            (asyncpg.UniqueViolationError("duplicate"), False),
            (ValueError("a bug"), False),
        ],
        ids=lambda value: type(value).__name__ if isinstance(value, Exception) else str(value),
    )
    def test_only_errors_that_mean_the_session_is_gone_count(
        self, error: Exception, lost: bool
    ) -> None:
        assert is_connection_loss(error) is lost


def test_a_row_reads_as_the_work_item_it_holds() -> None:
    row: dict[str, Any] = {
        "id": 4,
        "kind": "token_cleanup",
        "payload": {"a": 1},
        "status": "running",
        "attempt": 2,
        "stalls": 1,
        "dedup_key": "periodic",
        "enqueued_at": T0,
        "started_at": T0.replace(minute=1),
        "heartbeat_at": T0.replace(minute=2),
        "lease_expires_at": T0.replace(minute=3),
        "finished_at": None,
        "worker_id": "w-1",
        "progress": {"deleted": 3},
        "error": None,
    }

    item = work_item_from_row(row)  # type: ignore[arg-type]

    assert item == WorkItem(
        id=4,
        kind="token_cleanup",
        payload={"a": 1},
        status=WorkStatus.RUNNING,
        attempt=2,
        stalls=1,
        dedup_key="periodic",
        enqueued_at=T0,
        started_at=T0.replace(minute=1),
        heartbeat_at=T0.replace(minute=2),
        lease_expires_at=T0.replace(minute=3),
        finished_at=None,
        worker_id="w-1",
        progress={"deleted": 3},
        error=None,
    )
    assert isinstance(item.status, WorkStatus)


def test_a_row_with_a_status_that_is_not_one_is_refused_naming_it() -> None:
    row: dict[str, Any] = dict.fromkeys(
        ("id", "kind", "payload", "attempt", "stalls", "dedup_key", "enqueued_at")
    ) | {"status": "paused"}

    with pytest.raises(ValueError, match=r"^'paused' is not a valid WorkStatus$"):
        work_item_from_row(row)  # type: ignore[arg-type]


def test_a_finished_row_keeps_its_finish_and_its_error() -> None:
    row: dict[str, Any] = {
        "id": 5,
        "kind": "token_cleanup",
        "payload": {},
        "status": "failed",
        "attempt": 1,
        "stalls": 0,
        "dedup_key": None,
        "enqueued_at": T0,
        "started_at": T0,
        "heartbeat_at": T0,
        "lease_expires_at": None,
        "finished_at": T0.replace(minute=9),
        "worker_id": "w-1",
        "progress": None,
        "error": "RuntimeError: no",
    }

    item = work_item_from_row(row)  # type: ignore[arg-type]

    assert (item.status, item.finished_at, item.error) == (
        WorkStatus.FAILED,
        T0.replace(minute=9),
        "RuntimeError: no",
    )


def test_a_schema_with_unknown_migrations_names_them_all() -> None:
    error = SchemaNotCurrentError([], ["0008_x", "0009_y"])

    assert str(error) == (
        "the database schema is not current: it has migrations this code does not know: "
        "0008_x, 0009_y (the database was migrated by a newer version; deploy that version)"
    )


def test_a_schema_that_lacks_migrations_says_how_to_apply_them() -> None:
    error = SchemaNotCurrentError(["0002_b", "0003_c"], [])

    assert (error.missing, error.unknown) == (["0002_b", "0003_c"], [])
    assert str(error) == (
        "the database schema is not current: it lacks the migrations 0002_b, 0003_c "
        "(apply them first; from a shell: python -m adapters.postgres.schema --database-url URL)"
    )


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


class TestWhatTheQueueSends:
    def test_a_request_is_sent_as_its_kind_compact_json_and_dedup_key(self) -> None:
        request = EnqueueRequest(WorkItemRetention(retention_days=7), "nightly")

        assert check_request(request) == CheckedRequest(
            kind="work_item_retention",
            payload_json='{"retention_days":7.0}',
            dedup_key="nightly",
        )

    def test_a_request_with_an_unusable_dedup_key_is_refused_before_sending(self) -> None:
        with pytest.raises(InvalidDedupKeyError):
            check_request(EnqueueRequest(TokenCleanup(), ""))

    def test_a_batch_is_sent_as_lists_of_kinds_stored_payloads_and_keys_in_order(self) -> None:
        requests = [
            EnqueueRequest(WorkItemRetention(retention_days=7), "nightly"),
            EnqueueRequest(TokenCleanup()),
            EnqueueRequest(WorkItemRetention(retention_days=1.5)),
        ]

        assert check_batch(requests) == CheckedBatch(
            kinds=["work_item_retention", "token_cleanup", "work_item_retention"],
            payloads=[{"retention_days": 7.0}, {}, {"retention_days": 1.5}],
            dedup_keys=["nightly", None, None],
        )

    def test_a_batch_with_an_unusable_dedup_key_is_refused(self) -> None:
        requests = [EnqueueRequest(TokenCleanup()), EnqueueRequest(TokenCleanup(), " ")]

        with pytest.raises(InvalidDedupKeyError, match=r"^dedup key must not be empty or blank$"):
            check_batch(requests)

    def test_a_bad_payload_before_a_bad_key_is_what_a_batch_is_refused_for(self) -> None:
        mistyped = WorkItemRetention.model_construct(retention_days="a week")
        requests = [EnqueueRequest(mistyped), EnqueueRequest(TokenCleanup(), "")]

        with pytest.raises(InvalidPayloadError, match="retention_days"):
            check_batch(requests)

    def test_json_parameters_are_sent_compact(self) -> None:
        assert _dump_json({"deleted": [1, 2], "note": "é"}) == '{"deleted":[1,2],"note":"\\u00e9"}'


class TestLostConnections:
    def test_a_lost_connection_becomes_store_unavailable_naming_the_error(self) -> None:
        with pytest.raises(StoreUnavailableError) as raised, connection_loss_as_unavailable():
            raise ConnectionResetError("reset by peer")

        assert str(raised.value) == (
            "PostgreSQL is unavailable: ConnectionResetError: reset by peer"
        )
        assert isinstance(raised.value.__cause__, ConnectionResetError)

    def test_any_other_error_passes_through_unchanged(self) -> None:
        error = asyncpg.UniqueViolationError("duplicate key")

        with (
            pytest.raises(asyncpg.UniqueViolationError) as raised,
            connection_loss_as_unavailable(),
        ):
            raise error

        assert raised.value is error


class TestSchemaCommand:
    """``python -m adapters.postgres.schema``, with the database's answer scripted."""

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
        assert err.startswith("usage: python -m adapters.postgres.schema [-h] --database-url")
        assert "the following arguments are required: --database-url" in err
        assert "argument --check: not allowed with argument --write" in err

    def test_the_help_names_each_option(
        self, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
    ) -> None:
        monkeypatch.setenv("COLUMNS", "80")

        with pytest.raises(SystemExit):
            schema_module.main(["--help"])

        assert capsys.readouterr().out == (
            "usage: python -m adapters.postgres.schema [-h] --database-url DATABASE_URL\n"
            "                                          [--write PATH | --check PATH]\n"
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
