"""The mutation gate's books: the record of a full run, and what a change makes it judge again.

A full run (``scripts/mutation --full``) mutates everything and must kill every
mutant; it then writes the RECORD (``scripts/mutation-record.json``, committed):
mutmut's hash of every mutated function and its number of mutants, a hash of
each mutated module outside its mutated functions, of each file under ``src/``
that is not Python, of each Python file the mutation tests can import (the
tests, their helpers, the contract kit), which functions each test file
reaches (from mutmut's stats), and a hash of everything that changes how every
mutant is judged (the infrastructure: mutmut's version, its settings, pytest's,
``tests/conftest.py`` and these scripts).

The gate CI runs (``scripts/mutation``) compares the tree with the record and
judges again every function a change can have touched:

- every function whose mutmut hash changed, or that is new;
- every function of a module whose text outside its mutated functions changed,
  and of the package of a non-Python file that changed (its SQL, templates);
- every function a changed, new or deleted test file reaches (a test file counts
  as changed when a local module it imports changed, or its directory's
  ``conftest.py``);
- every function reached by a test that reaches a changed function, now (from
  this run's stats) or in the recorded run (from the record).

Why nothing else can have changed its verdict: a mutant of a function F is
killed by some test T. T's verdict on it depends on T's code, on the code T
runs (F's and the other functions T reaches, the modules' other text, the
files T reads) and on how tests are run (the infrastructure). A change to T or
to what it imports makes T a changed test, and every function T reaches is
judged again; a change to any function or module text T runs is a change that T
reaches, and again every function T reaches is judged; a change to how tests
run makes the record stale. So an unchanged mutant is judged again whenever
anything its killing test depends on changed, and otherwise its recorded
verdict (killed) stands.

The gate refuses to judge (exit 1, one line) when the record is missing or
stale (the infrastructure changed), and when judging again would take more
than the budget (then a full run and a new record are the way).
"""

from __future__ import annotations

import ast
import hashlib
import json
import os
import sys
import tomllib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from fnmatch import fnmatch
from pathlib import Path
from typing import Any

__all__ = [
    "Change",
    "Record",
    "Tree",
    "changed_test_files",
    "functions_to_judge",
    "main",
    "read_tree",
]

ROOT = Path(__file__).resolve().parents[1]
RECORD = Path("scripts/mutation-record.json")
MUTANTS = Path("mutants")
# What changes how every mutant is judged: a change to one makes the record stale.
INFRASTRUCTURE_FILES = (
    "tests/conftest.py",
    "scripts/mutation",
    "scripts/mutation_gate.py",
)
# The Python files the mutation tests can import besides src/workqueue's mutated
# modules: the tests and their helpers, and the contract kit (test code shipped in
# the package, not mutated).
TEST_CODE = ("tests", "src/workqueue/adapters/testing")
# Functions judged by their own tests only: the FakeClock is reached by nearly every
# test, and its own tests kill every one of its mutants (169 of 169, 2026-12-03), so
# running the rest against them only adds minutes. A change to this table makes the
# record stale (this file is part of the infrastructure).
OWN_TESTS = {"workqueue.adapters.testing.clock.": ("tests/unit/test_fake_clock.py",)}
# Seconds of overhead per mutant (a fork, pytest's start) on top of its tests.
MUTANT_OVERHEAD = 0.6
# What judging mutants again may take in CI (whose whole run must stay under 30 min).
DEFAULT_BUDGET_MINUTES = 12.0


def digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()[:16]


