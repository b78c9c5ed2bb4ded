"""The mutation gate: mutmut judges what a change could affect, against the record of a full run.

``scripts/mutation --full`` mutates all of ``src/`` from an empty ``mutants/``,
passes only when every mutant is killed, and then writes the RECORD,
``scripts/mutation-record.json``: what that run judged, hashed (every mutated
function with mutmut's hash of it and its number of mutants, each module's
names outside those functions, the data files, the test files and the kit),
which functions each test file's tests reach (mutmut's stats) and which test
killed each mutant.

``scripts/mutation`` (what CI runs) compares the tree with the record and has
mutmut judge again the mutants of every changed function, and every other
mutant whose killer may now run differently; it refuses to judge, in one line,
when the record is missing or stale or when the judging would take longer than
its budget. docs/adr/0006-mutation-testing.md says why a mutant it does not
judge is still killed.

Everything that decides is a plain function over plain data (tested in
tests/architecture/test_mutation_gate.py). mutmut runs in child processes; two
of them drive mutmut 3.8.1's internals (``--prepare``: generate the mutants and
collect the stats, running no mutant; ``--probe-import-time``: which mutated
functions run while the tests are collected), hence the pin in pyproject.toml.
"""

from __future__ import annotations

import ast
import fnmatch
import json
import os
import shutil
import string
import subprocess
import sys
import time
import tomllib
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from importlib.metadata import version
from pathlib import Path

from mutation_scan import (
    EVERY_NAME,
    FIXTURES,
    MODULE_CODE,
    CodeIndex,
    Unit,
    Use,
    class_of,
    digest,
    function_nodes,
    local_imports,
    module_name,
    module_names,
    module_of,
    scan_code,
    short_name,
    signature,
)

ROOT = Path(__file__).resolve().parents[1]
RECORD = "scripts/mutation-record.json"
MUTANTS = "mutants"
FORMAT = 1
# The gate drives internals of this mutmut (--prepare, --probe-import-time); pyproject pins it.
MUTMUT_VERSION = "3.8.1"
BUDGET_VARIABLE = "WORKQUEUE_MUTATION_BUDGET_MINUTES"
DEFAULT_BUDGET_MINUTES = 15.0
# tests/conftest.py writes, under --full, the test that killed each mutant into this directory.
KILLERS_VARIABLE = "WORKQUEUE_MUTATION_KILLERS"
# What one mutant costs beside its tests (a fork, a pytest session): weighs mutants against
# each other in the estimate; the full run's time converts weight into seconds.
PER_MUTANT_SECONDS = 0.5
# Everything every mutant's verdict depends on: a change to one makes the record stale.
INFRASTRUCTURE_FILES = (
    "tests/conftest.py",
    "scripts/mutation",
    "scripts/mutation_gate.py",
    "scripts/mutation_scan.py",
)
INFRASTRUCTURE_TABLES = (
    ("tool", "mutmut"),
    ("tool", "pytest", "ini_options"),
    ("project", "dependencies"),
    ("project", "optional-dependencies"),
)
_UNSETTLED = ("timeout", "suspicious", "segfault")
_KILLER_LETTERS = string.digits + string.ascii_letters
_NO_KILLER = "-"


class GateError(Exception):
    """Something the gate cannot work with (a missing file, mutmut's data not as expected)."""


# --- the record -------------------------------------------------------------------


@dataclass(frozen=True)
class FunctionState:
    """A mutated function: mutmut's hash of it (with its pragmas) and its number of mutants."""

    signature: str
    mutants: int


@dataclass(frozen=True)
class Tree:
    """Every input of a mutant's verdict that is not infrastructure, hashed.

    ``functions`` by mutmut's mangled name (``workqueue.adapters.clock.xǁSystemClockǁnow``);
    ``modules`` by path: each module-level name's hash, its statements outside the
    mutated functions (``<module>`` for statements that bind no name); ``data_files``
    and ``test_files`` (the tests, what they import from tests/, the kit) by path.
    """

    functions: Mapping[str, FunctionState]
    modules: Mapping[str, Mapping[str, str]]
    data_files: Mapping[str, str]
    test_files: Mapping[str, str]


@dataclass(frozen=True)
class Record:
    """A full run that killed every mutant: its tree, what its tests reached, who killed what."""

    mutmut: str
    python: str
    infrastructure: Mapping[str, str]
    tree: Tree
    reach: Mapping[str, frozenset[str]]  # test file -> the functions its tests reach
    seconds: Mapping[str, float]  # test file -> its tests' total duration
    killers: Mapping[str, str]  # mutant -> killer_code() of the test that killed it
    import_time: frozenset[str]  # functions that ran while the tests were collected
    full_run_seconds: float


def killer_code(node_id: str) -> str:
    """A test, short: its file and a hash of its node id (the record holds 6,000 of these)."""
    node_id = node_id.removeprefix(f"{MUTANTS}/")
    return f"{test_file_of(node_id)}::{digest(node_id, 8)}"


def test_file_of(node_id: str) -> str:
    return node_id.removeprefix(f"{MUTANTS}/").partition("::")[0]


def _mutant_number(name: str) -> int:
    return int(name.rpartition("__mutmut_")[2])


def _json(value: object) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(", ", ": "), sort_keys=True)


def _block(entries: Mapping[str, object]) -> str:
    if not entries:
        return "{}"
    lines = [f"    {_json(key)}: {_json(entries[key])}" for key in sorted(entries)]
    return "{\n" + ",\n".join(lines) + "\n  }"


def _killer_entry(
    name: str, mutants: int, killers: Mapping[str, str], index: Mapping[str, int]
) -> list[object]:
    """[distinct killers as "file index:hash", one letter per mutant naming its killer]."""
    distinct: list[str] = []
    letters = []
    for number in range(1, mutants + 1):
        code = killers.get(f"{name}__mutmut_{number}")
        if code is None:
            letters.append(_NO_KILLER)
            continue
        file, _, hashed = code.rpartition("::")
        if file not in index:  # a test outside the record's files: as good as none noted
            letters.append(_NO_KILLER)
            continue
        short = f"{index[file]}:{hashed}"
        if short not in distinct:
            distinct.append(short)
        position = distinct.index(short)
        letters.append(_KILLER_LETTERS[position] if position < len(_KILLER_LETTERS) else _NO_KILLER)
    return [distinct[: len(_KILLER_LETTERS)], "".join(letters)]


