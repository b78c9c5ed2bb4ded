"""The shop's worker: the stock command running the shop's Django tasks.

An order is placed through the shop's own request handling (Django's test client)
on a fresh database, then ``python -m workqueue.entrypoints.cli worker --app
workqueue.django`` runs as a real process in the shop's folder, with the shop's
settings, and runs the order's confirmation task: it mails through Django's file
backend, and the task's result is read back through the shop's
``GET /confirmations/<id>``. Django runs in processes of its own
here (``manage.py migrate``, ``manage.py shell``): it reads its settings once per
process, and test_django_shop.py sets up the test process's Django on a database
of its own.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from email import message_from_string, policy
from email.message import EmailMessage
from pathlib import Path

import asyncpg
import pytest

pytestmark = pytest.mark.e2e

SHOP_DIR = Path(__file__).resolve().parents[2] / "examples" / "django_shop"
# The production command line, in the shop's folder.
WORKER = [sys.executable, "-m", "workqueue.entrypoints.cli", "worker", "--app", "workqueue.django"]
# Wall-clock bounds for the processes: generous, as the machine may be busy.
WITHIN = 30.0
# What Django's file backend writes after each message.
MAIL_SEPARATOR = "\n" + "-" * 79 + "\n"

PLACE_AN_ORDER = """
import json
from django.test import Client
from orders.models import Product

Product.objects.create(name="kettle", stock=2)
response = Client().post(
    "/orders",
    json.dumps({"product": "kettle", "quantity": 2, "email": "ada@example.com"}),
    content_type="application/json",
)
print(json.dumps({"status": response.status_code, "body": response.json()}))
"""

READ_THE_CONFIRMATION = """
import json
from django.test import Client

response = Client().get("/confirmations/{task_id}")
print(json.dumps(response.json()))
"""


@pytest.fixture
def shop_env(database_url: str, tmp_path: Path) -> dict[str, str]:
    """The environment of the shop's processes: its database, its settings, mail to files."""
    inherited = {k: v for k, v in os.environ.items() if not k.startswith(("WORKQUEUE_", "SHOP_"))}
    python_path = os.pathsep.join(filter(None, [str(SHOP_DIR), os.environ.get("PYTHONPATH")]))
    return {
        **inherited,
        "PYTHONPATH": python_path,
        "DJANGO_SETTINGS_MODULE": "shop_site.settings",
        "SHOP_DATABASE_URL": database_url,
        "SHOP_EMAIL_BACKEND": "django.core.mail.backends.filebased.EmailBackend",
        "SHOP_EMAIL_FILE_PATH": str(tmp_path / "mail"),
        "WORKQUEUE_DATABASE_URL": database_url,
        "WORKQUEUE_POLL_INTERVAL": "0.2",
        "WORKQUEUE_HEARTBEAT_INTERVAL": "0.2",
        "WORKQUEUE_LOG_LEVEL": "INFO",
    }


def manage(env: dict[str, str], *args: str) -> str:
    """Run ``python manage.py ARGS`` in the shop's folder; its output, once it succeeded."""
    run = subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=SHOP_DIR,
        env=env,
        capture_output=True,
        text=True,
        timeout=WITHIN,
        check=False,
    )
    assert run.returncode == 0, run.stdout + run.stderr
    return run.stdout


class ShopWorker:
    """The stock worker as a process of its own, its output in a file it cannot block on."""

    def __init__(self, env: dict[str, str], log_path: Path) -> None:
        self.log_path = log_path
        self._log = log_path.open("w")
        self.process = subprocess.Popen(
            WORKER, cwd=SHOP_DIR, env=env, stdout=self._log, stderr=subprocess.STDOUT
        )

    def output(self) -> str:
        self._log.flush()
        return self.log_path.read_text()

    async def exit_status(self) -> int:
        deadline = time.monotonic() + WITHIN
        while self.process.poll() is None:
            assert time.monotonic() < deadline, f"no exit in {WITHIN} s:\n{self.output()}"
            await asyncio.sleep(0.05)
        return self.process.returncode

    def close(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()
        self._log.close()


@pytest.fixture
def start_worker(shop_env: dict[str, str], tmp_path: Path) -> Iterator[Callable[[], ShopWorker]]:
    """Starts the shop's worker when called; kills it after the test if it still runs."""
    workers: list[ShopWorker] = []

    def start() -> ShopWorker:
        worker = ShopWorker(shop_env, tmp_path / f"worker-{len(workers)}.log")
        workers.append(worker)
        return worker

    try:
        yield start
    finally:
        for worker in workers:
            worker.close()


async def item_status(database_url: str, item_id: int) -> str | None:
    connection = await asyncpg.connect(database_url)
    try:
        status: str | None = await connection.fetchval(
            "SELECT status FROM work_items WHERE id = $1", item_id
        )
    finally:
        await connection.close()
    return status


async def kinds(database_url: str) -> list[str]:
    connection = await asyncpg.connect(database_url)
    try:
        rows = await connection.fetch("SELECT kind FROM work_items ORDER BY id")
    finally:
        await connection.close()
    return [row["kind"] for row in rows]


async def wait_until_succeeded(database_url: str, item_id: int, worker: ShopWorker) -> None:
    deadline = time.monotonic() + WITHIN
    while (status := await item_status(database_url, item_id)) != "succeeded":
        assert worker.process.poll() is None, f"the worker exited:\n{worker.output()}"
        assert time.monotonic() < deadline, (
            f"item {item_id} is {status}, not succeeded, after {WITHIN} s:\n{worker.output()}"
        )
        await asyncio.sleep(0.1)


def mails(directory: Path) -> list[EmailMessage]:
    """Every message Django's file backend wrote to ``directory`` (made at its first)."""
    found: list[EmailMessage] = []
    for path in sorted(directory.iterdir()) if directory.exists() else []:
        for text in path.read_text().split(MAIL_SEPARATOR):
            if text.strip():
                found.append(message_from_string(text, EmailMessage, policy=policy.default))
    return found


async def test_the_stock_worker_mails_the_confirmation_of_an_order_placed_in_the_shop(
    shop_env: dict[str, str], database_url: str, start_worker: Callable[[], ShopWorker]
) -> None:
    manage(shop_env, "migrate", "--verbosity", "0")
    placed = json.loads(manage(shop_env, "shell", "--verbosity", "0", "-c", PLACE_AN_ORDER))
    assert placed["status"] == 201, placed
    order_id, confirmation_id = placed["body"]["order"], int(placed["body"]["confirmation"])
    assert await item_status(database_url, confirmation_id) == "queued"
    mail_dir = Path(shop_env["SHOP_EMAIL_FILE_PATH"])

    worker = start_worker()
    await wait_until_succeeded(database_url, confirmation_id, worker)

    [sent] = mails(mail_dir)
    assert (sent["Subject"], sent["From"], sent["To"]) == (
        f"Order {order_id} is placed",
        "shop@example.com",
        "ada@example.com",
    )
    assert sent.get_content().strip() == "2 x kettle, on its way soon."
    # The shop keeps no refresh tokens: its worker schedules no token cleanup.
    assert "token_cleanup" not in await kinds(database_url)
    reading = READ_THE_CONFIRMATION.format(task_id=confirmation_id)
    read = manage(shop_env, "shell", "--verbosity", "0", "-c", reading)
    assert json.loads(read) == {
        "status": "SUCCESSFUL",
        "attempts": 1,
        "returned": {"sent_to": "ada@example.com"},
        "errors": [],
    }

    worker.process.send_signal(signal.SIGTERM)
    assert await worker.exit_status() == 0, worker.output()