@dataclass(frozen=True)
class Record:
    """What a full run saw, and what it judged (every mutant killed)."""

    mutmut: str
    infrastructure: str
    functions: dict[str, tuple[str, int, float]]
    """Per mutated function (mutmut's mangled name): its hash, its number of mutants, and the
    seconds its mutants took (what judging it again costs)."""
    modules: dict[str, str]
    """Per mutated module: the hash of its text outside its mutated functions."""
    data: dict[str, str]
    """Per file under src/ that is not Python: its hash."""
    tests: dict[str, str]
    """Per Python file of the tests and the kit: its hash."""
    reach: dict[str, list[str]]
    """Per test file: the functions its tests reach."""

    def to_json(self) -> str:
        functions = sorted(self.functions)
        index = {name: position for position, name in enumerate(functions)}
        document = {
            "mutmut": self.mutmut,
            "infrastructure": self.infrastructure,
            "functions": [[name, *self.functions[name]] for name in functions],
            "modules": self.modules,
            "data": self.data,
            "tests": self.tests,
            "reach": {
                test: sorted(index[name] for name in reached if name in index)
                for test, reached in sorted(self.reach.items())
            },
        }
        # One entry per line: a change to the record reads as a change to what changed.
        lines = ["{"]
        for position, (key, value) in enumerate(document.items()):
            comma = "," if position < len(document) - 1 else ""
            if isinstance(value, list):
                inner = ",\n".join("  " + json.dumps(entry, ensure_ascii=False) for entry in value)
                lines.append(f'"{key}": [\n{inner}\n]{comma}')
            elif isinstance(value, dict):
                inner = ",\n".join(
                    f"  {json.dumps(k, ensure_ascii=False)}: {json.dumps(v)}"
                    for k, v in sorted(value.items())
                )
                lines.append(f'"{key}": {{\n{inner}\n}}{comma}')
            else:
                lines.append(f'"{key}": {json.dumps(value)}{comma}')
        lines.append("}")
        return "\n".join(lines) + "\n"

    @classmethod
    def from_json(cls, text: str) -> Record:
        document = json.loads(text)
        names = [entry[0] for entry in document["functions"]]
        return cls(
            mutmut=document["mutmut"],
            infrastructure=document["infrastructure"],
            functions={entry[0]: (entry[1], entry[2], entry[3]) for entry in document["functions"]},
            modules=document["modules"],
            data=document["data"],
            tests=document["tests"],
            reach={
                test: [names[i] for i in reached] for test, reached in document["reach"].items()
            },
        )


@dataclass
class Tree:
    """What the working tree holds now, as the record holds it, and this run's stats."""

    mutmut: str
    infrastructure: str
    functions: dict[str, tuple[str, int, float]]
    modules: dict[str, str]
    data: dict[str, str]
    tests: dict[str, str]
    imports: dict[str, set[str]]
    """Per Python file of the tests and the kit: the files of ours it imports."""
    tests_by_function: dict[str, set[str]]
    """This run's stats: per mutated function, the tests (node ids) that reach it."""
    durations: dict[str, float] = field(default_factory=dict)
    """This run's stats: seconds per test (node id)."""

    def reach_by_file(self) -> dict[str, set[str]]:
        reach: dict[str, set[str]] = {}
        for function, tests in self.tests_by_function.items():
            for test in tests:
                reach.setdefault(test_file(test), set()).add(function)
        return reach

    def record(self) -> Record:
        return Record(
            mutmut=self.mutmut,
            infrastructure=self.infrastructure,
            functions=self.functions,
            modules=self.modules,
            data=self.data,
            tests=self.tests,
            reach={test: sorted(reached) for test, reached in self.reach_by_file().items()},
        )


@dataclass(frozen=True)
class Change:
    """What changed since the record, and what that makes the gate judge again."""

    functions: set[str]
    test_files: set[str]
    judged: set[str]
    mutants: int
    seconds: float


def test_file(node_id: str) -> str:
    """The file part of a pytest node id."""
    return node_id.split("::", 1)[0]