def dumps_record(record: Record) -> str:
    """The record as JSON, one entry a line and keys sorted, so that a diff reads.

    A function's line: its signature, its number of mutants, the test files whose
    tests reach it (indexes into the sorted ``test_files``) and the killer of each
    of its mutants (``-``: none noted).
    """
    tests = sorted(set(record.tree.test_files) | set(record.reach))
    index = {path: number for number, path in enumerate(tests)}
    reached_by: dict[str, list[int]] = defaultdict(list)
    for path in tests:
        for function in record.reach.get(path, ()):
            reached_by[function].append(index[path])
    functions = {
        name: [
            state.signature,
            state.mutants,
            sorted(reached_by.get(name, [])),
            *_killer_entry(name, state.mutants, record.killers, index),
        ]
        for name, state in record.tree.functions.items()
    }
    test_files = {
        path: [record.tree.test_files.get(path, ""), round(record.seconds.get(path, 0.0), 3)]
        for path in tests
    }
    sections = {
        "data_files": _block(record.tree.data_files),
        "format": _json(FORMAT),
        "full_run_seconds": _json(round(record.full_run_seconds, 1)),
        "functions": _block(functions),
        "import_time": _json(sorted(record.import_time)),
        "infrastructure": _block(record.infrastructure),
        "modules": _block(record.tree.modules),
        "mutmut": _json(record.mutmut),
        "python": _json(record.python),
        "test_files": _block(test_files),
    }
    body = ",\n".join(f"  {_json(key)}: {sections[key]}" for key in sorted(sections))
    return "{\n" + body + "\n}\n"


def loads_record(text: str) -> Record:
    """The record written by :func:`dumps_record`.

    :raises GateError: if it is not a record of this format.
    """
    try:
        data = json.loads(text)
        if data.get("format") != FORMAT:
            raise GateError(f"the record is of format {data.get('format')!r}, not {FORMAT}")
        tests = sorted(data["test_files"])
        reach: dict[str, set[str]] = defaultdict(set)
        functions = {}
        killers = {}
        for name, (signature, mutants, reached_by, distinct, letters) in data["functions"].items():
            functions[name] = FunctionState(signature, int(mutants))
            for number in reached_by:
                reach[tests[number]].add(name)
            for number, letter in enumerate(letters, start=1):
                if letter != _NO_KILLER:
                    file, _, hashed = distinct[_KILLER_LETTERS.index(letter)].partition(":")
                    killers[f"{name}__mutmut_{number}"] = f"{tests[int(file)]}::{hashed}"
        return Record(
            mutmut=data["mutmut"],
            python=data["python"],
            infrastructure=dict(data["infrastructure"]),
            tree=Tree(
                functions=functions,
                modules={path: dict(names) for path, names in data["modules"].items()},
                data_files=dict(data["data_files"]),
                test_files={path: entry[0] for path, entry in data["test_files"].items()},
            ),
            reach={path: frozenset(names) for path, names in reach.items()},
            seconds={
                path: float(entry[1]) for path, entry in data["test_files"].items() if entry[1]
            },
            killers=killers,
            import_time=frozenset(data["import_time"]),
            full_run_seconds=float(data["full_run_seconds"]),
        )
    except (KeyError, TypeError, ValueError, IndexError) as error:
        raise GateError(f"the record cannot be read ({error!r})") from error


# --- infrastructure -----------------------------------------------------------------


def _table(config: Mapping[str, object], path: Sequence[str]) -> object:
    value: object = config
    for key in path:
        value = value.get(key) if isinstance(value, Mapping) else None
    return value


def infrastructure(root: Path) -> dict[str, str]:
    """A hash of each thing that changes how every mutant is judged.

    The settings of mutmut and pytest and the dependencies (pyproject.toml), the
    root conftest (hooks, the Hypothesis profile mutants run under, the killers'
    note) and the gate itself.
    """
    config = tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))
    parts = {
        f"pyproject.toml [{'.'.join(path)}]": digest(_json(_table(config, path)))
        for path in INFRASTRUCTURE_TABLES
    }
    for name in INFRASTRUCTURE_FILES:
        file = root / name
        parts[name] = digest(file.read_bytes()) if file.is_file() else "missing"
    return parts


def python_version() -> str:
    return f"{sys.version_info.major}.{sys.version_info.minor}"


def stale_parts(record: Record, now: Mapping[str, str], mutmut: str, python: str) -> list[str]:
    """What differs from the record in what judges every mutant; [] when nothing does."""
    stale = []
    if record.mutmut != mutmut:
        stale.append(f"mutmut {record.mutmut} -> {mutmut}")
    if record.python != python:
        stale.append(f"Python {record.python} -> {python}")
    for name in sorted(set(now) | set(record.infrastructure)):
        if record.infrastructure.get(name) != now.get(name):
            stale.append(f"{name} changed")
    return stale


# --- what changed, and what to judge ------------------------------------------------


@dataclass(frozen=True)
class Changes:
    """What differs between the record's tree and the tree now."""

    functions: frozenset[str] = frozenset()  # changed (hash, pragmas, mutants) or new
    deleted_functions: frozenset[str] = frozenset()
    names: Mapping[str, frozenset[str]] = field(default_factory=dict)  # module -> its names
    data_files: frozenset[str] = frozenset()
    test_files: frozenset[str] = frozenset()  # changed, new or deleted

    def __bool__(self) -> bool:
        parts = (self.functions, self.deleted_functions, self.names, self.data_files)
        return any(parts) or bool(self.test_files)


