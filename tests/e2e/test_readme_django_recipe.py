"""The README's Django recipe, run as written: its settings, its task, its worker command.

The blocks of "Django's Tasks framework" that start with ``# mysite/...`` or
``# myapp/...`` are written as those files of a project (its database swapped
for the test's, as a reader would put theirs); the task is enqueued by the
recipe's own ``place_order`` in a Django process of the project, the worker is
started with the recipe's command line, and ``receipt_status`` reads the result.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
import time
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from e2e_support import FAST_SETTINGS, Spawner
from tests.architecture.test_readme_snippets import python_blocks, section

pytestmark = [pytest.mark.e2e, pytest.mark.postgres]

ROOT = Path(__file__).resolve().parents[2]
RECIPE = section((ROOT / "README.md").read_text(encoding="utf-8"), "## Django's Tasks framework")
_FILE = re.compile(r"^# (?P<path>(?:mysite|myapp)/\w+\.py)\n")
_SHELL = re.compile(r"```sh\n(.*?)```", re.DOTALL)
WITHIN = 30.0


def project_files() -> dict[str, str]:
    return {match["path"]: code for code in python_blocks(RECIPE) if (match := _FILE.match(code))}


def worker_command() -> tuple[dict[str, str], list[str]]:
    """The recipe's worker command line: its environment assignments, and its argv."""
    for block in _SHELL.findall(RECIPE):
        if "workqueue worker" in block:
            words = shlex.split(block.replace("\\\n", " "))
            assignments = [word for word in words if re.match(r"^[A-Z_]+=", word)]
            argv = [word for word in words if word not in assignments]
            return dict(word.split("=", 1) for word in assignments), argv
    raise AssertionError("the recipe has no worker command")


def write_project(root: Path, database_url: str) -> None:
    url = urlsplit(database_url)
    ours = (
        "\n# The test's database, where a reader has theirs.\n"
        f"DATABASES['default'].update(NAME={url.path.lstrip('/')!r}, USER={url.username!r}, "
        f"HOST={url.hostname!r}, PORT={str(url.port or 5432)!r})\n"
    )
    for path, code in project_files().items():
        target = root / path
        target.parent.mkdir(exist_ok=True)
        (target.parent / "__init__.py").touch()
        target.write_text(code + (ours if path == "mysite/settings.py" else ""))


def in_django(root: Path, env: dict[str, str], code: str) -> str:
    """Run ``code`` in a Django process of the project; what it printed."""
    run = subprocess.run(
        [sys.executable, "-c", f"import django\ndjango.setup()\n{code}"],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        timeout=WITHIN,
        check=False,
    )
    assert run.returncode == 0, run.stdout + run.stderr
    return run.stdout.strip()


def test_the_readme_recipe_enqueues_runs_and_reads_a_task(
    tmp_path: Path, database_url: str, spawn: Spawner
) -> None:
    assert set(project_files()) == {"mysite/settings.py", "myapp/tasks.py", "myapp/receipts.py"}
    write_project(tmp_path, database_url)
    assignments, argv = worker_command()
    assert argv == ["workqueue", "worker", "--app", "workqueue.django"]
    assert assignments["DJANGO_SETTINGS_MODULE"] == "mysite.settings"
    inherited = {k: v for k, v in os.environ.items() if not k.startswith("WORKQUEUE_")}
    python_path = os.pathsep.join(filter(None, [str(tmp_path), os.environ.get("PYTHONPATH")]))
    env = {
        **inherited,
        **FAST_SETTINGS,
        **assignments,
        "WORKQUEUE_DATABASE_URL": database_url,
        "PYTHONPATH": python_path,
    }

    result_id = in_django(
        tmp_path, env, "from myapp.tasks import place_order\nprint(place_order(7))"
    )
    status = f"from myapp.receipts import receipt_status\nprint(receipt_status({result_id!r}))"
    assert in_django(tmp_path, env, status) == "READY after 0 attempts, errors: []"

    worker = spawn(
        [sys.executable, "-m", "workqueue.entrypoints.console", *argv[1:]], env, tmp_path
    )
    deadline = time.monotonic() + WITHIN
    while (said := in_django(tmp_path, env, status)).startswith("READY"):
        assert worker.process.poll() is None, worker.output()
        assert time.monotonic() < deadline, f"{said}\n{worker.output()}"
        time.sleep(0.2)

    # jsonb keeps an object's keys in its own order (shorter first).
    assert said == "sent: {'attempt': 1, 'order_id': 7}"