def module_of(path: Path, src: Path) -> str:
    """``src/workqueue/domain/store.py`` -> ``workqueue.domain.store`` (a package: its name)."""
    parts = list(path.relative_to(src).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def mangled(module: str, qualname: str) -> str:
    """mutmut's name of a function (``f``) or a method (``C.m``) of ``module``."""
    if "." in qualname:
        klass, method = qualname.split(".", 1)
        return f"{module}.xǁ{klass}ǁ{method}"
    return f"{module}.x_{qualname}"


def remainder(source: str, module: str, mutated: Iterable[str]) -> str:
    """``source`` without the bodies of its ``mutated`` functions: what else the module says."""
    judged = set(mutated)
    tree = ast.parse(source)

    def keep(node: ast.stmt, qualname: str) -> str:
        is_function = isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
        if is_function and mangled(module, qualname) in judged:
            return f"def {qualname}"
        return ast.dump(node)

    parts: list[str] = []
    for node in tree.body:
        if isinstance(node, ast.ClassDef):
            header = [node.name, *map(ast.dump, [*node.bases, *node.keywords])]
            parts.append(f"class {header} {[ast.dump(d) for d in node.decorator_list]}")
            for item in node.body:
                parts.append(keep(item, f"{node.name}.{getattr(item, 'name', '')}"))
        else:
            parts.append(keep(node, getattr(node, "name", "")))
    return "\n".join(parts)


def local_imports(path: Path, root: Path, known: set[str]) -> set[str]:
    """The files of ``known`` (paths relative to ``root``) that ``path`` imports."""
    found: set[str] = set()
    try:
        tree = ast.parse(path.read_text(encoding="utf-8"))
    except SyntaxError:
        return found
    names: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.extend(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names.append(node.module)
            names.extend(f"{node.module}.{alias.name}" for alias in node.names)
    bases = [path.parent.relative_to(root), Path("."), Path("src")]
    for name in names:
        relative = Path(*name.split("."))
        for base in bases:
            for candidate in (base / relative.with_suffix(".py"), base / relative / "__init__.py"):
                if candidate.as_posix() in known:
                    found.add(candidate.as_posix())
    return found


def changed_test_files(record: Record, tree: Tree) -> set[str]:
    """Test files changed since the record: edited, new, deleted, or importing (transitively)
    a changed file, or under a changed ``conftest.py``."""
    changed = {
        path
        for path in record.tests.keys() | tree.tests.keys()
        if record.tests.get(path) != tree.tests.get(path)
    }
    grew = True
    while grew:
        grew = False
        for path, imported in tree.imports.items():
            if path not in changed and imported & changed:
                changed.add(path)
                grew = True
    for conftest in [path for path in changed if path.endswith("/conftest.py")]:
        folder = conftest.removesuffix("conftest.py")
        changed |= {path for path in tree.tests if path.startswith(folder)}
    return changed


def package_of(path: str, modules: Iterable[str]) -> str:
    """The package a non-Python file under ``src/`` belongs to: the nearest folder above it
    that holds modules (``src/workqueue/adapters/postgres/sql/store.sql`` ->
    ``workqueue.adapters.postgres``)."""
    parts = list(Path(path).relative_to("src").parent.parts)
    names = set(modules)
    while parts:
        name = ".".join(parts)
        if any(module.startswith(name + ".") for module in names):
            return name
        parts.pop()
    return ""


def changed_functions(record: Record, tree: Tree) -> set[str]:
    """Functions whose hash changed or that are new, and every function of a module whose
    other text changed or of a package whose non-Python files changed."""
    changed = {
        name
        for name, (current, _, _) in tree.functions.items()
        if record.functions.get(name, (None, 0, 0.0))[0] != current
    }
    modules = {
        module
        for module in record.modules.keys() | tree.modules.keys()
        if record.modules.get(module) != tree.modules.get(module)
    }
    for path in record.data.keys() | tree.data.keys():
        if record.data.get(path) != tree.data.get(path):
            package = package_of(path, tree.modules)
            modules |= {m for m in tree.modules if m == package or m.startswith(package + ".")}
    changed |= {name for name in tree.functions if name.rsplit(".", 1)[0] in modules}
    return changed


def functions_to_judge(record: Record, tree: Tree) -> Change:
    """Every function a change since ``record`` can have touched (see the module's docstring)."""
    functions = changed_functions(record, tree)
    tests = changed_test_files(record, tree)
    reach_now = tree.reach_by_file()
    affected = set(tests)
    for function in functions:
        affected |= {test_file(test) for test in tree.tests_by_function.get(function, ())}
        affected |= {test for test, reached in record.reach.items() if function in reached}
    judged = set(functions)
    for test in affected:
        judged |= reach_now.get(test, set())
        judged |= set(record.reach.get(test, ()))
    judged &= tree.functions.keys()
    mutants = sum(tree.functions[name][1] for name in judged)
    seconds = sum(cost(name, record, tree) for name in judged)
    return Change(functions, tests, judged, mutants, seconds)


def cost(name: str, record: Record, tree: Tree) -> float:
    """Seconds judging ``name``'s mutants again takes: what the recorded run measured, else
    an estimate from its tests' durations."""
    recorded = record.functions.get(name)
    if recorded is not None and recorded[2] > 0:
        return recorded[2]
    tests = tree.tests_by_function.get(name, ())
    per_mutant = MUTANT_OVERHEAD + sum(tree.durations.get(test, 0.0) for test in tests)
    return tree.functions[name][1] * per_mutant


def mutmut_settings(root: Path) -> dict[str, Any]:
    project = tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))
    tool = project["tool"]
    return {"mutmut": tool["mutmut"], "pytest": tool["pytest"]["ini_options"]}