def _differing(before: Mapping[str, object], after: Mapping[str, object]) -> set[str]:
    return {key for key in set(before) | set(after) if before.get(key) != after.get(key)}


def package_directory(path: str, python_files: Iterable[str]) -> str:
    """The directory of the package a data file belongs to: the nearest with __init__.py."""
    packages = {str(Path(file).parent) for file in python_files if file.endswith("/__init__.py")}
    directory = Path(path).parent
    while directory.parts:
        if str(directory) in packages:
            return str(directory)
        directory = directory.parent
    return str(Path(path).parent)


def compare(record: Tree, now: Tree, index: CodeIndex | None = None) -> Changes:
    """What changed: functions by mutmut's hash, module-level names, data and test files.

    A changed data file counts as a change to the code that names it (its name, or
    a path ending in it, as a string: ``load_statements("monitor.sql")``), found in
    ``index``: those module-level names and functions, and those test-side files
    whole. When no code names it (a file found by listing its directory), it
    counts as a change to every name of every module of its package and to every
    kit module there.
    """
    functions = {
        name
        for name in now.functions
        if name not in record.functions or record.functions[name] != now.functions[name]
    }
    names: dict[str, set[str]] = {}
    for path, hashes in now.modules.items():
        if path not in record.modules:
            names[path] = {EVERY_NAME}
        elif changed := _differing(record.modules[path], hashes):
            names[path] = changed
    data_files = _differing(record.data_files, now.data_files)
    python_files = set(now.modules) | set(now.test_files)
    test_files = _differing(record.test_files, now.test_files)
    for data_file in data_files:
        readers = _naming_file(data_file, index) if index is not None else _Readers()
        for path, read in readers.names.items():
            if path in now.modules:
                names.setdefault(path, set()).update(read)
            else:
                test_files.add(path)
        functions |= readers.functions
        if readers:
            continue
        below = f"{package_directory(data_file, python_files)}/"
        for path in python_files:
            if path.startswith(below) and path in now.modules:
                names[path] = {EVERY_NAME}
            elif path.startswith(below):
                test_files.add(path)
    return Changes(
        functions=frozenset(functions),
        deleted_functions=frozenset(set(record.functions) - set(now.functions)),
        names={path: frozenset(changed) for path, changed in names.items()},
        data_files=frozenset(data_files),
        test_files=frozenset(test_files),
    )


@dataclass(frozen=True)
class _Readers:
    """The code that names a data file: module-level names by file, and functions."""

    names: Mapping[str, set[str]] = field(default_factory=dict)
    functions: frozenset[str] = frozenset()

    def __bool__(self) -> bool:
        return bool(self.names) or bool(self.functions)


def _naming_file(data_file: str, index: CodeIndex) -> _Readers:
    base = Path(data_file).name

    def names_it(unit: Unit) -> bool:
        return any(text == base or text.endswith(f"/{base}") for text in unit.strings)

    names: dict[str, set[str]] = defaultdict(set)
    for path, units in index.names.items():
        for name, unit in units.items():
            if names_it(unit):
                names[path].add(name)
    functions = frozenset(name for name, unit in index.functions.items() if names_it(unit))
    return _Readers(names=dict(names), functions=functions)


def _hit(use: Use, changed: Mapping[str, set[str]]) -> bool:
    path, name = use
    names = changed.get(path, set())
    return bool(names) and (EVERY_NAME in names or not name or name in names)


def _hits(unit: Unit, changed: Mapping[str, set[str]]) -> bool:
    return any(_hit(use, changed) for use in unit.uses)


@dataclass(frozen=True)
class Calls:
    """What ran while the tests were collected, and who calls whom (mutmut's stats)."""

    import_time: frozenset[str] = frozenset()
    callers: Mapping[str, frozenset[str]] = field(default_factory=dict)

    def at_import(self, functions: Iterable[str]) -> set[str]:
        """Those of ``functions`` that ran at import time, and the import-time ones calling them."""
        found: set[str] = set()
        todo = [name for name in functions if name in self.import_time]
        while todo:
            name = todo.pop()
            if name not in found:
                found.add(name)
                todo.extend(
                    caller for caller in self.callers.get(name, ()) if caller in self.import_time
                )
        return found


class _Naming:
    """Whether code names one of some functions: by its name, or, for a module's own
    ``__getattr__``/``__dir__`` (called by Python on ``module.name``), by using the module."""

    def __init__(self, functions: Iterable[str], paths: Mapping[str, str]) -> None:
        self.words = set()
        self.modules = set()
        for name in functions:
            if name.rpartition(".")[2] in ("x___getattr__", "x___dir__"):
                self.modules.add(paths.get(module_of(name), ""))
            else:
                self.words.add(short_name(name))

    def __call__(self, unit: Unit) -> bool:
        return bool(unit.words & self.words) or any(path in self.modules for path, _ in unit.uses)


def propagate(
    changes: Changes, index: CodeIndex, calls: Calls = Calls()
) -> tuple[dict[str, set[str]], set[str]]:
    """Spread the changes along the names code uses, to a fixed point.

    A module-level name of a file changes when its statements use a changed name
    of another file or of their own; every name of a test-side file, when a
    fixture or hook it gets from pytest changed; a mutated function, when its body
    uses a changed name, or it is a method of a changed class.

    What runs once and is kept for every later test changes too when it names a
    function that changed: code that runs at import (module and class level, and
    test files), when it names one that ran at import time or an import-time caller
    of it; a caching function's body, when it names any. The tests that get the
    kept result do not reach that function in mutmut's stats.

    Returns the changed names by file (``*``: all of them) and the changed functions.
    """
    changed: dict[str, set[str]] = {path: set(names) for path, names in changes.names.items()}
    for path in changes.test_files:
        changed[path] = {EVERY_NAME}
    functions = set(changes.functions)
    paths = {module_name(path): path for path in index.names if path.startswith("src/")}
    while True:
        grew = False
        early = calls.at_import(functions)
        kept = _Naming(functions | changes.deleted_functions, paths)
        loaded = _Naming(early, paths)
        for path, units in index.names.items():
            own = changed.setdefault(path, set())
            for name, unit in units.items():
                if EVERY_NAME in own or name in own:
                    continue
                if (
                    _hits(unit, changed)
                    or unit.words & own
                    or loaded(index.eager[path][name])
                    or kept(index.cached[path][name])
                ):
                    own.add(name)
                    grew = True
            if own & {MODULE_CODE, FIXTURES} and EVERY_NAME not in own:
                own.add(EVERY_NAME)
                grew = True
        for name, unit in index.functions.items():
            if name in functions:
                continue
            own = changed.get(paths.get(module_of(name), ""), set())
            if (
                EVERY_NAME in own
                or class_of(name) in own
                or unit.words & own
                or _hits(unit, changed)
            ):
                functions.add(name)
                grew = True
        if not grew:
            return {path: names for path, names in changed.items() if names}, functions


