"""Installed from its wheel into a fresh virtualenv, workqueue is one import name, ``workqueue``: an
application with packages of its own called ``domain`` and ``adapters`` imports both, and the stock
command serves the application's kinds with ``--app``.

The wheel is built once (without extras, without fetching a build backend) from a copy of the
checkout's files. The fresh virtualenv gets the wheel alone (``--no-deps``); the dependencies it
declares are read from this test run's own environment through a path entry, which puts no
package of ours on the path.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
import textwrap
from pathlib import Path

import pytest

pytestmark = pytest.mark.e2e

ROOT = Path(__file__).resolve().parents[2]
LAYERS = {"domain", "application", "adapters", "entrypoints"}

APPLICATION = {
    "domain/__init__.py": '''
        """The application's own domain: it has an Order, as hexagonal applications do."""
        from dataclasses import dataclass


        @dataclass
        class Order:
            id: int
    ''',
    "adapters/__init__.py": '''
        """The application's own adapters."""
        from domain import Order


        def load_order(order_id: int) -> Order:
            return Order(order_id)
    ''',
    "main.py": '''
        """The application's work: one kind, declared for `workqueue --app main`."""
        from enum import StrEnum

        from adapters import load_order
        from workqueue import WorkContext, WorkerResources, WorkHandler, WorkPayload, WorkQueueApp


        class ShopKind(StrEnum):
            SHIP_ORDER = "ship_order"


        class ShipOrder(WorkPayload):
            kind = ShopKind.SHIP_ORDER

            order_id: int


        class ShipOrderHandler(WorkHandler[ShipOrder]):
            def __init__(self, resources: WorkerResources) -> None:
                self._clock = resources.clock

            async def handle(self, payload: ShipOrder, ctx: WorkContext) -> None:
                load_order(payload.order_id)


        app = WorkQueueApp(
            kinds=[ShopKind],
            payloads=[ShipOrder],
            handlers=[ShipOrderHandler],
            token_cleanup=False,
        )
    ''',
}


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    source = tmp_path_factory.mktemp("checkout")
    shutil.copy(ROOT / "pyproject.toml", source)
    shutil.copy(ROOT / "README.md", source)
    shutil.copytree(
        ROOT / "src",
        source / "src",
        ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"),
    )
    built = tmp_path_factory.mktemp("wheel")
    subprocess.run(
        [
            *(sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps"),
            *("--no-build-isolation", "--wheel-dir", str(built), str(source)),
        ],
        check=True,
        capture_output=True,
        timeout=300,
    )
    (found,) = built.glob("workqueue_pg-*.whl")
    return found


@pytest.fixture(scope="module")
def venv(wheel: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    home = tmp_path_factory.mktemp("venv")
    subprocess.run(
        [sys.executable, "-m", "venv", "--without-pip", str(home)], check=True, timeout=120
    )
    python = home / "bin" / "python"
    subprocess.run(
        [
            *(sys.executable, "-m", "pip", "--python", str(python), "install"),
            *("--quiet", "--no-deps", "--no-compile", str(wheel)),
        ],
        check=True,
        capture_output=True,
        timeout=300,
    )
    # The declared dependencies (pydantic, asyncpg, ...) from this environment: a plain
    # path entry, so the editable install of the checkout it also holds stays inactive.
    site = site_packages(python)
    (site / "dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    return home


def site_packages(python: Path) -> Path:
    run = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        check=True,
        capture_output=True,
        text=True,
        timeout=60,
    )
    return Path(run.stdout.strip())


@pytest.fixture
def application(tmp_path: Path) -> Path:
    for relative, text in APPLICATION.items():
        path = tmp_path / "app" / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("from __future__ import annotations\n" + textwrap.dedent(text))
    return tmp_path / "app"


def run_in(venv: Path, args: list[str], cwd: Path, **env: str) -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("WORKQUEUE_", "PYTHON"))}
    return subprocess.run(
        args,
        cwd=cwd,
        env={**clean, "PATH": f"{venv / 'bin'}:/usr/bin:/bin", **env},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_the_wheel_installs_one_import_name_and_no_layer_at_the_top(venv: Path) -> None:
    site = site_packages(venv / "bin" / "python")
    top_level = {
        path.name.removesuffix(".py")
        for path in site.iterdir()
        if not path.name.endswith((".dist-info", ".pth")) and path.name != "__pycache__"
    }

    assert top_level == {"workqueue"}
    assert not LAYERS & top_level


def test_an_application_with_its_own_domain_and_adapters_imports_both_and_workqueue(
    venv: Path, application: Path
) -> None:
    code = (
        "import adapters, domain, workqueue\n"
        "from domain import Order\n"
        "from workqueue import WorkPayload\n"
        "from workqueue.domain import WorkPayload as Same\n"
        "assert WorkPayload is Same\n"
        "print(domain.__file__, adapters.__file__, workqueue.__file__, sep='\\n')\n"
    )
    run = run_in(venv, ["python", "-c", code], application)

    assert run.returncode == 0, run.stderr
    own_domain, own_adapters, ours = run.stdout.splitlines()
    assert Path(own_domain).parent == application / "domain"
    assert Path(own_adapters).parent == application / "adapters"
    assert Path(ours).is_relative_to(site_packages(venv / "bin" / "python"))


def test_the_stock_command_serves_the_applications_kinds(
    venv: Path, application: Path, database_url: str
) -> None:
    enqueued = run_in(
        venv,
        ["workqueue", "enqueue", "ship_order", "--payload", '{"order_id": 7}', "--app", "main"],
        application,
        WORKQUEUE_DATABASE_URL=database_url,
    )
    status = run_in(
        venv,
        ["workqueue", "status", "--json", "--app", "main"],
        application,
        WORKQUEUE_DATABASE_URL=database_url,
    )

    assert enqueued.returncode == 0, enqueued.stderr
    assert status.returncode == 0, status.stderr
    assert '"ship_order"' in status.stdout


def test_the_version_is_one_and_the_same_everywhere(venv: Path, tmp_path: Path) -> None:
    command = run_in(venv, ["workqueue", "--version"], tmp_path)
    package = run_in(
        venv,
        [
            "python",
            "-c",
            "import importlib.metadata, workqueue; "
            "print(workqueue.__version__, importlib.metadata.version('workqueue-pg'))",
        ],
        tmp_path,
    )

    assert command.returncode == 0, command.stderr
    version = command.stdout.strip()
    assert package.stdout.split() == [version, version]
