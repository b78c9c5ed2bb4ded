"""The admin page in a real headless Chromium, served by a real ``workqueue web`` process.

The page must show a running item's progress change without a reload, and an
error holding ``<script>`` as text; with the admin token, its Cancel button ends a
running item ``cancelled`` and the page shows so, and a kind's "Requeue failed…" link
leads to the count and the form that requeues its failed items. Chromium and
chromedriver are Debian's (``.ci/run`` installs them); Selenium drives them with no
driver download. Under ``CI=true`` a missing browser fails the test instead of
skipping it.

With ``WORKQUEUE_WEB_SCREENSHOTS=DIR`` set, the tests also save screenshots there:
the overview (``web-overview.png``), an item's page (``web-item.png``) and the
schedules page (``web-schedules.png``), as in docs/ (``WORKQUEUE_WEB_SCREENSHOTS=docs``).
"""

from __future__ import annotations

import os
import shutil
import socket
import tempfile
import time
from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import httpx
import pytest
from e2e_support import Spawner, cli_argv, script_argv, worker_env
from e2e_worker_script import Nap

from workqueue.adapters.clock import SystemClock
from workqueue.adapters.postgres import (
    PostgresWorkMonitor,
    PostgresWorkQueue,
    PostgresWorkStore,
    close_pool,
    create_pool,
)
from workqueue.adapters.testing.contract.kinds import AlphaJob, BetaJob, ContractKind
from workqueue.domain import (
    BulkAction,
    BulkScope,
    EnqueueRequest,
    HeartbeatAnswer,
    RunOutcome,
    TokenCleanup,
    WorkStatus,
)

pytestmark = pytest.mark.e2e

CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"
LEASE = timedelta(seconds=60)
HOSTILE_ERROR = "RuntimeError: <script>window.injected = 1</script> & <b>bold</b>"
CHROMIUM_FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--window-size=1280,1000",
)


def text_of(driver: object, by: str, value: str) -> str:
    """The found element's text, found and read again while the page's live refresh
    replaces the element between the two."""
    from selenium.common.exceptions import StaleElementReferenceException

    for _ in range(100):
        try:
            text: str = driver.find_element(by, value).text  # type: ignore[attr-defined]
        except StaleElementReferenceException:
            time.sleep(0.05)
        else:
            return text
    raise AssertionError(f"{value} was replaced on every read")


def _no_browser(reason: str) -> None:
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(f"no browser for the browser test: {reason}", pytrace=False)
    pytest.skip(reason)


@pytest.fixture
def browser() -> Iterator[object]:
    """A headless Chromium with a fresh profile, driven through the system chromedriver."""
    try:
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service
    except ImportError:
        _no_browser("selenium is not installed")
    for path in (CHROMIUM, CHROMEDRIVER):
        if shutil.which(path) is None:
            _no_browser(f"{path} is missing (apt-get install chromium chromium-driver)")
    profile = tempfile.mkdtemp(prefix="workqueue-chromium-")
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in (*CHROMIUM_FLAGS, f"--user-data-dir={profile}"):
        options.add_argument(flag)
    driver = webdriver.Chrome(options=options, service=Service(executable_path=CHROMEDRIVER))
    try:
        yield driver
    finally:
        driver.quit()
        shutil.rmtree(profile, ignore_errors=True)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def wait_until_healthy(url: str, web: object, *, within: float = 30.0) -> None:
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        try:
            if httpx.get(f"{url}/healthz", timeout=2).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.1)
    raise AssertionError(f"workqueue web did not become healthy: {web.output()}")  # type: ignore[attr-defined]


