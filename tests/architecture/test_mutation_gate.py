"""The mutation gate (scripts/mutation_gate.py, scripts/mutation_scan.py) judges again every
mutant whose verdict a change could flip, and refuses when its record cannot answer.

The trees here are small files in a temporary directory, scanned as the gate scans
the repository; the record is built by hand where a full run would write it.
"""

from __future__ import annotations

import ast
import importlib
import importlib.util
import json
import sys
from collections.abc import Iterable, Mapping
from pathlib import Path
from types import ModuleType, SimpleNamespace

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _load(name: str) -> ModuleType:
    scripts = str(ROOT / "scripts")
    if scripts not in sys.path:
        sys.path.insert(0, scripts)
    return importlib.import_module(name)


gate = _load("mutation_gate")
scan = _load("mutation_scan")


def write(root: Path, files: Mapping[str, str]) -> None:
    for path, text in files.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(text, encoding="utf-8")


def mutated_by_mutmut(text: str) -> list[str]:
    """The functions mutmut mutates: all but those with a decorator other than one
    @staticmethod or @classmethod."""
    return [
        key
        for key, node in scan.function_nodes(ast.parse(text)).items()
        if not node.decorator_list
        or [ast.unparse(decorator) for decorator in node.decorator_list]
        in (["staticmethod"], ["classmethod"])
    ]


def index_of(root: Path, files: Mapping[str, str]) -> object:
    """The code index of a tree whose files under src/ mutmut mutates."""
    write(root, files)
    mutated = {
        path: mutated_by_mutmut(text) for path, text in files.items() if path.startswith("src/")
    }
    tests = [path for path in files if not path.startswith("src/")]
    return scan.scan_code(root, mutated, tests)


def changes(**kwargs: object) -> object:
    defaults: dict[str, object] = {
        "functions": frozenset(),
        "deleted_functions": frozenset(),
        "names": {},
        "data_files": frozenset(),
        "test_files": frozenset(),
    }
    return gate.Changes(**{**defaults, **kwargs})


def tree(
    functions: Mapping[str, tuple[str, int]] | None = None,
    modules: Mapping[str, Mapping[str, str]] | None = None,
    data_files: Mapping[str, str] | None = None,
    test_files: Mapping[str, str] | None = None,
) -> object:
    return gate.Tree(
        functions={name: gate.FunctionState(*state) for name, state in (functions or {}).items()},
        modules=modules or {},
        data_files=data_files or {},
        test_files=test_files or {},
    )


def record(
    the_tree: object,
    *,
    reach: Mapping[str, Iterable[str]] | None = None,
    seconds: Mapping[str, float] | None = None,
    killers: Mapping[str, str] | None = None,
    import_time: Iterable[str] = (),
    infrastructure: Mapping[str, str] | None = None,
    full_run_seconds: float = 0.0,
) -> object:
    return gate.Record(
        mutmut="3.8.1",
        python=gate.python_version(),
        infrastructure=infrastructure or {},
        tree=the_tree,
        reach={path: frozenset(names) for path, names in (reach or {}).items()},
        seconds=seconds or {},
        killers=killers or {},
        import_time=frozenset(import_time),
        full_run_seconds=full_run_seconds,
    )


BIG_TEST = "from helpers import big\n\ndef test_big():\n    assert big() == 6\n"
EMPTY_INDEX = gate.CodeIndex(functions={}, names={}, eager={}, cached={})


# --- staleness ---------------------------------------------------------------------


def test_a_record_of_another_mutmut_python_or_infrastructure_is_stale_saying_what_changed() -> None:
    old = record(tree(), infrastructure={"tests/conftest.py": "a", "scripts/mutation": "b"})

    stale = gate.stale_parts(
        old, {"tests/conftest.py": "c", "scripts/mutation": "b"}, "3.9.0", "3.12"
    )

    assert stale == ["mutmut 3.8.1 -> 3.9.0", "Python 3.11 -> 3.12", "tests/conftest.py changed"]


def test_a_record_of_this_mutmut_python_and_infrastructure_is_not_stale() -> None:
    old = record(tree(), infrastructure={"tests/conftest.py": "a"})

    assert gate.stale_parts(old, {"tests/conftest.py": "a"}, "3.8.1", gate.python_version()) == []


