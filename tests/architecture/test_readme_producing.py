"""The README's blocks on installing and producing work as a newcomer copies them: each type-checks
under mypy strict on its own (a block that starts with ``# myapp/NAME.py`` is that file of the
reader's application, which the others import), and the producer blocks run against PostgreSQL
without a warning."""

from __future__ import annotations

import asyncio
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import asyncpg
import pytest
from tests.architecture.test_readme_snippets import python_blocks, section

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text(encoding="utf-8")
SECTIONS = ("## Installing it in your application", "## Producing from your application")
# The address every producer block connects to, as a reader would replace it.
README_DATABASE_URL = "postgresql://app@db/app"
_FILE = re.compile(r"^# (?P<path>myapp/\w+\.py)\n")
# Django has no type information of its own; the reader's Django model is theirs.
_MYPY_CONFIG = """
[mypy]
strict = True
[mypy-django.*,myapp.models]
ignore_missing_imports = True
"""


def blocks() -> list[str]:
    return [code for heading in SECTIONS for code in python_blocks(section(README, heading))]


def application_files() -> dict[str, str]:
    return {match["path"]: code for code in blocks() if (match := _FILE.match(code))}


def as_module(code: str) -> str:
    """A block as a module: top-level awaits run inside an async function."""
    if not re.search(r"^(await |async with |async for )|= await ", code, re.MULTILINE):
        return code
    imports = [line for line in code.splitlines() if line.startswith(("import ", "from "))]
    body = [line for line in code.splitlines() if line not in imports]
    return "\n".join(
        [
            *imports,
            "",
            "",
            "async def readme_block() -> None:",
            textwrap.indent("\n".join(body), "    "),
        ]
    )


def write_application(root: Path) -> None:
    for relative, code in application_files().items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        (path.parent / "__init__.py").touch()
        path.write_text(code)


def test_the_reader_has_the_files_the_blocks_import() -> None:
    assert "myapp/receipts.py" in application_files()
    assert sum("from myapp.receipts import SendReceipt" in code for code in blocks()) >= 4


def test_every_block_type_checks_on_its_own(tmp_path: Path) -> None:
    write_application(tmp_path)
    checked = []
    for number, code in enumerate(blocks()):
        if _FILE.match(code):
            continue
        path = tmp_path / f"readme_block_{number}.py"
        path.write_text(as_module(code))
        checked.append(path.name)
    (tmp_path / "mypy.ini").write_text(_MYPY_CONFIG)

    run = subprocess.run(
        [sys.executable, "-m", "mypy", "--config-file", "mypy.ini", "myapp", *checked],
        cwd=tmp_path,
        env={**os.environ, "MYPYPATH": str(ROOT / "src")},
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )

    assert len(checked) >= 5
    assert run.returncode == 0, run.stdout + run.stderr


def producer_blocks() -> list[str]:
    return [code for code in blocks() if README_DATABASE_URL in code]


def test_the_async_and_the_sync_producer_enqueue_without_a_warning(
    tmp_path: Path, database_url: str
) -> None:
    write_application(tmp_path)
    found = producer_blocks()
    assert len(found) == 2  # the async pool and the sync pool

    for code in found:
        module = as_module(code.replace(README_DATABASE_URL, database_url))
        if "async def readme_block" in module:
            module += "\n\nimport asyncio\n\nasyncio.run(readme_block())\n"
        run = subprocess.run(
            [sys.executable, "-W", "error", "-c", module],
            cwd=tmp_path,
            env={**os.environ, "PYTHONPATH": str(tmp_path)},
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        assert (run.returncode, run.stderr) == (0, ""), module

    async def receipts() -> list[str]:
        connection = await asyncpg.connect(database_url)
        try:
            rows = await connection.fetch("SELECT kind FROM work_items ORDER BY id")
        finally:
            await connection.close()
        return [row["kind"] for row in rows]

    assert asyncio.run(receipts()) == ["send_receipt", "send_receipt"]


@pytest.mark.parametrize("code", producer_blocks(), ids=["async", "sync"])
def test_a_producer_block_closes_what_it_opens(code: str) -> None:
    assert "close" in code