async def test_the_page_follows_a_running_item_and_shows_markup_as_text(
    database_url: str, browser: object, spawn: Spawner
) -> None:
    from selenium.common.exceptions import StaleElementReferenceException
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    clock = SystemClock()
    pool = await create_pool(database_url, min_size=1, max_size=2)
    queue, store = PostgresWorkQueue(pool, clock), PostgresWorkStore(pool, clock)
    try:
        await queue.enqueue(BetaJob(label="will fail"))
        doomed = await store.claim([ContractKind.BETA], worker_id="w-old", lease_duration=LEASE)
        assert doomed is not None
        await store.finish(doomed.lease, RunOutcome.failed(HOSTILE_ERROR, {"page": 3}))
        for number in range(3):
            await queue.enqueue(AlphaJob(number=number))
        item = await store.claim([ContractKind.ALPHA], worker_id="crawler-1", lease_duration=LEASE)
        assert item is not None
        await store.heartbeat(item.lease, progress={"pages_done": 1}, lease_duration=LEASE)

        port = free_port()
        web = spawn(cli_argv("web", "--port", str(port)), worker_env(database_url))
        url = f"http://127.0.0.1:{port}"
        wait_until_healthy(url, web)

        driver = browser
        driver.get(f"{url}/")  # type: ignore[attr-defined]
        row = f"running-{item.id}"

        def row_text(driver: object) -> str:
            return text_of(driver, By.ID, row)

        WebDriverWait(driver, 15).until(lambda d: '{"pages_done":1}' in row_text(d))
        # A mark in the page's own state: a reload would lose it.
        driver.execute_script("window.notReloaded = 'still here'")  # type: ignore[attr-defined]

        await store.heartbeat(item.lease, progress={"pages_done": 2}, lease_duration=LEASE)
        WebDriverWait(driver, 15).until(lambda d: '{"pages_done":2}' in row_text(d))
        await store.heartbeat(item.lease, progress={"pages_done": 3}, lease_duration=LEASE)
        WebDriverWait(driver, 15).until(lambda d: '{"pages_done":3}' in row_text(d))

        # Progress with numeric done and total is a bar with both numbers, and it advances.
        def bar_value(driver: object) -> str:
            try:
                bar = driver.find_element(By.CSS_SELECTOR, f"#{row} progress")  # type: ignore[attr-defined]
                return str(bar.get_attribute("value"))
            except StaleElementReferenceException:
                return ""  # replaced by the live refresh meanwhile

        progress = {"done": 1234, "total": 20000}
        await store.heartbeat(item.lease, progress=progress, lease_duration=LEASE)
        WebDriverWait(driver, 15).until(lambda d: "1,234 / 20,000" in row_text(d))
        WebDriverWait(driver, 15).until(lambda d: bar_value(d) == "6")
        progress = {"done": 15000, "total": 20000, "stage": "fetch"}
        await store.heartbeat(item.lease, progress=progress, lease_duration=LEASE)
        WebDriverWait(driver, 15).until(lambda d: "15,000 / 20,000" in row_text(d))
        WebDriverWait(driver, 15).until(lambda d: bar_value(d) == "75")
        WebDriverWait(driver, 15).until(lambda d: '{"stage":"fetch"}' in row_text(d))

        assert driver.execute_script("return window.notReloaded") == "still here"  # type: ignore[attr-defined]
        failures = text_of(driver, By.ID, "failures")
        assert HOSTILE_ERROR in failures
        assert driver.execute_script("return window.injected === undefined")  # type: ignore[attr-defined]
        assert driver.find_elements(By.CSS_SELECTOR, "#failures b") == []  # type: ignore[attr-defined]
        assert "Updated" in text_of(driver, By.ID, "live-status")
        assert "Read-only." in text_of(driver, By.CSS_SELECTOR, ".banner")

        driver.get(f"{url}/items/{doomed.id}")  # type: ignore[attr-defined]
        assert text_of(driver, By.ID, "error") == HOSTILE_ERROR
        assert driver.execute_script("return window.injected === undefined")  # type: ignore[attr-defined]

        screenshots = os.environ.get("WORKQUEUE_WEB_SCREENSHOTS")
        if screenshots:
            # A queue of some size, so the picture shows how counts read.
            backlog = [EnqueueRequest(AlphaJob(number=n)) for n in range(1500)]
            await queue.enqueue_many(backlog)
            await queue.enqueue(BetaJob(label="later"), delay=timedelta(minutes=5), priority=5)
            await pool.execute(AN_HOUR_OF_ACTIVITY)
            driver.get(f"{url}/")  # type: ignore[attr-defined]
            driver.set_window_size(1280, 1800)  # type: ignore[attr-defined]
            driver.save_screenshot(os.path.join(screenshots, "web-overview.png"))  # type: ignore[attr-defined]
    finally:
        await store.close()
        await queue.close()
        await close_pool(pool)