def unplaced(functions: Iterable[str], index: CodeIndex, calls: Calls) -> set[str]:
    """The changed functions that ran at import time with no code found that calls them then.

    Neither they nor an import-time caller of theirs is named by module-level code
    or a test file, nor by a caching function that such code names (mutmut does
    not trace a decorated function, so its calls have no caller in the stats; the
    caching function's result changes, and propagate() follows its name): what they
    computed then may be kept anywhere, so every test is affected.
    """
    paths = {module_name(path): path for path in index.names}
    units = [unit for names in index.eager.values() for unit in names.values()]
    lost = set()
    for name in functions:
        if name in calls.import_time:
            naming = _Naming(calls.at_import([name]), paths)
            if not any(naming(unit) for unit in units) and not _named_at_import(
                _caches_naming(naming, index), index
            ):
                lost.add(name)
    return lost


def _caches_naming(naming: _Naming, index: CodeIndex) -> dict[str, set[str]]:
    """The caching functions whose bodies name one of ``naming``'s, by file."""
    found: dict[str, set[str]] = defaultdict(set)
    for path, cached in index.cached.items():
        for name, unit in cached.items():
            if unit.words and naming(unit):
                found[path].add(name)
    return found


def _named_at_import(names: Mapping[str, set[str]], index: CodeIndex) -> bool:
    """Whether module-level code or a test file names one of ``names`` (by file)."""
    for path, eager in index.eager.items():
        own = names.get(path, set())
        for unit in eager.values():
            if _hits(unit, names) or unit.words & own:
                return True
    return False


@dataclass(frozen=True)
class Plan:
    """What a change could affect, and so which mutants mutmut judges again."""

    changes: Changes
    changed_names: Mapping[str, set[str]]  # by file, directly or through what it uses
    changed_functions: frozenset[str]  # changed, or using something that changed
    import_time: frozenset[str]  # changed, run at import time, and no caller found then
    affected_tests: frozenset[str]  # tests that may run differently (node ids)
    mutants: frozenset[str]  # the mutants to judge

    @property
    def functions(self) -> frozenset[str]:
        """The functions with a mutant to judge."""
        return frozenset(name.partition("__mutmut_")[0] for name in self.mutants)


def plan(
    record: Record,
    now: Tree,
    tests: Mapping[str, frozenset[str]],
    mutants: Mapping[str, Sequence[str]],
    index: CodeIndex,
    calls: Calls = Calls(),
) -> Plan:
    """The mutants mutmut must judge again.

    ``tests``: every test now (node id) -> the functions it reaches; ``mutants``:
    every function now -> its mutants' names; ``calls``: what ran at import time
    (in the record's run or now) and who calls whom. A test is affected when its
    file or anything it uses changed or it reaches a changed function; every test
    is, when a changed function that ran at import time cannot be placed (see
    :func:`unplaced`). Judged: every mutant of a changed function, and every other
    mutant whose killer on record is affected or gone; a mutant with no killer on
    record, when an affected test reaches its function now or an affected test
    file reached it in the record.
    """
    changes = compare(record.tree, now, index)
    calls = Calls(calls.import_time | record.import_time, calls.callers)
    changed_names, functions = propagate(changes, index, calls)
    changed_files = {
        path
        for path, names in changed_names.items()
        if names and (path in now.test_files or path in record.tree.test_files)
    }
    # A function gone that ran at import time: nothing is left to tell who called it then.
    lost = unplaced(functions, index, calls) | (changes.deleted_functions & calls.import_time)
    affected = {
        test
        for test, reached in tests.items()
        if lost or test_file_of(test) in changed_files or reached & functions
    }
    present = {killer_code(test) for test in tests}
    killed_by_affected = {killer_code(test) for test in affected}
    reached_by_affected = {name for test in affected for name in tests[test]}
    for path in changed_files:
        reached_by_affected |= record.reach.get(path, frozenset())
    judged = set()
    for function, names in mutants.items():
        for name in names:
            killer = record.killers.get(name)
            if (
                function in functions
                or (killer is None and function in reached_by_affected)
                or (killer is not None and (killer not in present or killer in killed_by_affected))
            ):
                judged.add(name)
    return Plan(
        changes=changes,
        changed_names=changed_names,
        changed_functions=frozenset(functions),
        import_time=frozenset(lost),
        affected_tests=frozenset(affected),
        mutants=frozenset(judged),
    )


def _function_seconds(
    reach: Mapping[str, frozenset[str]], seconds: Mapping[str, float]
) -> dict[str, float]:
    by_function: dict[str, float] = defaultdict(float)
    for path, functions in reach.items():
        for function in functions:
            by_function[function] += seconds.get(path, 0.0)
    return by_function


