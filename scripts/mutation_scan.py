"""What the code of the tree names: the ``ast`` scan behind scripts/mutation_gate.py.

mutmut hashes each function it mutates; this module hashes the rest of a module,
name by name (a constant, a class, an import), and finds, for each piece of code
(a mutated function's body, a module-level name's statements, a test file's),
the names of other files it uses: through imports and re-exports, a lazy face's
table of names, module names in strings, and the fixtures pytest hands a test by
the name it asks for. scripts/mutation_gate.py spreads a change along these uses.
docs/adr/0006-mutation-testing.md says what the scan assumes.
"""

from __future__ import annotations

import ast
import hashlib
import re
from collections import defaultdict
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TypeGuard

__all__ = [
    "EVERY_NAME",
    "FIXTURES",
    "MODULE_CODE",
    "CodeIndex",
    "Unit",
    "Use",
    "class_of",
    "conftests",
    "digest",
    "function_nodes",
    "local_imports",
    "mangle",
    "module_name",
    "module_names",
    "module_of",
    "name_statements",
    "scan_code",
    "short_name",
    "signature",
]

Function = ast.FunctionDef | ast.AsyncFunctionDef

_PRAGMA = "pragma: no mutate"
# A decorator that keeps a result between calls: whatever the body computes is handed to
# every later caller, whose tests mutmut's stats do not record as reaching what it called.
_CACHING = re.compile(r"cache", re.IGNORECASE)
_MODULE_STRING = re.compile(r"^[A-Za-z_]\w*(\.[A-Za-z_]\w*)+(:[A-Za-z_][\w.]*)?$")
# The name of the statements of a module that bind no name (a call at import time): a
# change there counts as a change to every name of the module.
MODULE_CODE = "<module>"
# The name of the fixtures and hooks a test-side file gets from pytest (see scan_code).
FIXTURES = "<fixtures>"
# All the names of a file.
EVERY_NAME = "*"
# Hooks that only write the report: no verdict depends on them.
_REPORTING_HOOKS = frozenset({"pytest_terminal_summary", "pytest_report_header"})


def digest(data: str | bytes, size: int = 12) -> str:
    """A short content hash, as mutmut's own (hex digits of SHA-256)."""
    raw = data.encode() if isinstance(data, str) else data
    return hashlib.sha256(raw).hexdigest()[:size]


# --- modules: mutated functions, and the names outside them --------------------------


def mangle(name: str, class_name: str) -> str:
    """mutmut's key of a function: ``x_name``, or ``xǁClassǁname`` for a method."""
    return f"xǁ{class_name}ǁ{name}" if class_name else f"x_{name}"


def _inner(class_name: str, name: str) -> str:
    return f"{class_name}.{name}" if class_name else name


def function_nodes(tree: ast.Module) -> dict[str, Function]:
    """Every function mutmut could mutate, by its key: the top-level ones and methods.

    The walk of mutmut's ``compute_function_hashes``: a nested class's methods are
    ``xǁOuter.Innerǁname``; a function inside another is part of that one.
    """
    found: dict[str, Function] = {}

    def visit(body: list[ast.stmt], class_name: str) -> None:
        for node in body:
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                found[mangle(node.name, class_name)] = node
            elif isinstance(node, ast.ClassDef):
                visit(node.body, _inner(class_name, node.name))

    visit(tree.body, "")
    return found


def pragma_mark(source: str, node: Function) -> str:
    """The ``# pragma: no mutate`` comments in a function, which its AST hash cannot see."""
    lines = source.splitlines()
    first = min([node.lineno, *(decorator.lineno for decorator in node.decorator_list)])
    last = node.end_lineno or node.lineno
    marks = [
        f"{number - first}:{lines[number - 1].strip()}"
        for number in range(first, last + 1)
        if _PRAGMA in lines[number - 1]
    ]
    return digest("\n".join(marks)) if marks else ""


def signature(mutmut_hash: str, source: str, node: Function | None) -> str:
    """mutmut's hash of a function, with a mark of its pragmas when it has any."""
    mark = pragma_mark(source, node) if node is not None else ""
    return f"{mutmut_hash}+{mark}" if mark else mutmut_hash