ADMIN_TOKEN = "browser-test-admin-token"

# For the overview's screenshot: the last 45 minutes of a worker's activity
# (docs/adr/0040), as workers would have recorded it, so the charts show how they read.
AN_HOUR_OF_ACTIVITY = """
WITH minutes AS (
    SELECT date_trunc('minute', now()) - make_interval(mins => m) AS minute, m
    FROM generate_series(1, 45) AS m
),
counted AS (
    INSERT INTO work_activity (minute, kind, succeeded, failed, retried)
    SELECT minute, 'contract_alpha', 40 + (m * 7) % 25, CASE WHEN m % 9 = 0 THEN 2 ELSE 0 END,
           CASE WHEN m % 5 = 0 THEN 3 ELSE 0 END
    FROM minutes
    ON CONFLICT DO NOTHING
)
INSERT INTO work_depth (minute, kind, queued, delayed, running)
SELECT minute, kind, queued, 1, 1
FROM minutes
CROSS JOIN LATERAL (VALUES ('', 2900 - 30 * (45 - m)), ('contract_alpha', 2900 - 30 * (45 - m)))
    AS sample (kind, queued)
ON CONFLICT DO NOTHING
"""


async def test_with_the_token_the_cancel_button_ends_a_running_item_cancelled(
    database_url: str, browser: object, spawn: Spawner
) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    clock = SystemClock()
    pool = await create_pool(database_url, min_size=1, max_size=2)
    queue, store = PostgresWorkQueue(pool, clock), PostgresWorkStore(pool, clock)
    try:
        await queue.enqueue(AlphaJob(number=1))
        item = await store.claim([ContractKind.ALPHA], worker_id="crawler-1", lease_duration=LEASE)
        assert item is not None

        port = free_port()
        env = worker_env(database_url, WORKQUEUE_WEB_TOKEN=ADMIN_TOKEN)
        web = spawn(cli_argv("web", "--port", str(port)), env)
        url = f"http://127.0.0.1:{port}"
        wait_until_healthy(url, web)

        progress = {"done": 1234, "total": 20000}
        await store.heartbeat(item.lease, progress=progress, lease_duration=LEASE)
        driver = browser
        driver.get(f"{url}/items/{item.id}")  # type: ignore[attr-defined]
        assert driver.find_elements(By.CSS_SELECTOR, ".banner") == []  # type: ignore[attr-defined]
        button = driver.find_element(By.ID, "cancel-button")  # type: ignore[attr-defined]
        assert button.text == f"Cancel item #{item.id}"
        assert "1,234 / 20,000" in text_of(driver, By.ID, "progress")
        screenshots = os.environ.get("WORKQUEUE_WEB_SCREENSHOTS")
        if screenshots:
            driver.set_window_size(1280, 1100)  # type: ignore[attr-defined]
            driver.save_screenshot(os.path.join(screenshots, "web-item.png"))  # type: ignore[attr-defined]
        driver.find_element(By.ID, "cancel-token").send_keys(ADMIN_TOKEN)  # type: ignore[attr-defined]
        driver.find_element(By.ID, "cancel-reason").send_keys("wrong site")  # type: ignore[attr-defined]
        driver.find_element(By.ID, "cancel-button").click()  # type: ignore[attr-defined]

        def notice(driver: object) -> str:
            found = driver.find_elements(By.ID, "notice")  # type: ignore[attr-defined]
            return str(found[0].text) if found else ""

        WebDriverWait(driver, 15).until(lambda d: "requested" in notice(d))
        assert notice(driver).startswith(f"Cancel of item {item.id} requested")

        # The holder's next heartbeat learns of it, and the holder marks it cancelled.
        answer = await store.heartbeat(item.lease, progress=None, lease_duration=LEASE)
        assert answer is HeartbeatAnswer.CANCEL_REQUESTED
        assert await store.finish(item.lease, RunOutcome.cancelled(None))

        def status(driver: object) -> str:
            text: str = text_of(driver, By.ID, "item-status")
            return text

        WebDriverWait(driver, 15).until(lambda d: status(d) == "cancelled")
        assert text_of(driver, By.ID, "error") == "wrong site"
    finally:
        await store.close()
        await queue.close()
        await close_pool(pool)