def test_the_infrastructure_is_the_mutmut_and_pytest_settings_the_conftest_and_the_gate(
    tmp_path: Path,
) -> None:
    pyproject = "[tool.mutmut]\nx = 1\n[tool.pytest.ini_options]\ny = 2\n[tool.ruff]\nz = 3\n"
    write(tmp_path, {"pyproject.toml": pyproject, "tests/conftest.py": "A = 1\n"})
    before = gate.infrastructure(tmp_path)

    write(tmp_path, {"pyproject.toml": pyproject.replace("z = 3", "z = 4")})
    assert gate.infrastructure(tmp_path) == before
    write(tmp_path, {"pyproject.toml": pyproject.replace("x = 1", "x = 5")})
    assert gate.stale_parts(
        record(tree(), infrastructure=before),
        gate.infrastructure(tmp_path),
        "3.8.1",
        gate.python_version(),
    ) == ["pyproject.toml [tool.mutmut] changed"]
    write(tmp_path, {"pyproject.toml": pyproject, "tests/conftest.py": "A = 2\n"})
    assert set(before) >= {"scripts/mutation_gate.py", "scripts/mutation_scan.py"}
    assert gate.infrastructure(tmp_path)["tests/conftest.py"] != before["tests/conftest.py"]


def test_without_a_record_the_gate_refuses_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert gate.run_gate(tmp_path) == 1

    lines = capsys.readouterr().err.splitlines()
    assert lines == [
        "mutation: REFUSED: no record of a full run (scripts/mutation-record.json);"
        " run `scripts/mutation --full` and commit it"
    ]


def test_with_a_stale_record_the_gate_refuses_in_one_line_naming_what_changed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write(tmp_path, {"pyproject.toml": "[tool.mutmut]\n", "tests/conftest.py": "A = 1\n"})
    old = record(tree(), infrastructure=gate.infrastructure(tmp_path))
    write(tmp_path, {gate.RECORD: gate.dumps_record(old), "tests/conftest.py": "A = 2\n"})

    assert gate.run_gate(tmp_path) == 1

    lines = capsys.readouterr().err.splitlines()
    assert len(lines) == 1
    assert lines[0].startswith("mutation: REFUSED: the record is stale (tests/conftest.py changed)")
    assert lines[0].endswith(
        "run `scripts/mutation --full` and commit scripts/mutation-record.json"
    )


# --- the record --------------------------------------------------------------------


def test_the_record_reads_back_as_it_was_written() -> None:
    written = record(
        tree(
            functions={"m.x_f": ("aaa", 2), "m.xǁCǁg": ("bbb+ccc", 1)},
            modules={"src/m.py": {"LIMIT": "12345678", "__doc__": "9abcdef0"}},
            data_files={"src/q.sql": "ddd"},
            test_files={"tests/test_a.py": "eee", "tests/helper.py": "fff"},
        ),
        reach={"tests/test_a.py": ["m.x_f", "m.xǁCǁg"]},
        seconds={"tests/test_a.py": 1.5},
        killers={
            "m.x_f__mutmut_1": gate.killer_code("tests/test_a.py::test_one"),
            "m.xǁCǁg__mutmut_1": gate.killer_code("tests/test_a.py::test_two[x]"),
        },
        import_time=["m.x_f"],
        infrastructure={"tests/conftest.py": "123"},
        full_run_seconds=2900.0,
    )

    assert gate.loads_record(gate.dumps_record(written)) == written


def test_the_record_holds_one_entry_a_line_with_sorted_keys() -> None:
    functions = {f"m.x_f{number}": ("aaa", 1) for number in (3, 1, 2)}
    text = gate.dumps_record(record(tree(functions=functions)))

    lines = text.splitlines()
    names = [line.split('"')[1] for line in lines if line.startswith('    "m.x_f')]
    assert names == ["m.x_f1", "m.x_f2", "m.x_f3"]
    top = [line.split('"')[1] for line in lines if line.startswith('  "')]
    assert top == sorted(top)
    assert json.loads(text)["format"] == gate.FORMAT


def test_a_record_of_another_format_is_refused() -> None:
    with pytest.raises(gate.GateError, match="format"):
        gate.loads_record('{"format": 0}')


# --- what the record hashes ----------------------------------------------------------


def test_a_pragma_in_a_function_changes_its_signature_though_mutmut_hashes_the_same_ast() -> None:
    plain = "def f(x):\n    return x + 1\n"
    marked = "def f(x):\n    return x + 1  # pragma: no mutate\n"
    nodes = [scan.function_nodes(ast.parse(text))["x_f"] for text in (plain, marked)]

    assert scan.signature("h", plain, nodes[0]) == "h"
    assert scan.signature("h", marked, nodes[1]).startswith("h+")


