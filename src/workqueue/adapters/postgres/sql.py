"""Named SQL statements, loaded from the ``.sql`` files beside this module.

Every statement the PostgreSQL adapter runs lives in ``sql/*.sql`` (migrations
in ``migrations/``), never in a Python string, and is parameterized: values
travel as ``$1, $2, ...`` and no SQL is built by formatting. A file holds one or
more statements, each introduced by a ``-- name: <name>`` line::

    -- name: get
    -- Comments under the name say why the statement is written as it is.
    SELECT * FROM work_items WHERE id = $1;

A trailing semicolon is dropped, so each statement can be prepared on its own.

There is one way to reach a statement: a module loads its file once, at import,
and names the statement where it runs it::

    _SQL = load_statements("store.sql")
    ...
    row = await connection.fetchrow(_SQL["get"], item_id)

Each file has one reader: ``store.sql`` the work store, ``tokens.sql`` the token
store, and so on. ``queue.sql``, the only insert path, is loaded by
``queue_sql.py`` alone, which only the work queue may import (an import-linter
contract).
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from functools import cache
from importlib.resources import files

__all__ = ["StatementFile", "load_statements", "parse_statements"]

_PACKAGE = "workqueue.adapters.postgres"

_NAME_LINE = re.compile(r"^--\s*name:\s*(?P<name>[a-z_][a-z0-9_]*)\s*$", re.MULTILINE)


class StatementFile(Mapping[str, str]):
    """The named statements of one ``.sql`` file, read-only.

    :raises KeyError: on lookup of a name the file does not define, naming the file.
    """

    def __init__(self, file_name: str, statements: Mapping[str, str]) -> None:
        self.file_name = file_name
        self._statements = dict(statements)

    def __getitem__(self, name: str) -> str:
        try:
            return self._statements[name]
        except KeyError:
            raise KeyError(f"{self.file_name} defines no statement named {name!r}") from None

    def __iter__(self) -> Iterator[str]:
        return iter(self._statements)

    def __len__(self) -> int:
        return len(self._statements)


def parse_statements(file_name: str, text: str) -> StatementFile:
    """Split ``text`` into its named statements.

    :raises ValueError: if the file names no statement, names one twice, has SQL
        before its first name line, or has a name with no SQL under it.
    """
    matches = list(_NAME_LINE.finditer(text))
    if not matches:
        raise ValueError(f"{file_name} has no '-- name: ...' line")
    if _has_sql(text[: matches[0].start()]):
        raise ValueError(f"{file_name} has SQL before its first '-- name: ...' line")
    statements: dict[str, str] = {}
    for index, match in enumerate(matches):
        name = match["name"]
        end = matches[index + 1].start() if index + 1 < len(matches) else len(text)
        body = text[match.end() : end].strip().removesuffix(";").rstrip()
        if name in statements:
            raise ValueError(f"{file_name} names the statement {name!r} twice")
        if not _has_sql(body):
            raise ValueError(f"{file_name}: the statement {name!r} is empty")
        statements[name] = body
    return StatementFile(file_name, statements)


@cache
def load_statements(file_name: str) -> StatementFile:
    """The named statements of ``sql/<file_name>``, read once per process.

    :raises FileNotFoundError: if there is no such file.
    :raises ValueError: if the file is malformed (see :func:`parse_statements`).
    """
    return _read_statements(file_name)


def _read_statements(file_name: str) -> StatementFile:
    # Apart from the cache so that mutmut, which skips decorated functions, mutates it.
    # bytes.decode() is UTF-8 whatever the locale, unlike read_text().
    text = files(_PACKAGE).joinpath("sql", file_name).read_bytes().decode()
    return parse_statements(file_name, text)


def _has_sql(text: str) -> bool:
    """Whether ``text`` holds a line that is neither blank nor a ``--`` comment."""
    return any(line.strip() and not line.strip().startswith("--") for line in text.splitlines())