async def test_with_the_token_a_kinds_pause_button_pauses_it_and_resume_resumes_it(
    database_url: str, browser: object, spawn: Spawner
) -> None:
    from selenium.common.exceptions import StaleElementReferenceException
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys
    from selenium.webdriver.support.ui import WebDriverWait

    pool = await create_pool(database_url, min_size=1, max_size=2)
    try:
        port = free_port()
        env = worker_env(database_url, WORKQUEUE_WEB_TOKEN=ADMIN_TOKEN)
        web = spawn(cli_argv("web", "--port", str(port)), env)
        url = f"http://127.0.0.1:{port}"
        wait_until_healthy(url, web)

        driver = browser
        driver.get(f"{url}/")  # type: ignore[attr-defined]
        token = driver.find_element(By.ID, "kind-token")  # type: ignore[attr-defined]
        token.send_keys(ADMIN_TOKEN)
        driver.find_element(By.ID, "pause-reason").send_keys("partner down")  # type: ignore[attr-defined]
        # Enter in a field presses no kind's button; a refresh keeps what was typed.
        token.send_keys(Keys.ENTER)
        WebDriverWait(driver, 15).until(lambda d: "Updated" in text_of(d, By.ID, "live-status"))
        assert driver.current_url == f"{url}/"  # type: ignore[attr-defined]
        assert token.get_attribute("value") == ADMIN_TOKEN
        assert await pool.fetchval("SELECT count(*) FROM work_kind_pauses") == 0

        def wait(driver: object) -> Any:
            # A refresh replaces the live region, and a POST the page, under a reference.
            return WebDriverWait(driver, 15, ignored_exceptions=(StaleElementReferenceException,))

        def press(verb: str) -> None:
            selector = f'button[formaction="/kinds/token_cleanup/{verb}"]'

            def click(driver: object) -> bool:
                driver.find_element(By.CSS_SELECTOR, selector).click()  # type: ignore[attr-defined]
                return True

            wait(driver).until(click)

        def notice(driver: object) -> str:
            found = driver.find_elements(By.ID, "notice")  # type: ignore[attr-defined]
            return str(found[0].text) if found else ""

        def counts(driver: object) -> str:
            text: str = text_of(driver, By.ID, "counts")
            return text

        press("pause")
        wait(driver).until(lambda d: "token_cleanup is paused since" in notice(d))
        assert notice(driver).endswith("(reason: partner down).")
        row = await pool.fetchrow("SELECT kind, reason FROM work_kind_pauses")
        assert row is not None
        assert (row["kind"], row["reason"]) == ("token_cleanup", "partner down")
        wait(driver).until(
            lambda d: (
                "partner down" in counts(d)
                and d.find_elements(By.CSS_SELECTOR, "#counts .paused time")
            )  # type: ignore[attr-defined]
        )

        driver.find_element(By.ID, "kind-token").send_keys(ADMIN_TOKEN)  # type: ignore[attr-defined]
        press("resume")
        wait(driver).until(lambda d: "Resumed token_cleanup" in notice(d))
        assert await pool.fetchval("SELECT count(*) FROM work_kind_pauses") == 0
    finally:
        await close_pool(pool)


