"""Find every WorkHandler implementation under a source tree.

Run as ``python scan_handlers.py SRC_DIR``: imports every module of the four
layers of the ``workqueue`` package found there and prints each WorkHandler subclass defined outside
``workqueue.entrypoints.worker.handlers``. Exit status 1 and a line saying BROKEN when
there is one, 0 when the rule is kept.
"""

from __future__ import annotations

import importlib
import pkgutil
import sys
import warnings
from pathlib import Path

ALLOWED_PREFIX = "workqueue.entrypoints.worker.handlers"
PACKAGES = tuple(
    f"workqueue.{layer}" for layer in ("domain", "application", "adapters", "entrypoints")
)


def all_subclasses(cls: type) -> set[type]:
    found: set[type] = set()
    pending = [cls]
    while pending:
        for sub in pending.pop().__subclasses__():
            if sub not in found:
                found.add(sub)
                pending.append(sub)
    return found


def main(src: Path) -> int:
    warnings.simplefilter("ignore")
    sys.path.insert(0, str(src))
    for name in PACKAGES:
        package = importlib.import_module(name)
        for module in pkgutil.walk_packages(package.__path__, prefix=f"{name}."):
            importlib.import_module(module.name)
    from workqueue.domain.handler import WorkHandler

    misplaced = sorted(
        f"{cls.__module__}.{cls.__qualname__}"
        for cls in all_subclasses(WorkHandler)
        if cls.__module__ != ALLOWED_PREFIX and not cls.__module__.startswith(ALLOWED_PREFIX + ".")
    )
    for where in misplaced:
        print(f"handler outside {ALLOWED_PREFIX}: {where}")
    if misplaced:
        print("Handlers live only in workqueue.entrypoints.worker.handlers BROKEN")
        return 1
    print("Handlers live only in workqueue.entrypoints.worker.handlers KEPT")
    return 0


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1])))