def test_each_module_level_name_is_hashed_apart_and_mutated_functions_are_left_out() -> None:
    before = '"""Doc."""\nLIMIT = 3\nOTHER = 4\nprint("hi")\ndef f():\n    return LIMIT\n'
    after = '"""Doc."""\nLIMIT = 5\nOTHER = 4\nprint("hi")\ndef f():\n    return LIMIT + 1\n'

    first, second = (scan.module_names(text, ["x_f"]) for text in (before, after))

    assert set(first) == {"__doc__", "LIMIT", "OTHER", "<module>"}
    assert {name for name in first if first[name] != second[name]} == {"LIMIT"}


def test_comments_layout_and_mutated_functions_moved_or_added_change_no_name() -> None:
    before = "X = 1\ndef f():\n    return 1\ndef g():\n    return 2\n"
    after = (
        "# a comment\nX = (\n    1\n)\n"
        "def g():\n    return 2\ndef h():\n    return 3\ndef f():\n    return 1\n"
    )

    assert scan.module_names(before, ["x_f", "x_g"]) == scan.module_names(
        after, ["x_f", "x_g", "x_h"]
    )


def test_a_decorated_function_is_a_name_of_its_module_and_a_method_a_part_of_its_class() -> None:
    before = (
        "class C:\n    A = 1\n"
        "    @property\n    def p(self):\n        return 1\n"
        "    def m(self):\n        return 2\n"
    )
    after = before.replace("return 1", "return 9").replace("return 2", "return 8")

    first, second = (scan.module_names(text, ["xǁCǁm"]) for text in (before, after))

    assert first["C"] != second["C"]  # the property changed; the mutated method is left out
    assert scan.module_names(before, ["xǁCǁm"]) == scan.module_names(
        before.replace("return 2", "return 8"), ["xǁCǁm"]
    )


# --- what changed ----------------------------------------------------------------------


def test_a_function_whose_hash_differs_or_that_is_new_has_changed_and_one_missing_is_gone() -> None:
    old = tree(functions={"m.x_f": ("a", 2), "m.x_g": ("b", 1), "m.x_h": ("c", 1)})
    new = tree(functions={"m.x_f": ("a", 2), "m.x_g": ("B", 1), "m.x_k": ("d", 1)})

    found = gate.compare(old, new)

    assert found.functions == {"m.x_g", "m.x_k"}
    assert found.deleted_functions == {"m.x_h"}


def test_a_function_whose_number_of_mutants_differs_has_changed() -> None:
    found = gate.compare(tree(functions={"m.x_f": ("a", 2)}), tree(functions={"m.x_f": ("a", 3)}))

    assert found.functions == {"m.x_f"}


def test_a_module_level_name_that_differs_has_changed_and_every_name_of_a_new_module() -> None:
    old = tree(modules={"src/p/a.py": {"X": "1", "Y": "2"}})
    new = tree(modules={"src/p/a.py": {"X": "1", "Y": "3", "Z": "4"}, "src/p/b.py": {"W": "5"}})

    assert gate.compare(old, new).names == {"src/p/a.py": {"Y", "Z"}, "src/p/b.py": {"*"}}


def test_with_no_index_a_changed_data_file_changes_its_whole_package_and_kit() -> None:
    modules = {
        "src/w/__init__.py": {},
        "src/w/pg/__init__.py": {},
        "src/w/pg/store.py": {"X": "1"},
        "src/w/web/pages.py": {"Y": "2"},
    }
    test_files = {"src/w/pg/kit.py": "k", "tests/test_a.py": "t"}
    old = tree(modules=modules, test_files=test_files, data_files={"src/w/pg/sql/s.sql": "1"})
    new = tree(modules=modules, test_files=test_files, data_files={"src/w/pg/sql/s.sql": "2"})

    found = gate.compare(old, new)

    assert found.data_files == {"src/w/pg/sql/s.sql"}
    assert found.names == {"src/w/pg/__init__.py": {"*"}, "src/w/pg/store.py": {"*"}}
    assert found.test_files == {"src/w/pg/kit.py"}