async def test_a_bulk_requeue_works_from_the_page_with_the_token(
    database_url: str, browser: object, spawn: Spawner
) -> None:
    from selenium.common.exceptions import StaleElementReferenceException
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    clock = SystemClock()
    pool = await create_pool(database_url, min_size=1, max_size=2)
    queue, store = PostgresWorkQueue(pool, clock), PostgresWorkStore(pool, clock)
    monitor = PostgresWorkMonitor(pool)
    try:
        failed = []
        for number in range(3):
            await queue.enqueue(TokenCleanup())
            item = await store.claim(["token_cleanup"], worker_id="w-old", lease_duration=LEASE)
            assert item is not None
            await store.finish(item.lease, RunOutcome.failed(f"boom {number}", None))
            failed.append(item.id)
        port = free_port()
        env = worker_env(database_url, WORKQUEUE_WEB_TOKEN=ADMIN_TOKEN)
        web = spawn(cli_argv("web", "--port", str(port)), env)
        url = f"http://127.0.0.1:{port}"
        wait_until_healthy(url, web)

        driver = browser
        driver.get(f"{url}/")  # type: ignore[attr-defined]
        wait = WebDriverWait(driver, 15, ignored_exceptions=(StaleElementReferenceException,))
        link = 'a[href="/kinds/token_cleanup/requeue-failed"]'

        def follow(driver: object) -> bool:
            # The live refresh replaces the link now and then: find it again and click.
            found = driver.find_element(By.CSS_SELECTOR, link)  # type: ignore[attr-defined]
            assert found.text == "Requeue failed\u2026"
            found.click()
            return True

        wait.until(follow)
        wait.until(lambda d: d.current_url == f"{url}/kinds/token_cleanup/requeue-failed")
        assert text_of(driver, By.ID, "bulk-scope") == (
            f"3 failed items of token_cleanup will be queued again (ids up to {failed[-1]})."
        )
        driver.find_element(By.ID, "bulk-token").send_keys(ADMIN_TOKEN)  # type: ignore[attr-defined]
        button = driver.find_element(By.ID, "bulk-button")  # type: ignore[attr-defined]
        assert button.text == "Requeue 3 failed items"
        button.click()

        def notice(driver: object) -> str:
            found = driver.find_elements(By.ID, "notice")  # type: ignore[attr-defined]
            return str(found[0].text) if found else ""

        wait.until(lambda d: notice(d) == "Requeued 3 failed items of token_cleanup.")
        assert "Queued again as new items 3" in text_of(driver, By.ID, "bulk-result")

        queued = await monitor.queued(kind="token_cleanup", limit=10)
        requeued = [await store.get(item_id) for item_id in failed]
        assert [item.requeued_as for item in requeued if item is not None] == [
            item.id for item in queued
        ]
        assert [item.status for item in requeued if item is not None] == [WorkStatus.FAILED] * 3
        assert await monitor.bulk_scope("token_cleanup", BulkAction.REQUEUE_FAILED) == BulkScope(
            0, None
        )
    finally:
        await store.close()
        await queue.close()
        await close_pool(pool)