def estimate_seconds(
    record: Record,
    mutants: Iterable[str],
    reach: Mapping[str, frozenset[str]],
    seconds: Mapping[str, float],
) -> float:
    """How long mutmut will take over ``mutants``, scaled by the full run on record.

    A mutant weighs a share of overhead plus the duration of the test files whose
    tests reach its function; the full run's time over the weight of all its
    mutants turns weight into seconds on the machine that made the record.
    """
    recorded = _function_seconds(record.reach, record.seconds)
    total = sum(
        state.mutants * (PER_MUTANT_SECONDS + recorded[name])
        for name, state in record.tree.functions.items()
    )
    current = _function_seconds(reach, seconds)
    weight = sum(PER_MUTANT_SECONDS + current[name.partition("__mutmut_")[0]] for name in mutants)
    if total <= 0 or record.full_run_seconds <= 0:
        return weight
    return weight * record.full_run_seconds / total


@dataclass(frozen=True)
class Decision:
    """What the gate does: pass with nothing to judge, judge these mutants, or refuse."""

    verdict: str  # "nothing", "judge" or "refuse"
    message: str


def minutes(seconds: float) -> str:
    return f"{seconds / 60:.0f} min" if seconds >= 90 else f"{seconds:.0f} s"


def decide(the_plan: Plan, estimate: float, budget_seconds: float) -> Decision:
    """Nothing to judge; or judge the plan's mutants; or refuse when that is over budget."""
    if not the_plan.mutants:
        return Decision("nothing", "no mutant's verdict can have changed: nothing to judge")
    size = f"{len(the_plan.functions)} functions ({len(the_plan.mutants)} mutants"
    if estimate > budget_seconds:
        return Decision(
            "refuse",
            f"{size}, about {minutes(estimate)}) to judge, over the budget of"
            f" {minutes(budget_seconds)} ({BUDGET_VARIABLE}); run `scripts/mutation --full`"
            f" and commit {RECORD}",
        )
    return Decision("judge", f"judging {size}, about {minutes(estimate)})")


# --- the tree now, from the sources and mutmut's data -----------------------------------


def _mutmut_table(root: Path) -> Mapping[str, object]:
    config = tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))
    table = config["tool"]["mutmut"]
    assert isinstance(table, dict)
    return table


def python_files(root: Path, entry: str) -> list[str]:
    """The Python files at ``entry`` (a file, or a directory searched through)."""
    base = root / entry
    if base.is_file():
        return [entry] if entry.endswith(".py") else []
    return sorted(
        path.relative_to(root).as_posix()
        for path in base.rglob("*.py")
        if "__pycache__" not in path.parts
    )


def _patterns(root: Path, key: str) -> list[str]:
    value = _mutmut_table(root).get(key, [])
    return [str(pattern) for pattern in value] if isinstance(value, list) else []


def unmutated_files(root: Path) -> list[str]:
    """The Python files under src/ that mutmut leaves alone: the kit (``do_not_mutate``).

    mutmut's rule (``Config.should_mutate``): a file is mutated when it matches
    ``only_mutate`` (if given) and not ``do_not_mutate``.
    """
    only, never = _patterns(root, "only_mutate"), _patterns(root, "do_not_mutate")
    return [
        path
        for path in python_files(root, "src")
        if (only and not any(fnmatch.fnmatch(path, pattern) for pattern in only))
        or any(fnmatch.fnmatch(path, pattern) for pattern in never)
    ]


def test_side_files(root: Path) -> list[str]:
    """The tests mutants run against, their conftests, what they import from tests/, the kit."""
    selection = _patterns(root, "pytest_add_cli_args_test_selection") or ["tests"]
    selected = [path for entry in selection for path in python_files(root, entry)]
    kit = unmutated_files(root)
    every = set(python_files(root, "tests")) | set(kit)
    return sorted(path for path in local_imports(root, [*selected, *kit], every) if path in every)


def data_files(root: Path) -> dict[str, str]:
    """Every file under src/ that is not Python: SQL, templates, static files."""
    found = {}
    for path in sorted((root / "src").rglob("*")):
        relative = path.relative_to(root)
        if (
            path.is_file()
            and path.suffix not in (".py", ".pyc")
            and "__pycache__" not in relative.parts
            and not any(part.endswith(".egg-info") for part in relative.parts)
        ):
            found[relative.as_posix()] = digest(path.read_bytes())
    return found


def _hashes(root: Path, paths: Iterable[str]) -> dict[str, str]:
    return {path: digest((root / path).read_bytes()) for path in paths}


def tree_from_mutants(root: Path) -> tuple[Tree, dict[str, list[str]]]:
    """The tree as mutmut generated it, and each function's mutants, sorted by number.

    :raises GateError: if mutmut's data is not what this module expects.
    """
    functions: dict[str, FunctionState] = {}
    modules: dict[str, dict[str, str]] = {}
    mutants: dict[str, list[str]] = defaultdict(list)
    metas = sorted((root / MUTANTS / "src").rglob("*.py.meta"))
    if not metas:
        raise GateError(f"mutmut left no mutants under {MUTANTS}/src")
    for meta in metas:
        path = meta.relative_to(root / MUTANTS).as_posix().removesuffix(".meta")
        data = json.loads(meta.read_text(encoding="utf-8"))
        source = (root / path).read_text(encoding="utf-8")
        hashes: dict[str, str] = data["hash_by_function_name"]
        for mutant in data["exit_code_by_key"]:
            mutants[mutant.partition("__mutmut_")[0]].append(mutant)
        nodes = function_nodes(ast.parse(source))
        prefix = module_name(path)
        for key, mutmut_hash in hashes.items():
            name = f"{prefix}.{key}"
            count = len(mutants.get(name, []))
            functions[name] = FunctionState(signature(mutmut_hash, source, nodes.get(key)), count)
        modules[path] = module_names(source, hashes)
    strays = set(mutants) - set(functions)
    if strays:
        raise GateError(f"mutants of functions mutmut gave no hash: {sorted(strays)[:3]}")
    for names in mutants.values():
        names.sort(key=_mutant_number)
    tree = Tree(
        functions=functions,
        modules=modules,
        data_files=data_files(root),
        test_files=_hashes(root, test_side_files(root)),
    )
    return tree, dict(mutants)