READ_BY_NAME = {
    "src/w/__init__.py": "",
    "src/w/pg/__init__.py": "",
    "src/w/pg/sql.py": (
        '"""Each module loads its file: load("s.sql")."""\n\ndef load(name):\n    return name\n'
    ),
    "src/w/pg/store.py": (
        "from w.pg.sql import load\n\nSQL = load('s.sql')\nOTHER = 1\n\n"
        "def run():\n    return SQL\n\ndef rest():\n    return OTHER\n"
    ),
    "src/w/pg/tokens.py": "from w.pg.sql import load\n\nSQL = load('t.sql')\n",
    "src/w/lite/items.py": (
        "from w.pg.sql import load\n\ndef item():\n    return load('pg/sql/s.sql')\n"
    ),
    "tests/test_s.py": "from w.pg.sql import load\n\nS = load('s.sql')\n",
    "tests/test_t.py": "from w.pg.sql import load\n\nT = load('t.sql')\n",
}


def _data_file_changed(path: str) -> tuple[object, object]:
    modules = {name: {"X": "1"} for name in READ_BY_NAME if name.startswith("src/")}
    test_files = {name: "t" for name in READ_BY_NAME if not name.startswith("src/")}
    return (
        tree(modules=modules, test_files=test_files, data_files={path: "1"}),
        tree(modules=modules, test_files=test_files, data_files={path: "2"}),
    )


def test_a_changed_data_file_changes_the_code_that_names_it_and_nothing_else(
    tmp_path: Path,
) -> None:
    index = index_of(tmp_path, READ_BY_NAME)
    old, new = _data_file_changed("src/w/pg/sql/s.sql")

    found = gate.compare(old, new, index)
    names, functions = gate.propagate(found, index)

    # By its name or a path ending in it; a docstring that mentions it is not code.
    assert found.names == {"src/w/pg/store.py": {"SQL"}}
    assert found.functions == {"w.lite.items.x_item"}
    assert found.test_files == {"tests/test_s.py"}
    assert functions == {"w.lite.items.x_item", "w.pg.store.x_run"}
    assert "src/w/pg/tokens.py" not in names


def test_a_changed_data_file_no_code_names_changes_its_whole_package(tmp_path: Path) -> None:
    index = index_of(tmp_path, READ_BY_NAME)
    old, new = _data_file_changed("src/w/pg/sql/0001_listed.sql")

    found = gate.compare(old, new, index)

    assert found.names == {
        "src/w/pg/__init__.py": {"*"},
        "src/w/pg/sql.py": {"*"},
        "src/w/pg/store.py": {"*"},
        "src/w/pg/tokens.py": {"*"},
    }


def test_a_test_file_that_differs_is_new_or_is_gone_has_changed() -> None:
    old = tree(test_files={"tests/a.py": "1", "tests/b.py": "2", "tests/c.py": "3"})
    new = tree(test_files={"tests/a.py": "1", "tests/b.py": "9", "tests/d.py": "4"})

    assert gate.compare(old, new).test_files == {"tests/b.py", "tests/c.py", "tests/d.py"}


# --- spreading a change along the names code uses ---------------------------------------

CONSTANTS = {
    "src/w/__init__.py": "",
    "src/w/limits.py": "LIMIT = 3\nOTHER = 4\n\ndef cap(x):\n    return min(x, LIMIT)\n",
    "src/w/use.py": (
        "from w.limits import LIMIT, OTHER\n\n"
        "def over(x):\n    return x > LIMIT\n\n"
        "def other(x):\n    return x + OTHER\n"
    ),
    "src/w/face.py": "from w.limits import LIMIT\n",
    "src/w/far.py": "from w.face import LIMIT\n\ndef far(x):\n    return x * LIMIT\n",
    "src/w/plain.py": "def plain(x):\n    return x\n",
}


def test_a_changed_constant_changes_the_functions_that_read_it_here_and_through_imports(
    tmp_path: Path,
) -> None:
    index = index_of(tmp_path, CONSTANTS)

    _, functions = gate.propagate(changes(names={"src/w/limits.py": {"LIMIT"}}), index)

    # far reads LIMIT through face's re-export; other reads OTHER, plain nothing.
    assert functions == {"w.limits.x_cap", "w.use.x_over", "w.far.x_far"}


def test_a_changed_function_body_spreads_nothing_by_name(tmp_path: Path) -> None:
    index = index_of(tmp_path, CONSTANTS)

    names, functions = gate.propagate(changes(functions={"w.limits.x_cap"}), index)

    assert functions == {"w.limits.x_cap"}
    assert names == {}