def infrastructure(root: Path, mutmut_version: str) -> str:
    parts = [mutmut_version, json.dumps(mutmut_settings(root), sort_keys=True)]
    parts += [(root / name).read_text(encoding="utf-8") for name in INFRASTRUCTURE_FILES]
    return digest("\n\0".join(parts).encode())


def read_tree(root: Path, mutants: Path) -> Tree:
    """The tree as the record holds it, from the sources and mutmut's ``mutants/``."""
    from importlib.metadata import version

    settings = mutmut_settings(root)["mutmut"]
    excluded = settings.get("do_not_mutate", [])
    stats = json.loads((mutants / "mutmut-stats.json").read_text(encoding="utf-8"))
    hashes: dict[str, str] = stats["function_hashes"]
    counts: dict[str, int] = {}
    seconds: dict[str, float] = {}
    for meta in (mutants / "src").rglob("*.py.meta"):
        document = json.loads(meta.read_text(encoding="utf-8"))
        for key in document["exit_code_by_key"]:
            name = key.rsplit("__mutmut_", 1)[0]
            counts[name] = counts.get(name, 0) + 1
        for key, duration in document["durations_by_key"].items():
            name = key.rsplit("__mutmut_", 1)[0]
            seconds[name] = round(seconds.get(name, 0.0) + duration, 1)
    functions = {
        name: (hashes[name], counts.get(name, 0), seconds.get(name, 0.0)) for name in hashes
    }
    src = root / "src"
    modules: dict[str, str] = {}
    data: dict[str, str] = {}
    for path in sorted((src / "workqueue").rglob("*")):
        if not path.is_file() or "__pycache__" in path.parts:
            continue
        relative = path.relative_to(root).as_posix()
        if path.suffix != ".py":
            data[relative] = digest(path.read_bytes())
        elif not any(fnmatch(relative, pattern) for pattern in excluded):
            module = module_of(path, src)
            mine = [name for name in functions if name.rsplit(".", 1)[0] == module]
            text = remainder(path.read_text(encoding="utf-8"), module, mine)
            modules[module] = digest(text.encode())
    tests: dict[str, str] = {}
    for base in TEST_CODE:
        for path in sorted((root / base).rglob("*.py")):
            if "__pycache__" not in path.parts:
                tests[path.relative_to(root).as_posix()] = digest(path.read_bytes())
    known = set(tests)
    imports = {path: local_imports(root / path, root, known) for path in tests}
    return Tree(
        mutmut=version("mutmut"),
        infrastructure=infrastructure(root, version("mutmut")),
        functions=functions,
        modules=modules,
        data=data,
        tests=tests,
        imports=imports,
        tests_by_function={k: set(v) for k, v in stats["tests_by_mangled_function_name"].items()},
        durations=stats["duration_by_test"],
    )


def judged_patterns(names: Iterable[str]) -> list[str]:
    """The mutant names of ``names`` as mutmut takes them on its command line."""
    return [f"{name}__mutmut_*" for name in sorted(names)]


def verdicts(mutants: Path, names: set[str]) -> dict[str, int | None]:
    """The exit code mutmut recorded for every mutant of ``names``."""
    found: dict[str, int | None] = {}
    for meta in (mutants / "src").rglob("*.py.meta"):
        for key, code in json.loads(meta.read_text(encoding="utf-8"))["exit_code_by_key"].items():
            if key.rsplit("__mutmut_", 1)[0] in names:
                found[key] = code
    return found