def tree_from_sources(root: Path, record: Tree) -> Tree:
    """The tree now, hashed without mutmut generating anything, for the record's functions.

    Equal to the record's only when nothing changed: a new function is not among
    the record's, so it shows as a new name of its module.
    """
    from mutmut.mutation.file_mutation import compute_function_hashes

    keys: dict[str, set[str]] = defaultdict(set)
    for name in record.functions:
        prefix = module_of(name)
        keys[prefix].add(name[len(prefix) + 1 :])
    kit = set(unmutated_files(root))
    functions: dict[str, FunctionState] = {}
    modules: dict[str, dict[str, str]] = {}
    for path in python_files(root, "src"):
        if path in kit:
            continue
        source = (root / path).read_text(encoding="utf-8")
        prefix = module_name(path)
        mutated = keys.get(prefix, set())
        nodes = function_nodes(ast.parse(source))
        for key, mutmut_hash in compute_function_hashes(source, mutated.__contains__).items():
            name = f"{prefix}.{key}"
            state = FunctionState(signature(mutmut_hash, source, nodes.get(key)), 0)
            functions[name] = FunctionState(state.signature, record.functions[name].mutants)
        modules[path] = module_names(source, mutated)
    return Tree(
        functions=functions,
        modules=modules,
        data_files=data_files(root),
        test_files=_hashes(root, test_side_files(root)),
    )


@dataclass(frozen=True)
class Stats:
    """mutmut's stats: what each test reaches, and how long each takes."""

    tests: Mapping[str, frozenset[str]]  # node id -> functions
    durations: Mapping[str, float]  # node id -> seconds
    callers: Mapping[str, frozenset[str]] = field(default_factory=dict)  # function -> callers

    def reach(self) -> dict[str, frozenset[str]]:
        """Test file -> the functions its tests reach."""
        by_file: dict[str, set[str]] = defaultdict(set)
        for test, functions in self.tests.items():
            by_file[test_file_of(test)] |= functions
        return {path: frozenset(functions) for path, functions in by_file.items()}

    def seconds(self) -> dict[str, float]:
        """Test file -> its tests' total duration."""
        by_file: dict[str, float] = defaultdict(float)
        for test, duration in self.durations.items():
            by_file[test_file_of(test)] += duration
        return dict(by_file)


def read_stats(root: Path) -> Stats:
    data = json.loads((root / MUTANTS / "mutmut-stats.json").read_text(encoding="utf-8"))
    tests: dict[str, set[str]] = defaultdict(set)
    for function, node_ids in data["tests_by_mangled_function_name"].items():
        for node_id in node_ids:
            tests[node_id.removeprefix(f"{MUTANTS}/")].add(function)
    durations = {
        node_id.removeprefix(f"{MUTANTS}/"): float(duration)
        for node_id, duration in data["duration_by_test"].items()
    }
    for node_id in durations:
        tests.setdefault(node_id, set())
    callers = {
        function: frozenset(names)
        for function, names in data.get("function_dependencies", {}).items()
    }
    return Stats(
        {test: frozenset(functions) for test, functions in tests.items()}, durations, callers
    )


def statuses(root: Path) -> dict[str, str]:
    """mutmut's verdict on each mutant under mutants/ ("killed", "survived", "not checked"...)."""
    from mutmut.stats import status_by_exit_code

    found = {}
    for meta in (root / MUTANTS / "src").rglob("*.py.meta"):
        data = json.loads(meta.read_text(encoding="utf-8"))
        for name, exit_code in data["exit_code_by_key"].items():
            found[name] = status_by_exit_code[exit_code]
    return found


def read_killers(directory: Path) -> dict[str, str]:
    """Mutant -> killer_code() of the first test failed under it (tests/conftest.py notes it)."""
    if not directory.is_dir():
        return {}
    found = {}
    for path in directory.iterdir():
        lines = path.read_text(encoding="utf-8").splitlines()
        if lines:
            found[path.name] = killer_code(lines[0])
    return found


# --- running mutmut -------------------------------------------------------------------


def _run_logged(
    command: list[str], root: Path, log: Path, env: Mapping[str, str] | None = None
) -> int:
    with log.open("a", encoding="utf-8") as output:
        # Our own commands: the venv's mutmut, or this script, with mutant names.
        return subprocess.run(  # noqa: S603
            command,
            cwd=root,
            stdout=output,
            stderr=subprocess.STDOUT,
            check=False,
            env={**os.environ, **(env or {})},
        ).returncode


def _is_spinner(line: str) -> bool:
    return "\u2800" <= line[0] <= "\u28ff"


def _show_log(log: Path, start: int = 0) -> None:
    """mutmut's last lines from ``start`` (a byte offset), and the last state of its spinner."""
    with log.open("rb") as file:
        file.seek(start)
        text = file.read().decode("utf-8", errors="replace").replace("\r", "\n")
    lines = [line for line in text.splitlines() if line.strip()]
    spinner = [line for line in lines if _is_spinner(line)]
    others = [line for line in lines if not _is_spinner(line) and not line.startswith("\U0001f389")]
    for line in others[-30:]:
        print(line)
    if spinner:
        print(spinner[-1])


def _mutmut_run(
    root: Path, names: Sequence[str], log: Path, children: int, killers: Path | None
) -> int:
    command = [str(Path(sys.executable).parent / "mutmut"), "run", "--max-children", str(children)]
    env = {KILLERS_VARIABLE: str(killers)} if killers else None
    return _run_logged([*command, *names], root, log, env)