def test_a_method_of_a_changed_class_has_changed(tmp_path: Path) -> None:
    files = {
        "src/w/__init__.py": "",
        "src/w/c.py": (
            "class C:\n    A = 1\n    def m(self):\n        return self.A\n\n"
            "def f():\n    return 1\n"
        ),
    }
    index = index_of(tmp_path, files)

    _, functions = gate.propagate(changes(names={"src/w/c.py": {"C"}}), index)

    assert functions == {"w.c.xǁCǁm"}


def test_a_test_file_using_a_changed_helper_has_changed_and_one_that_does_not_has_not(
    tmp_path: Path,
) -> None:
    files = {
        **CONSTANTS,
        "tests/unit/helpers.py": "from w.limits import LIMIT\n\ndef big():\n    return LIMIT * 2\n",
        "tests/unit/test_big.py": BIG_TEST,
        "tests/unit/test_plain.py": (
            "from w.plain import plain\n\ndef test_plain():\n    assert plain(1) == 1\n"
        ),
    }
    index = index_of(tmp_path, files)

    names, _ = gate.propagate(changes(names={"src/w/limits.py": {"LIMIT"}}), index)

    assert "tests/unit/test_big.py" in names
    assert "tests/unit/test_plain.py" not in names


def test_a_changed_fixture_changes_the_tests_asking_for_it_and_an_autouse_one_all_below(
    tmp_path: Path,
) -> None:
    files = {
        **CONSTANTS,
        "tests/unit/conftest.py": (
            "import pytest\nfrom w.limits import LIMIT, OTHER\n\n"
            "@pytest.fixture\ndef limit():\n    return LIMIT\n\n"
            "@pytest.fixture(autouse=True)\ndef other():\n    return OTHER\n"
        ),
        "tests/unit/test_asks.py": "def test_asks(limit):\n    assert limit == 3\n",
        "tests/unit/test_not.py": "def test_not():\n    assert True\n",
        "tests/other/test_far.py": "def test_far():\n    assert True\n",
    }
    index = index_of(tmp_path, files)

    limit, _ = gate.propagate(changes(names={"src/w/limits.py": {"LIMIT"}}), index)
    other, _ = gate.propagate(changes(names={"src/w/limits.py": {"OTHER"}}), index)

    assert {path for path in limit if path.startswith("tests/")} == {
        "tests/unit/conftest.py",
        "tests/unit/test_asks.py",
    }
    assert {path for path in other if path.startswith("tests/")} == {
        "tests/unit/conftest.py",
        "tests/unit/test_asks.py",
        "tests/unit/test_not.py",
    }


def test_a_changed_test_helper_changes_the_test_files_that_import_it(tmp_path: Path) -> None:
    files = {
        "tests/unit/helpers.py": "def big():\n    return 6\n",
        "tests/unit/test_big.py": BIG_TEST,
        "tests/unit/test_other.py": "def test_other():\n    assert True\n",
    }
    index = index_of(tmp_path, files)

    names, _ = gate.propagate(changes(test_files={"tests/unit/helpers.py"}), index)

    assert set(names) == {"tests/unit/helpers.py", "tests/unit/test_big.py"}


def test_a_caching_function_naming_a_changed_function_changes_and_so_do_its_users(
    tmp_path: Path,
) -> None:
    files = {
        "src/w/__init__.py": "",
        "src/w/sql.py": (
            "from functools import cache\n\n"
            "@cache\ndef load(name):\n    return parse(name)\n\n"
            "def parse(name):\n    return name.upper()\n"
        ),
        "src/w/store.py": "from w.sql import load\n\ndef run():\n    return load('x')\n",
    }
    index = index_of(tmp_path, files)

    names, functions = gate.propagate(changes(functions={"w.sql.x_parse"}), index)

    assert names == {"src/w/sql.py": {"load"}}
    assert functions == {"w.sql.x_parse", "w.store.x_run"}


def test_code_run_at_import_that_calls_a_changed_function_then_changes(tmp_path: Path) -> None:
    files = {
        "src/w/__init__.py": "",
        "src/w/settings.py": "def check(x):\n    return x\n\nDEFAULT = check(3)\n",
        "src/w/use.py": "from w.settings import DEFAULT\n\ndef f():\n    return DEFAULT\n",
    }
    index = index_of(tmp_path, files)
    calls = gate.Calls(import_time=frozenset({"w.settings.x_check"}))

    names, functions = gate.propagate(changes(functions={"w.settings.x_check"}), index, calls)
    without, _ = gate.propagate(changes(functions={"w.settings.x_check"}), index)

    assert names == {"src/w/settings.py": {"DEFAULT"}}
    assert functions == {"w.settings.x_check", "w.use.x_f"}
    assert without == {}  # mutmut's stats credit an import-time call to one test only
    assert gate.unplaced({"w.settings.x_check"}, index, calls) == set()


