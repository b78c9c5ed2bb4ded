"""The README's Python cannot drift: "Adding a kind" is applied to a copy of the repository and
type-checked strictly, and every other Python block at least parses."""

from __future__ import annotations

import ast
import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
ADDING_A_KIND = "## Adding a kind"

_BLOCK = re.compile(r"^ *```python\n(.*?)^ *```", re.MULTILINE | re.DOTALL)
# "# path", "# path, in NAME:" or "# path, at the imports:"
_TARGET = re.compile(
    r"^# (?P<path>[\w./]+\.py)(?:, (?:in (?P<name>\w+)|at the (?P<imports>imports)):)?$"
)


@dataclass(frozen=True)
class Snippet:
    path: str
    name: str | None
    at_imports: bool
    code: str


def python_blocks(text: str) -> list[str]:
    return [_dedent(match.group(1)) for match in _BLOCK.finditer(text)]


def _dedent(code: str) -> str:
    lines = code.splitlines()
    indent = min((len(line) - len(line.lstrip()) for line in lines if line.strip()), default=0)
    return "\n".join(line[indent:] for line in lines) + "\n"


def section(text: str, heading: str) -> str:
    start = text.index(heading)
    end = text.find("\n## ", start + len(heading))
    return text[start : end if end != -1 else len(text)]


def snippets() -> list[Snippet]:
    found = []
    for code in python_blocks(section(README.read_text(encoding="utf-8"), ADDING_A_KIND)):
        first, _, rest = code.partition("\n")
        target = _TARGET.match(first)
        assert target, f"a block of 'Adding a kind' must start with its file, not {first!r}"
        found.append(Snippet(target["path"], target["name"], target["imports"] is not None, rest))
    return found


def insert_at_imports(source: str, code: str) -> str:
    tree = ast.parse(source)
    last = max(
        node.end_lineno or 0 for node in tree.body if isinstance(node, ast.Import | ast.ImportFrom)
    )
    lines = source.splitlines(keepends=True)
    return "".join([*lines[:last], code, *lines[last:]])


def insert_in(source: str, name: str, code: str) -> str:
    """``code`` added at the end of the block that opens with ``name`` (a class, a call)."""
    lines = source.splitlines(keepends=True)
    opening = re.compile(rf"^(?P<indent> *)(class {name}\b|{name} *[:=])")
    for index, line in enumerate(lines):  # noqa: B007 - the index is read after the loop
        match = opening.match(line)
        if match:
            break
    else:
        raise AssertionError(f"{name} is not defined there")
    indent = len(match["indent"])
    # In a call's arguments (a list of providers) each line is one more element.
    separator = "," if line.rstrip().endswith("(") else ""
    end = index + 1
    while end < len(lines) and (not lines[end].strip() or _indent(lines[end]) > indent):
        end += 1
    while not lines[end - 1].strip():
        end -= 1
    body = "".join(
        f"{' ' * (indent + 4)}{line}{separator}\n" for line in code.splitlines() if line.strip()
    )
    return "".join([*lines[:end], body, *lines[end:]])


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


def apply(snippet: Snippet, root: Path) -> Path:
    target = root / snippet.path
    if snippet.name is None and not snippet.at_imports:
        assert not target.exists(), f"{snippet.path} exists: say where in it the block goes"
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(snippet.code)
        return target
    source = target.read_text()
    if snippet.at_imports:
        target.write_text(insert_at_imports(source, snippet.code))
    else:
        assert snippet.name is not None
        target.write_text(insert_in(source, snippet.name, snippet.code))
    return target


def test_adding_a_kind_as_the_readme_says_type_checks_in_both_cases(tmp_path: Path) -> None:
    shutil.copytree(ROOT / "src", tmp_path / "src", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "pyproject.toml", tmp_path)
    if (ROOT / ".mypy_cache").is_dir():
        # Only a speed-up: mypy checks every cached file against its contents.
        shutil.copytree(ROOT / ".mypy_cache", tmp_path / ".mypy_cache")
    found = snippets()
    applied = {apply(snippet, tmp_path) for snippet in found}
    outside_src = sorted(path for path in applied if not path.is_relative_to(tmp_path / "src"))
    assert outside_src, "the application case (a file of your own package) is missing"
    assert any(s.path.startswith("src/") for s in found), "the in-repository case is missing"

    checked = subprocess.run(
        [
            sys.executable,
            "-m",
            "mypy",
            "--strict",
            "src/workqueue",
            *(str(path.relative_to(tmp_path)) for path in outside_src),
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )

    assert checked.returncode == 0, checked.stdout + checked.stderr
    # And the worker's registry accepts both: the repository's new kind, the application's.
    application = outside_src[0]
    served = subprocess.run(
        [sys.executable, "-c", _SERVED_KINDS, application.stem],
        cwd=application.parent,
        env={**os.environ, "PYTHONPATH": str(tmp_path / "src")},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert served.returncode == 0, served.stderr
    assert "import_feed" in served.stdout.split()
    assert "send_digest" in served.stdout.split()


# The registry a worker builds, on in-memory stores and a stand-in pool.
_SERVED_KINDS = """
import asyncio, sys
from dependency_injector import providers
from workqueue.adapters.clock import SystemClock
from workqueue.adapters.memory import (
    InMemoryRefreshTokenStore, InMemoryState, InMemoryWorkQueue, InMemoryWorkStore,
)
from workqueue.entrypoints.worker.container import build_container, provide
from workqueue.entrypoints.worker.settings import WorkerSettings

state, clock = InMemoryState(), SystemClock()
container = build_container(WorkerSettings(worker_id="readme", app=sys.argv[1]))
container.pool.override(providers.Object("a pool"))
container.work_store.override(providers.Object(InMemoryWorkStore(state, clock)))
container.work_queue.override(providers.Object(InMemoryWorkQueue(state, clock)))
container.refresh_tokens.override(providers.Object(InMemoryRefreshTokenStore(state)))
print(*sorted(asyncio.run(provide(container.registry)).kinds))
"""


@pytest.mark.parametrize(
    "code", python_blocks(README.read_text(encoding="utf-8")), ids=lambda code: code.split("\n")[0]
)
def test_every_python_block_of_the_readme_parses(code: str) -> None:
    compile(code, "README.md", "exec", flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT | ast.PyCF_ONLY_AST)
