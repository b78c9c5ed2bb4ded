"""The architecture rules hold on the real tree, and each one bites when broken.

Each rule is checked twice: on the tree as it is (kept), and on a copy of the
tree with one deliberate violation planted (reported BROKEN). The checkers run
in a subprocess with the copy on PYTHONPATH, because an in-process check would
silently look at the already-imported original tree.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SRC = ROOT / "src"
# The one import root; paths below are relative to it.
PACKAGE = SRC / "workqueue"
LINT_IMPORTS = Path(sys.executable).with_name("lint-imports")
SCAN_HANDLERS = Path(__file__).with_name("scan_handlers.py")

# The one place that may insert into work_items: the WorkQueues' statement file...
INSERT_STATEMENT_FILES = {"adapters/postgres/sql/queue.sql"}
# Test support, not an insert path: the contract kit's PostgreSQL back door sets up
# rows exactly as a test gives them (ADR 0013). Named here so it is the only other.
BACKDOOR_STATEMENT_FILES = {"adapters/testing/postgres/backdoor.sql"}
INSERT_INTO_WORK_ITEMS = re.compile(r"insert\s+into\s+(?:\w+\.)?\"?work_items\b", re.IGNORECASE)
# ... and the one module that loads it (imported only by the two WorkQueues, as the
# import contract only-the-queue-loads-the-insert checks).
QUEUE_STATEMENT_LOADER = "adapters/postgres/queue_sql.py"
# The file's name as a string literal, the way load_statements is given it.
NAMES_THE_QUEUE_FILE = re.compile(r"""["'](?:sql/)?queue\.sql["']""")


def copy_tree(tmp_path: Path) -> Path:
    shutil.copytree(SRC, tmp_path / "src", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    return tmp_path


def plant(tree: Path, relative: str, text: str) -> None:
    target = tree / "src" / "workqueue" / relative
    target.write_text("from __future__ import annotations\n\n" + text + "\n")


def lint_imports(tree: Path, contract: str | None = None) -> subprocess.CompletedProcess[str]:
    args = [str(LINT_IMPORTS), "--no-cache"]
    if contract:
        args += ["--contract", contract]
    env = {**os.environ, "PYTHONPATH": str(tree / "src")}
    return subprocess.run(args, cwd=tree, env=env, capture_output=True, text=True, timeout=120)


def scan_handlers(tree: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(tree / "src")}
    return subprocess.run(
        [sys.executable, str(SCAN_HANDLERS), str(tree / "src")],
        cwd=tree,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def modules_naming_the_queue_statements(src: Path) -> list[str]:
    return [
        path.relative_to(src).as_posix()
        for path in sorted(src.rglob("*.py"))
        if path.relative_to(src).as_posix() != QUEUE_STATEMENT_LOADER
        and NAMES_THE_QUEUE_FILE.search(path.read_text())
    ]


def inserts_into_work_items(src: Path) -> list[str]:
    offenders = []
    for path in sorted([*src.rglob("*.py"), *src.rglob("*.sql")]):
        relative = path.relative_to(src).as_posix()
        if relative in INSERT_STATEMENT_FILES | BACKDOOR_STATEMENT_FILES:
            continue
        if INSERT_INTO_WORK_ITEMS.search(path.read_text()):
            offenders.append(relative)
    return offenders


def test_the_real_tree_keeps_every_import_contract() -> None:
    result = lint_imports(ROOT)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "BROKEN" not in result.stdout


@pytest.mark.parametrize(
    ("contract", "relative", "violation"),
    [
        ("layers", "domain/planted.py", "import workqueue.application"),
        ("layers", "application/planted.py", "import workqueue.adapters.memory"),
        ("layers", "adapters/planted.py", "import workqueue.entrypoints.cli"),
        ("pure-core", "domain/planted.py", "import asyncpg"),
        ("pure-core", "application/planted.py", "import dependency_injector"),
        ("pure-core", "domain/planted.py", "import pgserver"),
        ("asyncpg-in-postgres-adapter", "adapters/memory/planted.py", "import asyncpg"),
        ("asyncpg-in-postgres-adapter", "adapters/psycopg/planted.py", "import asyncpg"),
        (
            "only-the-queue-loads-the-insert",
            "adapters/postgres/planted.py",
            "from workqueue.adapters.postgres import queue_sql",
        ),
        (
            "only-the-queue-loads-the-insert",
            "adapters/psycopg/planted.py",
            "from workqueue.adapters.postgres.queue_sql import STATEMENTS",
        ),
        ("psycopg-in-psycopg-adapter", "adapters/postgres/planted.py", "import psycopg"),
        ("psycopg-in-psycopg-adapter", "adapters/testing/planted.py", "import psycopg_pool"),
        ("psycopg-in-psycopg-adapter", "application/planted.py", "import psycopg"),
    ],
)
def test_a_planted_violation_breaks_its_import_contract(
    tmp_path: Path, contract: str, relative: str, violation: str
) -> None:
    tree = copy_tree(tmp_path)
    plant(tree, relative, violation)
    result = lint_imports(tree, contract)
    assert result.returncode == 1, result.stdout + result.stderr
    assert "BROKEN" in result.stdout


def test_the_real_tree_defines_handlers_only_in_the_worker_entrypoint() -> None:
    result = scan_handlers(ROOT)
    assert result.returncode == 0, result.stdout + result.stderr


def test_a_handler_planted_in_the_application_layer_is_reported(tmp_path: Path) -> None:
    tree = copy_tree(tmp_path)
    plant(
        tree,
        "application/planted.py",
        "from workqueue.domain import TokenCleanup, WorkContext, WorkHandler\n\n\n"
        "class SneakyHandler(WorkHandler[TokenCleanup]):\n"
        "    async def handle(self, payload: TokenCleanup, ctx: WorkContext) -> None:\n"
        "        return None\n",
    )
    result = scan_handlers(tree)
    assert result.returncode == 1
    assert "workqueue.application.planted.SneakyHandler" in result.stdout
    assert "BROKEN" in result.stdout


def test_only_the_queue_statement_inserts_into_work_items() -> None:
    assert inserts_into_work_items(PACKAGE) == []
    for allowed in INSERT_STATEMENT_FILES | BACKDOOR_STATEMENT_FILES:
        assert INSERT_INTO_WORK_ITEMS.search((PACKAGE / allowed).read_text())


def test_only_the_queue_statement_loader_names_the_queue_statement_file() -> None:
    assert modules_naming_the_queue_statements(PACKAGE) == []
    assert NAMES_THE_QUEUE_FILE.search((PACKAGE / QUEUE_STATEMENT_LOADER).read_text())


def test_a_second_loader_of_the_queue_statements_is_found(tmp_path: Path) -> None:
    tree = copy_tree(tmp_path)
    plant(
        tree,
        "adapters/postgres/planted.py",
        "from workqueue.adapters.postgres.sql import load_statements\n\n"
        'SQL = load_statements("queue.sql")',
    )
    assert modules_naming_the_queue_statements(tree / "src" / "workqueue") == [
        "adapters/postgres/planted.py"
    ]


def test_an_insert_planted_outside_the_queue_is_found(tmp_path: Path) -> None:
    tree = copy_tree(tmp_path)
    (tree / "src/workqueue/adapters/postgres/sql/planted.sql").write_text(
        "-- name: sneak\nINSERT INTO work_items (kind, payload) VALUES ($1, $2);\n"
    )
    plant(tree, "adapters/memory/planted.py", 'SQL = "insert into public.work_items values (1)"')
    plant(tree, "adapters/psycopg/planted.py", 'SQL = "INSERT INTO work_items DEFAULT VALUES"')
    assert inserts_into_work_items(tree / "src" / "workqueue") == [
        "adapters/memory/planted.py",
        "adapters/postgres/sql/planted.sql",
        "adapters/psycopg/planted.py",
    ]