CACHED_LOADER = (
    "from functools import cache\n\n"
    "@cache\ndef load(name):\n    return parse(name)\n\n"
    "def parse(name):\n    return name.upper()\n"
)


def test_a_function_run_at_import_through_a_cache_that_module_code_calls_is_placed(
    tmp_path: Path,
) -> None:
    files = {
        "src/w/__init__.py": "",
        "src/w/sql.py": CACHED_LOADER,
        "src/w/store.py": (
            "from w.sql import load\n\nSQL = load('x')\n\ndef run():\n    return SQL\n"
        ),
    }
    index = index_of(tmp_path, files)
    # mutmut traces no decorated function: parse ran at import with no caller in the stats.
    calls = gate.Calls(import_time=frozenset({"w.sql.x_parse"}))

    names, functions = gate.propagate(changes(functions={"w.sql.x_parse"}), index, calls)

    assert gate.unplaced({"w.sql.x_parse"}, index, calls) == set()
    assert names == {"src/w/sql.py": {"load"}, "src/w/store.py": {"SQL"}}
    assert functions == {"w.sql.x_parse", "w.store.x_run"}


def test_a_function_run_at_import_through_a_cache_no_module_code_calls_is_unplaced(
    tmp_path: Path,
) -> None:
    files = {
        "src/w/__init__.py": "",
        "src/w/sql.py": CACHED_LOADER,
        "src/w/store.py": "from w.sql import load\n\ndef run():\n    return load('x')\n",
    }
    index = index_of(tmp_path, files)
    calls = gate.Calls(import_time=frozenset({"w.sql.x_parse"}))

    assert gate.unplaced({"w.sql.x_parse"}, index, calls) == {"w.sql.x_parse"}


def test_a_function_run_at_import_by_code_the_scan_cannot_see_is_unplaced(tmp_path: Path) -> None:
    files = {"src/w/__init__.py": "", "src/w/hook.py": "def hook():\n    return 1\n"}
    index = index_of(tmp_path, files)

    calls = gate.Calls(import_time=frozenset({"w.hook.x_hook"}))

    assert gate.unplaced({"w.hook.x_hook"}, index, calls) == {"w.hook.x_hook"}


# --- what mutmut judges again --------------------------------------------------------------

A, B = "tests/test_a.py", "tests/test_b.py"
TESTS = {
    f"{A}::test_one": frozenset({"m.x_f", "m.x_g"}),
    f"{A}::test_two": frozenset({"m.x_g"}),
    f"{B}::test_three": frozenset({"m.x_h"}),
}
MUTANTS = {name: [f"{name}__mutmut_1", f"{name}__mutmut_2"] for name in ("m.x_f", "m.x_g", "m.x_h")}
NOW = tree(
    functions={name: ("same", 2) for name in MUTANTS},
    test_files={A: "a", B: "b"},
)
KILLERS = {
    "m.x_f__mutmut_1": gate.killer_code(f"{A}::test_one"),
    "m.x_f__mutmut_2": gate.killer_code(f"{A}::test_one"),
    "m.x_g__mutmut_1": gate.killer_code(f"{A}::test_one"),
    "m.x_g__mutmut_2": gate.killer_code(f"{A}::test_two"),
    "m.x_h__mutmut_1": gate.killer_code(f"{B}::test_three"),
    "m.x_h__mutmut_2": gate.killer_code(f"{B}::test_three"),
}
REACH = {A: ["m.x_f", "m.x_g"], B: ["m.x_h"]}


def plan_for(old: object, now: object = NOW, tests: Mapping[str, frozenset[str]] = TESTS) -> object:
    return gate.plan(old, now, tests, MUTANTS, EMPTY_INDEX)


def test_nothing_changed_is_nothing_to_judge() -> None:
    the_plan = plan_for(record(NOW, reach=REACH, killers=KILLERS))

    assert the_plan.mutants == set()
    assert gate.decide(the_plan, 0.0, 900.0).verdict == "nothing"


