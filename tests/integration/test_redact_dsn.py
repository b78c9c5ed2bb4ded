"""A DSN shown in a log or an error never shows its password."""

from __future__ import annotations

import pytest

from workqueue.adapters.postgres import redact_dsn

CASES = {
    "password in the user part": (
        "postgresql://app:s3cret@db.internal:5432/queue",
        "postgresql://app:***@db.internal:5432/queue",
    ),
    "password with an @ in it": (
        "postgresql://app:p@ss@db/queue",
        "postgresql://app:***@db/queue",
    ),
    "password in the query": (
        "postgresql://app@db/queue?sslmode=require&password=s3cret",
        "postgresql://app@db/queue?sslmode=require&password=***",
    ),
    "keyword DSN": (
        "host=db user=app password=s3cret dbname=queue",
        "host=db user=app password=*** dbname=queue",
    ),
    "quoted keyword password": (
        "host=db password='s3 cret' dbname=queue",
        "host=db password=*** dbname=queue",
    ),
    "no password": ("postgresql://app@db/queue", "postgresql://app@db/queue"),
    "empty password": (
        "postgresql://postgres:@/postgres?host=/tmp/pg",
        "postgresql://postgres:@/postgres?host=/tmp/pg",
    ),
}


@pytest.mark.parametrize(("dsn", "shown"), CASES.values(), ids=CASES.keys())
def test_the_password_is_hidden_and_everything_else_kept(dsn: str, shown: str) -> None:
    assert redact_dsn(dsn) == shown
    assert "s3cret" not in redact_dsn(dsn)


class TestOnlyThePasswordIsHidden:
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