def _settle(root: Path, names: Sequence[str] | None, log: Path, killers: Path | None) -> int:
    """Run once more, alone, each mutant whose run ended without the tests' verdict.

    A test process that died or a harness that raised (mutmut's "timeout",
    "suspicious", "segfault"; one in six thousand, on a loaded machine). A survivor
    is not: the tests are deterministic. A mutant that truly hangs or crashes does
    so again, and fails the gate then.
    """
    found = statuses(root)
    wanted = found if names is None else {name: found.get(name, "") for name in names}
    unsettled = sorted(name for name, status in wanted.items() if status in _UNSETTLED)
    if not unsettled:
        return 0
    print("== running again, one at a time, the mutants whose run ended without a verdict:")
    for name in unsettled:
        print(f"    {name}")
    status = _mutmut_run(root, unsettled, log, 1, killers)
    again = statuses(root)
    still = [f"    {name}: {again.get(name)}" for name in unsettled if again.get(name) != "killed"]
    print("\n".join(still) if still else "    all of them killed this time")
    return status


def score(found: Mapping[str, str]) -> tuple[int, int, list[str]]:
    """Killed, tested (all but mutmut's "skipped"), and the others as "name: status"."""
    tested = {name: status for name, status in found.items() if status != "skipped"}
    others = sorted(f"{name}: {status}" for name, status in tested.items() if status != "killed")
    return len(tested) - len(others), len(tested), others


def _print_score(found: Mapping[str, str]) -> bool:
    killed, tested, others = score(found)
    counts = Counter(status for status in found.values() if status not in ("killed", "skipped"))
    details = ", ".join(f"{count} {status}" for status, count in sorted(counts.items()))
    percent = 100.0 * killed / tested if tested else 0.0
    print(
        f"mutation score: {killed}/{tested} killed = {percent:.2f} %"
        + (f" ({details})" if details else "")
    )
    if others:
        print("== mutants not killed (mutmut show NAME for the diff):", file=sys.stderr)
        for line in others:
            print(f"    {line}", file=sys.stderr)
    return bool(tested) and not others


def _fresh_mutants(root: Path) -> Path:
    """An empty mutants/: no cached verdict, stale copy or old stats can count."""
    shutil.rmtree(root / MUTANTS, ignore_errors=True)
    (root / MUTANTS).mkdir()
    return root / MUTANTS / "mutmut-run.log"


def _check_mutmut() -> str:
    installed = version("mutmut")
    if installed != MUTMUT_VERSION:
        raise GateError(
            f"mutmut {installed} is installed; the gate drives mutmut {MUTMUT_VERSION}'s"
            " internals (pyproject.toml pins it: run scripts/bootstrap)"
        )
    return installed


def _this_script(*arguments: str) -> list[str]:
    return [sys.executable, str(Path(__file__).resolve()), *arguments]


def _probe_import_time(root: Path, log: Path) -> frozenset[str]:
    out = root / MUTANTS / "import-time.json"
    if _run_logged(_this_script("--probe-import-time", str(out)), root, log) != 0:
        raise GateError(f"could not tell which functions run at import time; see {log}")
    return frozenset(json.loads(out.read_text(encoding="utf-8")))


def _elapsed(started: float) -> str:
    seconds = int(time.monotonic() - started)
    return f"{seconds // 60} min {seconds % 60} s"


def _cpus() -> int:
    return os.cpu_count() or 2


def run_full(root: Path) -> int:
    """Mutate everything, gate on 100 %, and when every mutant is killed write the record."""
    mutmut = _check_mutmut()
    log = _fresh_mutants(root)
    killers = root / MUTANTS / "killers"
    killers.mkdir()
    started = time.monotonic()
    print(f"== mutmut run, every mutant (log: {log.relative_to(root)})")
    run_status = _mutmut_run(root, [], log, _cpus(), killers)
    _show_log(log)
    full_run_seconds = time.monotonic() - started
    print(f"== mutmut run exited with status {run_status} after {_elapsed(started)}")
    run_status = _settle(root, None, log, killers) or run_status
    passed = _print_score(statuses(root))
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from mutation_skips import main as print_skips

    print_skips([str(root)])
    if not passed or run_status != 0:
        print("mutation: FAILED: every mutant must be killed", file=sys.stderr)
        return 1
    tree, _ = tree_from_mutants(root)
    stats = read_stats(root)
    record = Record(
        mutmut=mutmut,
        python=python_version(),
        infrastructure=infrastructure(root),
        tree=tree,
        reach=stats.reach(),
        seconds=stats.seconds(),
        killers=read_killers(killers),
        import_time=_probe_import_time(root, log),
        full_run_seconds=full_run_seconds,
    )
    (root / RECORD).write_text(dumps_record(record), encoding="utf-8")
    mutants = sum(state.mutants for state in tree.functions.values())
    print(
        f"mutation: OK; wrote {RECORD} ({len(tree.functions)} functions, {mutants} mutants,"
        f" {len(record.killers)} killers noted, {len(record.reach)} test files): commit it"
    )
    return 0


def _refuse(message: str) -> int:
    print(f"mutation: REFUSED: {message}", file=sys.stderr)
    return 1


def _budget_seconds() -> float:
    raw = os.environ.get(BUDGET_VARIABLE, "")
    try:
        return 60 * (float(raw) if raw else DEFAULT_BUDGET_MINUTES)
    except ValueError as error:
        raise GateError(f"{BUDGET_VARIABLE}={raw!r} is not a number of minutes") from error


def _print_plan(the_plan: Plan) -> None:
    changes = the_plan.changes
    names = sum(len(names) for names in changes.names.values())
    print(
        f"== changed since the record: {len(changes.functions)} functions"
        f" ({len(changes.deleted_functions)} gone), {names} module-level names in"
        f" {len(changes.names)} modules, {len(changes.data_files)} data files,"
        f" {len(changes.test_files)} test files"
    )
    listed = [
        *(f"function: {name}" for name in sorted(changes.functions)),
        *(f"function gone: {name}" for name in sorted(changes.deleted_functions)),
        *(
            f"names: {path}: {', '.join(sorted(changed))}"
            for path, changed in sorted(changes.names.items())
        ),
        *(f"data file: {path}" for path in sorted(changes.data_files)),
        *(f"test file: {path}" for path in sorted(changes.test_files)),
    ]
    for line in listed[:30]:
        print(f"    {line}")
    if len(listed) > 30:
        print(f"    ... and {len(listed) - 30} more")
    print(
        f"== affected: {len(the_plan.changed_functions)} functions changed or using a change,"
        f" {len(the_plan.affected_tests)} tests that may run differently"
    )
    for name in sorted(the_plan.import_time):
        print(f"    {name} runs while the tests are collected: every test is affected")


