"""Named SQL statements, loaded from the ``.sql`` files beside this module.

Every statement the PostgreSQL adapter runs lives in ``sql/*.sql`` (migrations
in ``migrations/``), never in a Python string, and is parameterized: values
travel as ``$1, $2, ...`` and no SQL is built by formatting. A file holds one or
more statements, each introduced by a ``-- name: <name>`` line::

    -- name: get
    -- Comments under the name say why the statement is written as it is.
    SELECT * FROM work_items WHERE id = $1;

A trailing semicolon is dropped, so each statement can be prepared on its own.

What several statements share is written once, as a fragment (a ``-- fragment:
<name>`` section, which is not a statement) that they include as ``{{name}}``.
``{{item_columns}}`` is every column of ``work_items`` that a
:class:`~workqueue.domain.WorkItem` holds, in its order (``{{item_columns:w}}``
prefixes each with ``w.``): the one list of them, owned by
:mod:`~workqueue.adapters.postgres.columns`. Placeholders are replaced when the
file is loaded, never with values: parameters stay ``$n``.

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

from workqueue.adapters.postgres.columns import item_columns

__all__ = ["StatementFile", "load_statements", "parse_statements"]

_PACKAGE = "workqueue.adapters.postgres"

_NAME_LINE = re.compile(
    r"^--\s*(?P<what>name|fragment):\s*(?P<name>[a-z_][a-z0-9_]*)\s*$", re.MULTILINE
)
_PLACEHOLDER = re.compile(r"\{\{(?P<name>[a-z_][a-z0-9_]*)(?::(?P<alias>[a-z_][a-z0-9_]*))?\}\}")
# A fragment may include fragments; deeper than this is a cycle.
_MOST_NESTED_FRAGMENTS = 4


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
    if not any(match["what"] == "name" for match in matches):
        raise ValueError(f"{file_name} has no '-- name: ...' line")
    if _has_sql(text[: matches[0].start()]):
        raise ValueError(f"{file_name} has SQL before its first '-- name: ...' line")
    sections: dict[str, dict[str, str]] = {"name": {}, "fragment": {}}
    for index, match in enumerate(matches):
        name, kind = match["name"], match["what"]
        what = "statement" if kind == "name" else "fragment"
        end = matches[index + 1].start() if index + 1 < len(matches) else len(text)
        body = text[match.end() : end].strip().removesuffix(";").rstrip()
        if name in sections["name"] or name in sections["fragment"]:
            raise ValueError(f"{file_name} names the {what} {name!r} twice")
        if not _has_sql(body):
            raise ValueError(f"{file_name}: the {what} {name!r} is empty")
        sections[kind][name] = body
    fragments = sections["fragment"]
    statements = {
        name: _rendered(file_name, body, fragments, 0) for name, body in sections["name"].items()
    }
    return StatementFile(file_name, statements)


def _rendered(file_name: str, text: str, fragments: Mapping[str, str], depth: int) -> str:
    """``text`` with each ``{{placeholder}}`` replaced (see the module's docstring).

    :raises ValueError: naming the file, for a placeholder that names nothing, or
        fragments that include each other.
    """
    if depth > _MOST_NESTED_FRAGMENTS:
        raise ValueError(f"{file_name}: fragments nested too deep (do two include each other?)")

    def replacement(match: re.Match[str]) -> str:
        name, alias = match["name"], match["alias"]
        if name == "item_columns":
            return item_columns(alias)
        if name not in fragments or alias is not None:
            raise ValueError(f"{file_name}: {match[0]} names no fragment")
        return _rendered(
            file_name, _without_leading_comments(fragments[name]), fragments, depth + 1
        )

    return _PLACEHOLDER.sub(replacement, text)


def _without_leading_comments(text: str) -> str:
    """A fragment without the comment lines it opens with: they say why once, in the file."""
    lines = text.splitlines()
    while lines and lines[0].strip().startswith("--"):
        lines.pop(0)
    return "\n".join(lines)


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