def test_every_mutant_of_a_changed_function_is_judged_and_those_its_tests_killed() -> None:
    old = record(
        tree(
            functions={**{name: ("same", 2) for name in MUTANTS}, "m.x_f": ("old", 2)},
            test_files={A: "a", B: "b"},
        ),
        reach=REACH,
        killers=KILLERS,
    )

    the_plan = plan_for(old)

    # test_one reaches f: what it killed is judged again; test_two's kill of g stands.
    assert the_plan.mutants == {"m.x_f__mutmut_1", "m.x_f__mutmut_2", "m.x_g__mutmut_1"}
    assert the_plan.affected_tests == {f"{A}::test_one"}


def test_a_changed_test_file_has_every_mutant_its_tests_killed_judged_again() -> None:
    old = record(
        tree(functions={n: ("same", 2) for n in MUTANTS}, test_files={A: "a", B: "old"}),
        reach=REACH,
        killers=KILLERS,
    )

    assert plan_for(old).mutants == {"m.x_h__mutmut_1", "m.x_h__mutmut_2"}


def test_a_mutant_whose_killer_is_gone_is_judged_again() -> None:
    tests = {test: reached for test, reached in TESTS.items() if not test.endswith("test_two")}
    old = record(NOW, reach=REACH, killers=KILLERS)

    assert plan_for(old, tests=tests).mutants == {"m.x_g__mutmut_2"}


def test_a_mutant_with_no_killer_on_record_is_judged_when_an_affected_test_reaches_it() -> None:
    killers = {name: code for name, code in KILLERS.items() if name != "m.x_g__mutmut_2"}
    old = record(
        tree(
            functions={**{name: ("same", 2) for name in MUTANTS}, "m.x_f": ("old", 2)},
            test_files={A: "a", B: "b"},
        ),
        reach=REACH,
        killers=killers,
    )

    assert "m.x_g__mutmut_2" in plan_for(old).mutants


def test_a_deleted_test_file_has_the_mutants_it_killed_judged_again() -> None:
    now = tree(functions={name: ("same", 2) for name in MUTANTS}, test_files={A: "a"})
    tests = {test: reached for test, reached in TESTS.items() if test.startswith(A)}
    old = record(NOW, reach=REACH, killers=KILLERS)

    assert plan_for(old, now, tests).mutants == {"m.x_h__mutmut_1", "m.x_h__mutmut_2"}


def test_a_changed_function_run_at_import_that_no_code_is_seen_calling_affects_every_test() -> None:
    old = record(
        tree(
            functions={**{name: ("same", 2) for name in MUTANTS}, "m.x_h": ("old", 2)},
            test_files={A: "a", B: "b"},
        ),
        reach=REACH,
        killers=KILLERS,
        import_time=["m.x_h"],
    )

    the_plan = plan_for(old)

    assert the_plan.import_time == {"m.x_h"}
    assert the_plan.affected_tests == set(TESTS)
    assert the_plan.mutants == {name for names in MUTANTS.values() for name in names}


# --- the budget -------------------------------------------------------------------------------


def test_over_its_budget_the_gate_refuses_naming_the_functions_and_mutants() -> None:
    old = record(
        tree(
            functions={**{n: ("same", 2) for n in MUTANTS}, "m.x_f": ("old", 2)},
            test_files={A: "a", B: "b"},
        ),
        reach=REACH,
        killers=KILLERS,
    )
    the_plan = plan_for(old)

    refused = gate.decide(the_plan, estimate=1200.0, budget_seconds=900.0)
    judged = gate.decide(the_plan, estimate=600.0, budget_seconds=900.0)

    assert refused.verdict == "refuse"
    assert refused.message.startswith("2 functions (3 mutants, about 20 min) to judge, over")
    assert "WORKQUEUE_MUTATION_BUDGET_MINUTES" in refused.message
    assert refused.message.endswith(
        "run `scripts/mutation --full` and commit scripts/mutation-record.json"
    )
    assert judged.verdict == "judge"


def test_the_estimate_is_the_full_runs_time_shared_by_weight() -> None:
    old = record(NOW, reach=REACH, seconds={A: 1.0, B: 0.0}, full_run_seconds=100.0)
    everything = [name for names in MUTANTS.values() for name in names]

    total = gate.estimate_seconds(old, everything, old.reach, old.seconds)
    part = gate.estimate_seconds(old, MUTANTS["m.x_h"], old.reach, old.seconds)

    assert total == pytest.approx(100.0)
    # h's two mutants weigh 0.5 each (no test time), f's and g's four 1.5 each: 1 of 7.
    assert part == pytest.approx(100.0 / 7.0)