def run_gate(root: Path) -> int:
    """Judge what changed since the record; refuse when the record cannot answer."""
    started = time.monotonic()
    path = root / RECORD
    if not path.is_file():
        return _refuse(
            f"no record of a full run ({RECORD}); run `scripts/mutation --full` and commit it"
        )
    record = loads_record(path.read_text(encoding="utf-8"))
    stale = stale_parts(record, infrastructure(root), _check_mutmut(), python_version())
    if stale:
        return _refuse(
            f"the record is stale ({'; '.join(stale)}); run `scripts/mutation --full`"
            f" and commit {RECORD}"
        )
    if tree_from_sources(root, record.tree) == record.tree:
        print("mutation: OK: nothing changed since the record; nothing to judge")
        return 0
    log = _fresh_mutants(root)
    print(f"== mutmut: the mutants and the stats, no mutant run yet (log: {log.relative_to(root)})")
    if _run_logged(_this_script("--prepare"), root, log) != 0:
        _show_log(log)
        print(
            "mutation: FAILED: mutmut could not generate the mutants or the stats", file=sys.stderr
        )
        return 1
    now, mutants = tree_from_mutants(root)
    stats = read_stats(root)
    import_time = _probe_import_time(root, log)
    mutated = {path: _keys(path, now) for path in now.modules}
    index = scan_code(root, mutated, now.test_files)
    the_plan = plan(record, now, stats.tests, mutants, index, Calls(import_time, stats.callers))
    _print_plan(the_plan)
    estimate = estimate_seconds(record, the_plan.mutants, stats.reach(), stats.seconds())
    decision = decide(the_plan, estimate, _budget_seconds())
    prepared = _elapsed(started)
    if decision.verdict == "refuse":
        return _refuse(decision.message)
    if decision.verdict == "nothing":
        print(f"mutation: OK: {decision.message} ({prepared})")
        return 0
    print(f"== {decision.message}; prepared in {prepared}")
    names = sorted(the_plan.mutants)
    start = log.stat().st_size
    run_status = _mutmut_run(root, names, log, _cpus(), None)
    _show_log(log, start)
    run_status = _settle(root, names, log, None) or run_status
    found = statuses(root)
    judged = {name: found.get(name, "not checked") for name in names}
    passed = _print_score(judged)
    killed, tested, _ = score(judged)
    summary = (
        f"{len(the_plan.changes.functions)} functions changed,"
        f" {len(the_plan.changes.test_files)} test files changed,"
        f" {len(the_plan.functions)} functions judged, {killed}/{tested} mutants killed,"
        f" {_elapsed(started)}"
    )
    if not passed or run_status != 0:
        print(f"mutation: FAILED: every mutant must be killed ({summary})", file=sys.stderr)
        return 1
    print(f"mutation: OK ({summary})")
    return 0


def _keys(path: str, tree: Tree) -> set[str]:
    prefix = module_name(path)
    return {name[len(prefix) + 1 :] for name in tree.functions if module_of(name) == prefix}


def prepare(children: int) -> None:
    """mutmut's steps before it runs a mutant: generate every mutant, collect the stats.

    The first half of mutmut 3.8.1's ``_run``; ``mutmut run NAMES`` then finds the
    mutants generated and loads these stats.
    """
    from mutmut.__main__ import (
        collect_or_load_stats,
        create_mutants,
        store_lines_covered_by_tests,
    )
    from mutmut.mutation.trampoline import set_mutant_under_test
    from mutmut.utils.file_utils import copy_also_copy_files, copy_src_dir, setup_source_paths
    from mutmut.workers.isolation import get_mutant_runner

    set_mutant_under_test("mutant_generation")
    Path(MUTANTS).mkdir(exist_ok=True)
    copy_src_dir()
    copy_also_copy_files()
    setup_source_paths()
    store_lines_covered_by_tests()
    create_mutants(children)
    collect_or_load_stats(
        get_mutant_runner(children),
        mutants_caught_by_type_checker={},
        apply_config_invalidation=True,
    )


def probe_import_time(out: Path) -> None:
    """Write which mutated functions run while pytest collects the tests mutants run against.

    mutmut's stats credit the calls made before the first test to that test alone,
    though what they compute (a subclass hook's registration, a module's constant)
    is kept for every test. This collects the tests with mutmut's stats on.
    """
    from mutmut.configuration import config
    from mutmut.mutation.trampoline import set_mutant_under_test
    from mutmut.state import state
    from mutmut.utils.file_utils import setup_source_paths

    setup_source_paths()
    set_mutant_under_test("stats")
    os.environ["PY_IGNORE_IMPORTMISMATCH"] = "1"
    import pytest

    os.chdir(MUTANTS)
    selection = config().pytest_add_cli_args_test_selection
    arguments = ["--rootdir=.", "--collect-only", "-qqq", *selection, *config().pytest_add_cli_args]
    if pytest.main(arguments) != 0:
        raise GateError("pytest could not collect the tests")
    out.write_text(json.dumps(sorted(state()._stats), ensure_ascii=False), encoding="utf-8")


def main(argv: Sequence[str]) -> int:
    """``--full``: the full run, and the record; no argument: the gate against the record."""
    try:
        if argv[:1] == ["--prepare"]:
            prepare(_cpus())
            return 0
        if argv[:1] == ["--probe-import-time"]:
            probe_import_time(Path(argv[1]).resolve())
            return 0
        if list(argv) == ["--full"]:
            return run_full(ROOT)
        if not argv:
            return run_gate(ROOT)
    except GateError as error:
        print(f"mutation: FAILED: {error}", file=sys.stderr)
        return 1
    print("usage: scripts/mutation [--full]", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
