"""Registers every module of the kit for pytest's assertion rewriting, before any is imported.

pytest rewrites ``assert`` statements only in test modules and in modules named
to it in advance; without this, a failing contract test would report a bare
``AssertionError``. The package face imports this module first, so the kit's
other modules are still unimported when they are named here. Outside a pytest
run the registration does nothing.
"""

from __future__ import annotations

import pkgutil
from importlib.resources import files

import pytest

__all__: list[str] = []

_PACKAGE = __name__.rpartition(".")[0]

pytest.register_assert_rewrite(
    *(
        f"{_PACKAGE}.{module.name}"
        for module in pkgutil.iter_modules([str(files(_PACKAGE))])
        if module.name != "_assertions"
    )
)