def _strip(body: list[ast.stmt], class_name: str, mutated: set[str]) -> list[ast.stmt]:
    """``body`` without its mutated functions (in place, classes too): what stays is names."""
    kept = []
    for node in body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            if mangle(node.name, class_name) in mutated:
                continue
        elif isinstance(node, ast.ClassDef):
            node.body = _strip(node.body, _inner(class_name, node.name), mutated)
        kept.append(node)
    return kept


def _bound(statement: ast.stmt, first: bool) -> set[str]:
    """The module-level names a statement binds (a docstring binds ``__doc__``)."""
    if isinstance(statement, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
        return {statement.name}
    value = statement.value if isinstance(statement, ast.Expr) else None
    if first and isinstance(value, ast.Constant) and isinstance(value.value, str):
        return {"__doc__"}
    names: set[str] = set()
    stack: list[ast.AST] = [statement]
    while stack:
        node = stack.pop()
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(node.name)
            continue
        if isinstance(node, ast.Import | ast.ImportFrom):
            names |= {
                alias.asname or alias.name.partition(".")[0]
                for alias in node.names
                if alias.name != "*"
            }
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
        stack.extend(ast.iter_child_nodes(node))
    return names or {MODULE_CODE}


def name_statements(tree: ast.Module, mutated: Iterable[str]) -> dict[str, list[ast.stmt]]:
    """Each module-level name with the statements that bind it, mutated functions left out."""
    statements: dict[str, list[ast.stmt]] = defaultdict(list)
    for position, statement in enumerate(_strip(tree.body, "", set(mutated))):
        for name in _bound(statement, position == 0):
            statements[name].append(statement)
    return dict(statements)


def module_names(source: str, mutated: Iterable[str]) -> dict[str, str]:
    """The hash of each module-level name, from its statements outside the mutated functions.

    A module's text outside its mutated functions, split by the names it binds, so
    that a change to one constant changes that name alone. Comments and layout do
    not count; a moved or added mutated function changes no name.
    """
    return {
        name: digest("\n".join(ast.dump(statement) for statement in statements), 8)
        for name, statements in name_statements(ast.parse(source), mutated).items()
    }


# --- what code names: the ast scan behind the propagation ------------------------------

# A use of a name: (file, name); name "" is the module itself.
Use = tuple[str, str]


@dataclass(frozen=True)
class Unit:
    """A piece of code: the names of other files it uses, every identifier it mentions,
    and the strings it holds that could name a file (no whitespace: not prose)."""

    uses: frozenset[Use] = frozenset()
    words: frozenset[str] = frozenset()
    strings: frozenset[str] = frozenset()


@dataclass(frozen=True)
class CodeIndex:
    """What each piece of the tree's code names.

    ``functions``: each mutated function's body, by mangled name. ``names``: each
    module-level name of each file (a mutated module, a test file, a helper, a kit
    module; by path), its statements outside the mutated functions. ``eager``: the
    part of those statements that runs at import (all but function bodies);
    ``cached``: the bodies of caching functions. What either computes is kept for
    every later test.
    """

    functions: Mapping[str, Unit]
    names: Mapping[str, Mapping[str, Unit]]
    eager: Mapping[str, Mapping[str, Unit]]
    cached: Mapping[str, Mapping[str, Unit]]


def module_name(path: str) -> str:
    """``src/workqueue/domain/__init__.py`` -> ``workqueue.domain``, as mutmut names modules."""
    parts = list(Path(path).with_suffix("").parts)
    if parts and parts[0] == "src":
        parts = parts[1:]
    if parts and parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def module_of(function: str) -> str:
    """The module part of a mangled name: ``a.b.xǁCǁf`` -> ``a.b``."""
    parts = function.split(".")
    for position in range(len(parts) - 1, -1, -1):
        if parts[position].startswith(("x_", "xǁ")):
            return ".".join(parts[:position])
    return function.rpartition(".")[0]


def class_of(function: str) -> str:
    """The module-level class a method belongs to, "" for a function."""
    key = function[len(module_of(function)) + 1 :]
    return key[2:].partition("ǁ")[0].partition(".")[0] if key.startswith("xǁ") else ""


def short_name(function: str) -> str:
    """What code calling a function names: the function, or the class of a dunder method."""
    key = function[len(module_of(function)) + 1 :]
    if not key.startswith("xǁ"):
        return key[2:]
    class_name, _, name = key[2:].rpartition("ǁ")
    if name.startswith("__") and name.endswith("__"):
        return class_name.rpartition(".")[2]
    return name


@dataclass
class _FileInfo:
    dotted: str
    tree: ast.Module
    bindings: dict[str, list[tuple[str, str | None]]]  # name -> (module, attribute) imported
    defined: set[str]
    lazy: bool  # a module-level __getattr__: it hands out names it does not bind
    module_strings: list[str]
    parents: dict[int, ast.AST] | None = None


class _Resolver:
    """Finds the files behind the names code uses, as its imports find them.

    Roots: ``src/``, ``tests/`` and every directory under tests/ with Python files
    (pytest puts a test module's directory on ``sys.path``). A name found under
    several roots stands for all of them.
    """

    def __init__(self, root: Path, paths: Iterable[str]) -> None:
        self.root = root
        self.paths = set(paths)
        directories = {str(Path(path).parent) for path in self.paths if path.startswith("tests/")}
        self.roots = ["src", "tests", *sorted(directories - {"tests"})]
        self._infos: dict[str, _FileInfo] = {}
        self._origins: dict[tuple[str, str], frozenset[Use]] = {}

    def files(self, dotted: str) -> list[str]:
        relative = dotted.replace(".", "/")
        return [
            candidate
            for base in self.roots
            for candidate in (f"{base}/{relative}.py", f"{base}/{relative}/__init__.py")
            if candidate in self.paths
        ]

    def dotted(self, path: str) -> str:
        if path.startswith("src/"):
            return module_name(path)
        # pytest's import of a test module: from the first directory up without __init__.py
        parts = list(Path(path).with_suffix("").parts)
        start = len(parts) - 1
        while start > 0 and "/".join([*parts[:start], "__init__.py"]) in self.paths:
            start -= 1
        names = parts[start:]
        return ".".join(names[:-1] if names[-1] == "__init__" else names)

    def info(self, path: str) -> _FileInfo:
        if path not in self._infos:
            tree = ast.parse((self.root / path).read_text(encoding="utf-8"))
            self._infos[path] = self._scan(path, tree)
        return self._infos[path]

    def _scan(self, path: str, tree: ast.Module) -> _FileInfo:
        dotted = self.dotted(path)
        package = path.endswith("__init__.py")
        bindings: dict[str, list[tuple[str, str | None]]] = defaultdict(list)
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    first = alias.name.partition(".")[0]
                    target = alias.name if alias.asname else first
                    bindings[alias.asname or first].append((target, None))
            elif isinstance(node, ast.ImportFrom):
                base = _absolute(dotted, package, node.level, node.module)
                for alias in node.names:
                    if alias.name != "*":
                        bindings[alias.asname or alias.name].append((base, alias.name))
        defined = {
            name
            for position, statement in enumerate(tree.body)
            for name in _bound(statement, position == 0)
        }
        strings = [
            node.value.partition(":")[0]
            for node in ast.walk(tree)
            if isinstance(node, ast.Constant)
            and isinstance(node.value, str)
            and _MODULE_STRING.match(node.value)
        ]
        return _FileInfo(
            dotted=dotted,
            tree=tree,
            bindings=dict(bindings),
            defined=defined,
            lazy="__getattr__" in defined,
            module_strings=[name for name in strings if self.files(name)],
        )

    def origins(self, dotted: str, attribute: str) -> frozenset[Use]:
        """Where ``dotted.attribute`` comes from: that module's name, and what it re-exports."""
        key = (dotted, attribute)
        if key in self._origins:
            return self._origins[key]
        self._origins[key] = frozenset()  # a cycle of re-exports adds nothing more
        found: set[Use] = {(path, "") for path in self.files(f"{dotted}.{attribute}")}
        for path in self.files(dotted):
            found.add((path, attribute))
            info = self.info(path)
            if attribute in info.bindings:
                for module, name in info.bindings[attribute]:
                    found |= self.origins(module, name) if name else self.module(module)
            elif attribute not in info.defined and info.lazy:
                # A lazy face (``__getattr__``) hands out names of the modules it names.
                for named in info.module_strings:
                    found |= self.origins(named, attribute)
        result = frozenset(found)
        self._origins[key] = result
        return result

    def inherited(self, path: str, among: set[str]) -> set[str]:
        """``path`` and the files of ``among`` its classes' bases come from, and theirs.

        The test methods pytest collects from a test file's classes are also those
        they inherit (the contract kit's mixins), with the fixtures they ask for.
        """
        found: set[str] = set()
        todo = [path]
        while todo:
            current = todo.pop()
            if current in found or current not in among:
                continue
            found.add(current)
            tree = self.info(current).tree
            bases = [
                base
                for node in ast.walk(tree)
                if isinstance(node, ast.ClassDef)
                for base in node.bases
            ]
            todo.extend(file for file, _ in self.unit(current, bases).uses)
        return found

    def module(self, dotted: str) -> set[Use]:
        return {(path, "") for path in self.files(dotted)}

    def unit(self, path: str, nodes: Iterable[ast.AST]) -> Unit:
        """The names of other files that ``nodes`` of the file at ``path`` use, and their words."""
        info = self.info(path)
        if info.parents is None:
            info.parents = {
                id(child): node
                for node in ast.walk(info.tree)
                for child in ast.iter_child_nodes(node)
            }
        uses: set[Use] = set()
        words: set[str] = set()
        strings: set[str] = set()
        paired: set[int] = set()
        for top in nodes:
            for node in _walk_without_annotations(top):
                if isinstance(node, ast.Constant) and _names_a_file(node.value):
                    strings.add(node.value)
                if isinstance(node, ast.Name):
                    words.add(node.id)
                    for module, attribute in info.bindings.get(node.id, []):
                        uses |= self._chain(module, attribute, _attributes(node, info.parents))
                elif isinstance(node, ast.Attribute):
                    words.add(node.attr)
                elif isinstance(node, ast.Dict):
                    # {"Name": "package.module"}: where a lazy face finds each name.
                    for key, value in zip(node.keys, node.values, strict=True):
                        if _text(key) and _text(value) and self.files(_text(value)):
                            uses |= self.origins(_text(value), _text(key))
                            paired.add(id(value))
                elif (
                    isinstance(node, ast.Constant)
                    and isinstance(node.value, str)
                    and id(node) not in paired
                    and _MODULE_STRING.match(node.value)
                ):
                    # A module named in a string ("pkg.module:name"): imported by name.
                    # Bare, it is what pytest_plugins, importlib.resources' files() and
                    # import_module() take: what they use of the module comes in by the
                    # fixtures its tests ask for (scan_code), its data files (compare),
                    # or a face's table of names (the Dict case above); the string
                    # itself stands for the module's import-time code.
                    name, _, attribute = node.value.partition(":")
                    first = attribute.partition(".")[0]
                    uses |= self.origins(name, first or MODULE_CODE)
        return Unit(uses=frozenset(uses), words=frozenset(words), strings=frozenset(strings))

    def _chain(self, module: str, attribute: str | None, chain: list[str]) -> set[Use]:
        """The use of ``module.attribute.chain...``: a submodule as far as the chain names one."""
        if attribute is not None:
            if not self.files(f"{module}.{attribute}"):
                return set(self.origins(module, attribute))
            module = f"{module}.{attribute}"
        found = self.module(module)
        for name in chain:
            if not self.files(f"{module}.{name}"):
                return found | self.origins(module, name)
            module = f"{module}.{name}"
            found |= self.module(module)
        return found


def _text(node: ast.AST | None) -> str:
    """The text of a string constant, "" for anything else."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    return ""


def _absolute(dotted: str, package: bool, level: int, module: str | None) -> str:
    """The module a (relative) ``from ... import`` names."""
    if not level:
        return module or ""
    parts = dotted.split(".") if dotted else []
    if not package:
        parts = parts[:-1]
    parts = parts[: len(parts) - (level - 1)]
    return ".".join([*parts, *([module] if module else [])])


def _attributes(node: ast.Name, parents: Mapping[int, ast.AST]) -> list[str]:
    """The attributes read off a name: ``a.b.c`` -> [b, c] for the name ``a``."""
    chain = []
    current: ast.AST = node
    parent = parents.get(id(current))
    while isinstance(parent, ast.Attribute) and parent.value is current:
        chain.append(parent.attr)
        current = parent
        parent = parents.get(id(current))
    return chain


def _names_a_file(value: object) -> TypeGuard[str]:
    """Whether a constant could be a file's name: a string, not empty, no whitespace."""
    return isinstance(value, str) and bool(value) and not any(c.isspace() for c in value)


def _walk_without_annotations(node: ast.AST) -> Iterator[ast.AST]:
    """``ast.walk`` without the annotations of functions' arguments and returns.

    Every file has ``from __future__ import annotations`` (ruff requires it) and
    nothing under src/ reads a function's annotations, so they never run. Class
    bodies' annotations stay: dataclasses and pydantic read those.
    """
    stack = [node]
    while stack:
        current = stack.pop()
        yield current
        if isinstance(current, ast.arg):
            continue
        if isinstance(current, ast.FunctionDef | ast.AsyncFunctionDef):
            arguments = current.args
            stack.extend(
                [
                    *current.decorator_list,
                    *arguments.defaults,
                    *(default for default in arguments.kw_defaults if default is not None),
                    *current.body,
                ]
            )
            continue
        stack.extend(ast.iter_child_nodes(current))


def _is_caching(function: Function) -> bool:
    return any(_CACHING.search(ast.unparse(decorator)) for decorator in function.decorator_list)


def _at_import(statement: ast.stmt) -> list[ast.AST]:
    """What of a (stripped) module-level statement runs at import: all but function bodies."""
    if isinstance(statement, ast.FunctionDef | ast.AsyncFunctionDef):
        arguments = statement.args
        return [
            *statement.decorator_list,
            *arguments.defaults,
            *(default for default in arguments.kw_defaults if default is not None),
        ]
    if isinstance(statement, ast.ClassDef):
        parts: list[ast.AST] = [*statement.bases, *statement.keywords, *statement.decorator_list]
        for child in statement.body:
            parts.extend(_at_import(child))
        return parts
    return [statement]


def _cached(statement: ast.stmt) -> list[ast.AST]:
    """The bodies of the caching functions in a module-level statement (and its classes)."""
    if isinstance(statement, ast.FunctionDef | ast.AsyncFunctionDef):
        return [statement] if _is_caching(statement) else []
    if isinstance(statement, ast.ClassDef):
        return [part for child in statement.body for part in _cached(child)]
    return []


def conftests(path: str, paths: Iterable[str]) -> set[str]:
    """The conftest.py files whose fixtures and hooks a file under tests/ gets."""
    known = set(paths)
    found = set()
    directory = Path(path).parent
    while directory.parts and directory.parts[0] == "tests":
        candidate = f"{directory.as_posix()}/conftest.py"
        if candidate in known and candidate != path:
            found.add(candidate)
        directory = directory.parent
    return found


@dataclass(frozen=True)
class _Fixtures:
    """What a conftest or plugin gives the tests it covers: fixtures (by name) and hooks."""

    requested: frozenset[str]  # fixtures a test asks for by name
    always: frozenset[str]  # autouse fixtures and hooks: every test gets them

    @staticmethod
    def of(tree: ast.Module) -> _Fixtures:
        requested, always = set(), set()
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                decorators = [ast.unparse(decorator) for decorator in node.decorator_list]
                if node.name in _REPORTING_HOOKS:
                    continue
                if node.name.startswith("pytest_") or any(
                    "autouse=True" in text for text in decorators
                ):
                    always.add(node.name)
                elif any("fixture" in text for text in decorators):
                    requested.add(node.name)
        return _Fixtures(frozenset(requested), frozenset(always))


def _plugins(resolver: _Resolver, paths: Iterable[str]) -> set[str]:
    """The modules the conftest.py files load with ``pytest_plugins``: fixtures for every test."""
    found = set()
    for path in paths:
        if path.endswith("conftest.py"):
            for statement in resolver.info(path).tree.body:
                if "pytest_plugins" in _bound(statement, first=False):
                    for node in ast.walk(statement):
                        if _text(node):
                            found |= set(resolver.files(_text(node)))
    return found


def _collected(path: str) -> bool:
    """Whether pytest loads the file itself: a test module or a conftest.py."""
    name = Path(path).name
    return name == "conftest.py" or (name.startswith("test_") and name.endswith(".py"))


def _asked_for(tree: ast.Module) -> set[str]:
    """Every name a file could ask pytest for: arguments, and strings (``usefixtures``)."""
    return {
        node.arg if isinstance(node, ast.arg) else _text(node)
        for node in ast.walk(tree)
        if isinstance(node, ast.arg) or _text(node)
    }


def scan_code(
    root: Path, mutated: Mapping[str, Iterable[str]], test_files: Iterable[str]
) -> CodeIndex:
    """Index what each piece of code names.

    ``mutated``: each mutated module's path -> the keys of its mutated functions;
    ``test_files``: the paths of the tests, helpers and kit modules, indexed by
    module-level name as the mutated modules are. A test-side file also gets the
    fixtures and hooks of its conftests and of the plugins they load, by the name
    it asks for them (``<fixtures>``): pytest hands them over, no import does.
    """
    tests = sorted(test_files)
    resolver = _Resolver(root, [*mutated, *tests])
    functions: dict[str, Unit] = {}
    names: dict[str, dict[str, Unit]] = {}
    eager: dict[str, dict[str, Unit]] = {}
    cached: dict[str, dict[str, Unit]] = {}
    for path in [*mutated, *tests]:
        keyset = set(mutated.get(path, ()))
        prefix = module_name(path)
        for key, node in function_nodes(resolver.info(path).tree).items():
            if key in keyset:
                functions[f"{prefix}.{key}"] = resolver.unit(path, [node])
        # Parsed again: stripping changes the tree, whose functions are indexed above.
        by_name = name_statements(ast.parse((root / path).read_text(encoding="utf-8")), keyset)
        names[path] = {name: resolver.unit(path, nodes) for name, nodes in by_name.items()}
        eager[path] = {
            name: resolver.unit(path, [part for node in nodes for part in _at_import(node)])
            for name, nodes in by_name.items()
        }
        cached[path] = {
            name: resolver.unit(path, [part for node in nodes for part in _cached(node)])
            for name, nodes in by_name.items()
        }
    plugins = _plugins(resolver, tests)
    given = {path: _Fixtures.of(resolver.info(path).tree) for path in {*plugins, *tests}}
    for path in tests:
        eager[path][FIXTURES] = cached[path][FIXTURES] = Unit()
        if not _collected(path):
            # A helper or a kit module gets fixtures through the test files that use it.
            names[path][FIXTURES] = Unit()
            continue
        asked = {
            name
            for source in resolver.inherited(path, set(tests))
            for name in _asked_for(resolver.info(source).tree)
        }
        uses = {
            (provider, name)
            for provider in (conftests(path, tests) | plugins) - {path}
            for name in given[provider].always | (given[provider].requested & asked)
        }
        names[path][FIXTURES] = Unit(uses=frozenset(uses))
    return CodeIndex(functions=functions, names=names, eager=eager, cached=cached)


def local_imports(root: Path, paths: Iterable[str], known: Iterable[str]) -> set[str]:
    """``paths`` and every file of ``known`` they import, directly or through each other."""
    known_set = set(known) | set(paths)
    resolver = _Resolver(root, known_set)
    found: set[str] = set()
    todo = list(paths)
    while todo:
        path = todo.pop()
        if path in found:
            continue
        found.add(path)
        info = resolver.info(path)
        for targets in info.bindings.values():
            for module, attribute in targets:
                todo.extend(resolver.files(module))
                if attribute is not None:
                    todo.extend(resolver.files(f"{module}.{attribute}"))
        for named in info.module_strings:
            todo.extend(resolver.files(named))
        todo.extend(conftests(path, known_set))
    return found