# --- the tree now ------------------------------------------------------------------------------


def test_the_tree_hashed_from_the_sources_equals_the_record_until_something_changes(
    tmp_path: Path,
) -> None:
    write(
        tmp_path,
        {
            "pyproject.toml": '[tool.mutmut]\ndo_not_mutate = ["src/w/kit/*"]\n'
            'pytest_add_cli_args_test_selection = ["tests"]\n',
            "src/w/__init__.py": "",
            "src/w/a.py": "LIMIT = 3\n\ndef f(x):\n    return x + LIMIT\n",
            "src/w/kit/__init__.py": "",
            "src/w/kit/k.py": "def k():\n    return 1\n",
            "src/w/q.sql": "select 1;\n",
            "tests/test_a.py": "from w.a import f\n\ndef test_f():\n    assert f(1) == 4\n",
        },
    )
    unrecorded = tree(functions={"w.a.x_f": ("?", 3)})
    recorded = gate.tree_from_sources(tmp_path, unrecorded)

    assert set(recorded.test_files) == {
        "tests/test_a.py",
        "src/w/kit/__init__.py",
        "src/w/kit/k.py",
    }
    assert set(recorded.data_files) == {"src/w/q.sql"}
    assert gate.tree_from_sources(tmp_path, recorded) == recorded
    write(tmp_path, {"src/w/a.py": "# a comment\nLIMIT = 3\n\ndef f(x):\n    return x + LIMIT\n"})
    assert gate.tree_from_sources(tmp_path, recorded) == recorded
    write(
        tmp_path,
        {"src/w/a.py": "LIMIT = 3\n\ndef f(x):\n    return x + LIMIT\n\ndef g():\n    return 2\n"},
    )
    assert gate.compare(recorded, gate.tree_from_sources(tmp_path, recorded)).names == {
        "src/w/a.py": {"g"}
    }


def test_a_name_read_through_a_lazy_face_is_followed_to_the_module_its_table_names(
    tmp_path: Path,
) -> None:
    files = {
        "src/w/__init__.py": (
            "import importlib\n\n_HOME = {'LIMIT': 'w.limits'}\n\n"
            "def __getattr__(name):\n"
            "    return getattr(importlib.import_module(_HOME[name]), name)\n"
        ),
        "src/w/limits.py": "LIMIT = 3\nOTHER = 4\n",
        "tests/test_face.py": "from w import LIMIT\n\ndef test_limit():\n    assert LIMIT == 3\n",
    }
    index = index_of(tmp_path, files)

    limit, _ = gate.propagate(changes(names={"src/w/limits.py": {"LIMIT"}}), index)
    other, _ = gate.propagate(changes(names={"src/w/limits.py": {"OTHER"}}), index)

    assert "tests/test_face.py" in limit
    assert "tests/test_face.py" not in other


# --- the killers' note -------------------------------------------------------------------------


def root_conftest() -> ModuleType:
    spec = importlib.util.spec_from_file_location("root_conftest", ROOT / "tests" / "conftest.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize(
    ("mutant", "failed", "noted"),
    [
        ("m.x_f__mutmut_3", True, True),
        ("m.x_f__mutmut_3", False, False),
        ("stats", True, False),
        ("", True, False),
    ],
)
def test_the_first_test_to_fail_under_a_mutant_is_noted_for_the_record(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, mutant: str, failed: bool, noted: bool
) -> None:
    hook = root_conftest().pytest_runtest_logreport
    monkeypatch.setenv(gate.KILLERS_VARIABLE, str(tmp_path))
    monkeypatch.setenv("MUTANT_UNDER_TEST", mutant)

    hook(SimpleNamespace(failed=failed, nodeid="tests/test_a.py::test_one"))
    hook(SimpleNamespace(failed=failed, nodeid="tests/test_a.py::test_two"))

    assert gate.read_killers(tmp_path) == (
        {"m.x_f__mutmut_3": gate.killer_code("tests/test_a.py::test_one")} if noted else {}
    )


def test_without_the_gates_directory_nothing_is_noted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(gate.KILLERS_VARIABLE, raising=False)
    monkeypatch.setenv("MUTANT_UNDER_TEST", "m.x_f__mutmut_3")
    monkeypatch.chdir(tmp_path)

    root_conftest().pytest_runtest_logreport(SimpleNamespace(failed=True, nodeid="t::x"))

    assert list(tmp_path.iterdir()) == []