def narrowed(tests_by_function: dict[str, list[str]]) -> dict[str, list[str]]:
    """mutmut's tests per function, with :data:`OWN_TESTS`' functions judged by their own."""
    narrowed: dict[str, list[str]] = {}
    for function, tests in tests_by_function.items():
        own = next(
            (files for prefix, files in OWN_TESTS.items() if function.startswith(prefix)), ()
        )
        kept = [test for test in tests if test_file(test) in own]
        narrowed[function] = kept if own and kept else tests
    return narrowed


def _narrow(root: Path) -> int:
    path = root / MUTANTS / "mutmut-stats.json"
    stats = json.loads(path.read_text(encoding="utf-8"))
    stats["tests_by_mangled_function_name"] = narrowed(stats["tests_by_mangled_function_name"])
    path.write_text(json.dumps(stats), encoding="utf-8")
    return 0


def _plan(root: Path, out: Path) -> int:
    record_path = root / RECORD
    if not record_path.exists():
        print(
            f"mutation: REFUSED: no record ({RECORD}); run scripts/mutation --full and commit it",
            file=sys.stderr,
        )
        return 1
    record = Record.from_json(record_path.read_text(encoding="utf-8"))
    tree = read_tree(root, root / MUTANTS)
    stale = _stale(record, tree)
    if stale:
        print(
            f"mutation: REFUSED: the record is stale ({stale}); "
            f"run scripts/mutation --full and commit {RECORD}",
            file=sys.stderr,
        )
        return 1
    change = functions_to_judge(record, tree)
    budget = float(os.environ.get("WORKQUEUE_MUTATION_BUDGET_MINUTES", DEFAULT_BUDGET_MINUTES))
    minutes = change.seconds / 2 / 60  # two children
    print(
        f"mutation: {len(change.functions)} functions and {len(change.test_files)} test files "
        f"changed since the record; judging {len(change.judged)} functions again "
        f"({change.mutants} mutants, about {minutes:.1f} min)"
    )
    if minutes > budget:
        print(
            f"mutation: REFUSED: judging {change.mutants} mutants would take about "
            f"{minutes:.0f} min, over the budget of {budget:.0f}; run scripts/mutation --full "
            f"and commit {RECORD}",
            file=sys.stderr,
        )
        return 1
    out.write_text("\n".join(judged_patterns(change.judged)) + "\n", encoding="utf-8")
    return 0


def _stale(record: Record, tree: Tree) -> str:
    if record.mutmut != tree.mutmut:
        return f"mutmut {record.mutmut} made it, {tree.mutmut} is installed"
    if record.infrastructure != tree.infrastructure:
        changed = ", ".join(INFRASTRUCTURE_FILES)
        return f"how mutants are judged changed: mutmut's or pytest's settings, or {changed}"
    return ""


def _judge(root: Path, names_file: Path) -> int:
    names = {
        line.removesuffix("__mutmut_*")
        for line in names_file.read_text(encoding="utf-8").splitlines()
        if line
    }
    found = verdicts(root / MUTANTS, names)
    not_killed = {key: code for key, code in found.items() if code not in (1, 3)}
    print(f"mutation score of the judged functions: {len(found) - len(not_killed)}/{len(found)}")
    for key, code in sorted(not_killed.items()):
        print(f"    {key}: exit code {code}", file=sys.stderr)
    return 1 if not_killed else 0


def _record(root: Path) -> int:
    tree = read_tree(root, root / MUTANTS)
    (root / RECORD).write_text(tree.record().to_json(), encoding="utf-8")
    print(f"mutation: recorded {len(tree.functions)} functions in {RECORD}")
    return 0


def main(argv: Mapping[int, str] | list[str]) -> int:
    """``narrow`` | ``plan OUT`` | ``judge NAMES`` | ``record``, from the repository's root."""
    command = argv[0]
    if command == "plan":
        return _plan(ROOT, Path(argv[1]))
    if command == "judge":
        return _judge(ROOT, Path(argv[1]))
    if command == "record":
        return _record(ROOT)
    if command == "narrow":
        return _narrow(ROOT)
    raise SystemExit(f"unknown command {command!r}")


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
