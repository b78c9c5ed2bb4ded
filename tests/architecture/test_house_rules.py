"""Rules of the house that hold across the tree: one error base, one logger namespace,
and the mutation gate naming every function it cannot mutate.
"""

from __future__ import annotations

import ast
import importlib
import importlib.util
import inspect
import pkgutil
import re
import sys
from pathlib import Path
from types import ModuleType

import pytest

import workqueue.domain
from workqueue.domain import WorkQueueError

ROOT = Path(__file__).resolve().parents[2]
SRC = ROOT / "src"
ROOTS = tuple(
    f"workqueue.{layer}" for layer in ("domain", "application", "adapters", "entrypoints")
)


def our_modules() -> list[ModuleType]:
    modules = []
    for root in ROOTS:
        package = importlib.import_module(root)
        modules.append(package)
        for info in pkgutil.walk_packages(package.__path__, prefix=f"{root}."):
            modules.append(importlib.import_module(info.name))
    return modules


# Exceptions a handler raises to ask the worker for something, which the queue
# itself never raises: not errors, so no ``except WorkQueueError`` may catch them.
HANDLER_REQUESTS = {"Snooze"}


def our_exceptions() -> dict[str, type[BaseException]]:
    """Every exception class defined under src/, by name."""
    found: dict[str, type[BaseException]] = {}
    for module in our_modules():
        for name, value in vars(module).items():
            if (
                inspect.isclass(value)
                and issubclass(value, BaseException)
                and value.__module__ == module.__name__
            ):
                found[name] = value
    return found


def our_errors() -> dict[str, type[BaseException]]:
    """Every exception class defined under src/ that the queue raises, by name."""
    return {name: value for name, value in our_exceptions().items() if name not in HANDLER_REQUESTS}


def test_a_handlers_request_is_no_error_of_the_queue() -> None:
    requests = {name: value for name, value in our_exceptions().items() if name in HANDLER_REQUESTS}
    readme = (ROOT / "README.md").read_text(encoding="utf-8")

    assert sorted(requests) == sorted(HANDLER_REQUESTS)
    assert [name for name, value in requests.items() if issubclass(value, WorkQueueError)] == []
    assert [name for name in requests if f"`{name}(" not in readme] == []


def test_every_error_the_queue_defines_derives_from_work_queue_error() -> None:
    errors = our_errors()

    assert len(errors) >= 12
    assert [name for name, error in errors.items() if not issubclass(error, WorkQueueError)] == []


def test_every_error_is_named_where_a_user_looks_for_it() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    errors_section = readme.split("## Errors", 1)[1].split("\n## ", 1)[0]
    docstring = workqueue.domain.errors.__doc__ or ""

    names = sorted(set(our_errors()) - {"WorkQueueError"})

    assert [name for name in names if f"`{name}`" not in errors_section] == []
    module_errors = set(workqueue.domain.errors.__all__)
    assert [n for n in names if n not in module_errors and n not in docstring] == []


def test_every_logger_is_named_under_workqueue() -> None:
    names = []
    for path in sorted(SRC.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr == "getLogger"
                and node.args
            ):
                argument = node.args[0]
                shown = ast.unparse(argument)
                relative = path.relative_to(SRC)
                names.append((str(relative), shown))

    assert names, "no logger found: the scan is broken"
    # The log configuration also names third-party loggers, through a loop variable.
    named = [(path, name) for path, name in names if name != "name"]
    assert [(p, n) for p, n in named if not re.fullmatch(r"'workqueue(\.[a-z_]+)+'", n)] == []


def test_no_layer_imports_the_package_face() -> None:
    # The face re-exports every layer: a layer importing it would reach the layers
    # above it (and their drivers) behind import-linter's back.
    offenders = []
    for layer in ROOTS:
        for path in sorted((SRC / layer.replace(".", "/")).rglob("*.py")):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if (isinstance(node, ast.ImportFrom) and node.module == "workqueue") or (
                    isinstance(node, ast.Import) and any(a.name == "workqueue" for a in node.names)
                ):
                    offenders.append(str(path.relative_to(SRC)))

    assert offenders == []


def load_mutation_skips() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "mutation_skips", ROOT / "scripts" / "mutation_skips.py"
    )
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["mutation_skips"] = module
    spec.loader.exec_module(module)
    return module


def adr_skip_table() -> set[str]:
    adr = (ROOT / "docs" / "adr" / "0006-mutation-testing.md").read_text(encoding="utf-8")
    table = adr.split("## Functions mutmut cannot mutate", 1)[1].split("\n## ", 1)[0]
    return set(re.findall(r"^\| `([\w.]+)`", table, flags=re.MULTILINE))


def test_every_function_mutmut_skips_that_holds_logic_is_named_in_adr_0006() -> None:
    skips = load_mutation_skips().skipped_functions(ROOT)
    with_logic = {skip.name for skip in skips if skip.has_logic}

    assert with_logic == adr_skip_table()


@pytest.mark.parametrize(
    ("source", "skipped", "has_logic"),
    [
        ("def f(x):\n    return x + 1\n", [], None),
        ("@staticmethod\ndef f(x):\n    return x + 1\n", [], None),
        ("@cache\ndef f(x):\n    return x + 1\n", ["m.f"], True),
        ("@cache\ndef f(x):\n    '''Doc.'''\n    return g(x)\n", ["m.f"], False),
        ("class C:\n    @property\n    def p(self):\n        return self._p\n", ["m.C.p"], False),
        ("class C:\n    @property\n    def p(self):\n        ...\n", ["m.C.p"], False),
        (
            "class C:\n    @property\n    def p(self):\n        return len(self.x)\n",
            ["m.C.p"],
            False,
        ),
        ("class C:\n    @property\n    def p(self):\n        return not self.x\n", ["m.C.p"], True),
        ("@a\n@b\ndef f():\n    pass\n", ["m.f"], False),
        (
            "def f():  # pragma: no mutate block\n    @cache\n    def g():\n        return 1 + 1\n",
            [],
            None,
        ),
        (
            "def f():\n    @cache\n    def g():\n        return 1 + 1\n    return g\n",
            ["m.f.<locals>.g"],
            True,
        ),
        ("@classmethod\n@cache\ndef f(cls):\n    return 1\n", ["m.f"], True),
    ],
)
def test_the_scan_finds_what_mutmut_skips(
    tmp_path: Path, source: str, skipped: list[str], has_logic: bool | None
) -> None:
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "m.py").write_text(source, encoding="utf-8")
    (tmp_path / "pyproject.toml").write_text("[tool.mutmut]\n", encoding="utf-8")

    skips = load_mutation_skips().skipped_functions(tmp_path)

    assert [skip.name for skip in skips] == skipped
    if skipped:
        assert [skip.has_logic for skip in skips] == [has_logic]


def test_the_scan_reports_its_count(capsys: pytest.CaptureFixture[str]) -> None:
    module = load_mutation_skips()

    assert module.main([str(ROOT)]) == 0

    first = capsys.readouterr().out.splitlines()[0]
    total = len(module.skipped_functions(ROOT))
    assert first.startswith(f"mutmut cannot mutate {total} decorated functions; ")