async def test_the_schedules_page_shows_each_periodic_kind_and_the_overview_each_cap(
    database_url: str, browser: object, spawn: Spawner
) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    clock = SystemClock()
    pool = await create_pool(database_url, min_size=1, max_size=2)
    queue, store = PostgresWorkQueue(pool, clock), PostgresWorkStore(pool, clock)
    try:
        await store.cap_kind(ContractKind.ALPHA.value, 3)
        for number in range(5):
            await queue.enqueue(AlphaJob(number=number))
        for _ in range(2):
            claimed = await store.claim([ContractKind.ALPHA], worker_id="w", lease_duration=LEASE)
            assert claimed is not None
        # A periodic kind's turn that ran: its item, and its next run a day on.
        cleanup_run = await queue.enqueue(TokenCleanup())
        cleaned = await store.claim(["token_cleanup"], worker_id="w", lease_duration=LEASE)
        assert cleaned is not None
        assert await store.finish(cleaned.lease, RunOutcome.succeeded({"deleted": 12}))
        port = free_port()
        web = spawn(cli_argv("web", "--port", str(port)), worker_env(database_url))
        url = f"http://127.0.0.1:{port}"
        wait_until_healthy(url, web)

        driver = browser
        driver.get(f"{url}/")  # type: ignore[attr-defined]
        WebDriverWait(driver, 15).until(lambda d: "2 of 3 running" in text_of(d, By.ID, "counts"))
        driver.find_element(By.LINK_TEXT, "Schedules").click()  # type: ignore[attr-defined]
        WebDriverWait(driver, 15).until(lambda d: d.current_url == f"{url}/schedules")
        cleanup = text_of(driver, By.ID, "schedule-token_cleanup")
        retention = text_of(driver, By.ID, "schedule-work_item_retention")
        assert driver.title == "Schedules · workqueue"  # type: ignore[attr-defined]
        assert f"#{cleanup_run.id} succeeded" in cleanup
        assert "work_item_retention" in retention

        screenshots = os.environ.get("WORKQUEUE_WEB_SCREENSHOTS")
        if screenshots:
            driver.set_window_size(1280, 700)  # type: ignore[attr-defined]
            driver.save_screenshot(os.path.join(screenshots, "web-schedules.png"))  # type: ignore[attr-defined]
    finally:
        await store.close()
        await queue.close()
        await close_pool(pool)


async def test_the_charts_are_drawn_and_change_as_a_worker_finishes_items(
    database_url: str, browser: object, spawn: Spawner
) -> None:
    from selenium.common.exceptions import NoSuchElementException, StaleElementReferenceException
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    clock = SystemClock()
    pool = await create_pool(database_url, min_size=1, max_size=2)
    queue = PostgresWorkQueue(pool, clock)
    try:
        port = free_port()
        web = spawn(cli_argv("web", "--port", str(port)), worker_env(database_url))
        url = f"http://127.0.0.1:{port}"
        wait_until_healthy(url, web)
        driver = browser
        driver.get(f"{url}/")  # type: ignore[attr-defined]

        def drawn(driver: object, chart: str, attribute: str) -> str:
            try:
                svg = driver.find_element(By.CSS_SELECTOR, f"#{chart} svg")  # type: ignore[attr-defined]
                return str(svg.get_attribute(attribute))
            except (StaleElementReferenceException, NoSuchElementException):
                return ""  # replaced by the live refresh meanwhile

        assert drawn(driver, "throughput-chart", "data-total") == "0"
        assert "nothing yet" in text_of(driver, By.ID, "throughput-chart")
        driver.execute_script("window.notReloaded = 'still here'")  # type: ignore[attr-defined]

        spawn(script_argv("worker"), worker_env(database_url))
        for _ in range(3):
            await queue.enqueue(Nap(seconds=0.01))
        WebDriverWait(driver, 30).until(lambda d: drawn(d, "throughput-chart", "data-total") == "3")
        # The worker sampled the depth of its first minute, the items still queued or not.
        WebDriverWait(driver, 15).until(lambda d: drawn(d, "depth-chart", "data-latest") != "")
        for _ in range(2):
            await queue.enqueue(Nap(seconds=0.01))
        WebDriverWait(driver, 30).until(lambda d: drawn(d, "throughput-chart", "data-total") == "5")
        assert "5 succeeded" in str(
            driver.find_element(By.CSS_SELECTOR, "#throughput-chart svg").get_attribute(  # type: ignore[attr-defined]
                "aria-label"
            )
        )
        assert driver.execute_script("return window.notReloaded") == "still here"  # type: ignore[attr-defined]
    finally:
        await queue.close()
        await close_pool(pool)
