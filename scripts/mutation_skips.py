"""The functions under src/ that mutmut 3 leaves unmutated because of their decorators.

mutmut (3.8) mutates a decorated function only when its one decorator is a bare
``@staticmethod`` or ``@classmethod``; any other decorator (``@property``,
``@cache``, ``@contextmanager``, ``@field_validator`` ...) makes it skip the
function, silently, and its score does not count it. This scan finds them, so the
gate can say how many there are, and tells apart the ones whose body holds
logic a mutant could change from the ones that only hand back a value or pass
their arguments on to a plain function (which mutmut does mutate).

Run by ``scripts/mutation``; ``python scripts/mutation_skips.py [SRC]`` prints
the list. docs/adr/0006-mutation-testing.md names every skipped function with
logic, and tests/architecture/test_mutation_skips.py holds the two together.
"""

from __future__ import annotations

import ast
import fnmatch
import sys
import tomllib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

__all__ = ["Skip", "main", "skipped_functions"]

ROOT = Path(__file__).resolve().parents[1]
_MUTATED_DECORATORS = {"staticmethod", "classmethod"}
_NO_MUTATE_BLOCK = "pragma: no mutate block"

Function = ast.FunctionDef | ast.AsyncFunctionDef


@dataclass(frozen=True, order=True)
class Skip:
    """One function mutmut skips: where it is, and whether its body holds logic."""

    name: str  # module.Class.function, as the ADR names it
    decorators: tuple[str, ...]
    has_logic: bool


def _decorator_name(node: ast.expr) -> str:
    if isinstance(node, ast.Call):
        node = node.func
    return ast.unparse(node)


def _is_skipped(function: Function) -> bool:
    decorators = function.decorator_list
    if not decorators:
        return False
    only = decorators[0]
    return not (
        len(decorators) == 1 and isinstance(only, ast.Name) and only.id in _MUTATED_DECORATORS
    )


def _plain(node: ast.expr) -> bool:
    """A value a mutant cannot change: a name, or an attribute of one."""
    if isinstance(node, ast.Attribute):
        return _plain(node.value)
    return isinstance(node, ast.Name)


def _has_logic(function: Function) -> bool:
    """Whether the body is more than handing back a value or passing its arguments on.

    Not logic: a docstring, ``...``, ``pass``; ``return x`` or ``return x.y``;
    ``return f(a, b.c)`` with plain arguments, where ``f`` is a plain function
    that mutmut does mutate, or ``len``/``isinstance``, which it never mutates.
    Anything else (an operator, a comparison, a second statement) is logic.
    """
    body = [
        statement
        for statement in function.body
        if not (isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Constant))
        and not isinstance(statement, ast.Pass)
    ]
    if not body:
        return False
    if len(body) != 1 or not isinstance(body[0], ast.Return) or body[0].value is None:
        return True
    value = body[0].value
    if isinstance(value, ast.Await):
        value = value.value
    if isinstance(value, ast.Call):
        arguments = [*value.args, *(keyword.value for keyword in value.keywords)]
        return not (_plain(value.func) and all(_plain(argument) for argument in arguments))
    return not _plain(value)


def _excluded(node: ast.ClassDef | Function, lines: list[str]) -> bool:
    """Whether ``# pragma: no mutate block`` stands in the header of ``node``."""
    first = min([node.lineno, *(decorator.lineno for decorator in node.decorator_list)])
    header = lines[first - 1 : node.body[0].lineno - 1]
    return any(_NO_MUTATE_BLOCK in line for line in header)


def _functions(tree: ast.Module, lines: list[str]) -> Iterator[tuple[str, Function]]:
    """Every function mutmut would look at, with its dotted place in the module."""

    def visit(node: ast.AST, prefix: str) -> Iterator[tuple[str, Function]]:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.ClassDef | Function):
                # The pragma in a def or class header covers the whole body.
                if _excluded(child, lines):
                    continue
                if isinstance(child, ast.ClassDef):
                    yield from visit(child, f"{prefix}{child.name}.")
                else:
                    yield f"{prefix}{child.name}", child
                    # mutmut skips a decorated function nested in another one too.
                    yield from visit(child, f"{prefix}{child.name}.<locals>.")
            else:
                yield from visit(child, prefix)

    yield from visit(tree, "")


def _do_not_mutate(root: Path) -> list[str]:
    config = tomllib.loads((root / "pyproject.toml").read_text())
    return list(config["tool"]["mutmut"].get("do_not_mutate", []))


def skipped_functions(root: Path = ROOT) -> list[Skip]:
    """The functions under ``root``/src that mutmut skips for their decorators, sorted."""
    src = root / "src"
    ignored = _do_not_mutate(root)
    skips = []
    for path in sorted(src.rglob("*.py")):
        relative = path.relative_to(root).as_posix()
        if any(fnmatch.fnmatch(relative, pattern) for pattern in ignored):
            continue
        module = ".".join(path.relative_to(src).with_suffix("").parts)
        source = path.read_text(encoding="utf-8")
        for name, function in _functions(ast.parse(source), source.splitlines()):
            if _is_skipped(function):
                skips.append(
                    Skip(
                        name=f"{module}.{name}",
                        decorators=tuple(_decorator_name(d) for d in function.decorator_list),
                        has_logic=_has_logic(function),
                    )
                )
    return sorted(skips)


def main(argv: list[str]) -> int:
    """Print how many functions mutmut cannot mutate, and which hold logic."""
    root = Path(argv[0]) if argv else ROOT
    skips = skipped_functions(root)
    with_logic = [skip for skip in skips if skip.has_logic]
    print(
        f"mutmut cannot mutate {len(skips)} decorated functions; "
        f"{len(with_logic)} of them hold logic (listed in docs/adr/0006-mutation-testing.md):"
    )
    for skip in with_logic:
        print(f"  {skip.name}  (@{', @'.join(skip.decorators)})")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
